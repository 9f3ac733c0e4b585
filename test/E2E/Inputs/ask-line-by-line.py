"""Runs a command as an interactive client would: writes one input line,
waits for its answer line before writing the next, then closes the input.
Prints the answers; fails if an answer does not come within --wait seconds
(the command read all its input before answering) or the command fails.

usage: ask-line-by-line.py [--wait S] LINES_FILE -- COMMAND...
"""
import os
import select
import subprocess
import sys


def main():
    args = sys.argv[1:]
    wait = 60.0
    if args[0] == "--wait":
        wait = float(args[1])
        args = args[2:]
    lines_file, separator, command = args[0], args[1], args[2:]
    assert separator == "--"
    with open(lines_file, encoding="utf-8") as f:
        lines = f.read().splitlines()
    process = subprocess.Popen(command, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    pending = b""
    for number, line in enumerate(lines, 1):
        process.stdin.write(line.encode("utf-8") + b"\n")
        process.stdin.flush()
        while b"\n" not in pending:
            ready, _, _ = select.select([process.stdout], [], [], wait)
            if not ready:
                process.kill()
                sys.exit(f"no answer to line {number} within {wait} s "
                         "(the input is still open)")
            block = os.read(process.stdout.fileno(), 65536)
            if not block:
                sys.exit(f"the command ended before answering line {number}")
            pending += block
        answer, pending = pending.split(b"\n", 1)
        sys.stdout.write(answer.decode("utf-8") + "\n")
    process.stdin.close()
    rest = process.stdout.read()
    code = process.wait()
    if pending or rest:
        sys.exit("more output than input lines: " + repr(pending + rest))
    if code != 0:
        sys.exit(f"the command exited {code}")


if __name__ == "__main__":
    main()
