# Usage: signal-after.py SIGNAL TEXT SECONDS ERR_FILE CMD ARGS...
# Runs CMD with its stderr in ERR_FILE, waits until ERR_FILE holds TEXT
# (the process is past its start-up) and then SECONDS more, sends SIGNAL
# (TERM or INT) once, and exits with CMD's exit status (a signal death is
# 128 + the signal, as a shell reports it). A timer alone could signal a
# process still starting on a busy machine, before its handler exists.
import signal
import subprocess
import sys
import time

name, text, seconds, err_path = sys.argv[1:5]
with open(err_path, "w") as err:
    proc = subprocess.Popen(sys.argv[5:], stderr=err)
    deadline = time.time() + 600
    while proc.poll() is None and time.time() < deadline:
        if text in open(err_path, errors="replace").read():
            break
        time.sleep(0.05)
    if proc.poll() is None:
        time.sleep(float(seconds))
        proc.send_signal(getattr(signal, "SIG" + name))
    code = proc.wait()
sys.exit(128 - code if code < 0 else code)
