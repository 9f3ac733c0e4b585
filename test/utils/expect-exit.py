#!/usr/bin/env python3
"""expect-exit CODE CMD ARGS...: runs CMD, passes its output through, and
exits 0 only when CMD exited with exactly CODE (a signal never matches).
lit tests use it to check that bad input gives exit code 1, not a crash."""
import subprocess
import sys

if len(sys.argv) < 3:
    sys.stderr.write("usage: expect-exit CODE CMD [ARGS...]\n")
    sys.exit(2)
want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:])
if proc.returncode != want:
    sys.stderr.write("expect-exit: %s exited with %d, expected %d\n"
                     % (sys.argv[2], proc.returncode, want))
    sys.exit(1)
sys.exit(0)
