# Usage: signal-twice.py FIRST TEXT1 SECONDS1 SECOND TEXT2 SECONDS2 ERR_FILE
#        CMD ARGS...
# As signal-after.py, twice: runs CMD with its stderr in ERR_FILE, sends
# signal FIRST (TERM, INT, HUP, USR1, KILL) SECONDS1 after ERR_FILE holds
# TEXT1, then SECOND SECONDS2 after it holds TEXT2 (a scheduler's grace
# period ending, a user pressing Ctrl-C again), and exits with CMD's exit
# status (a signal death is 128 + the signal, as a shell reports it).
import signal
import subprocess
import sys
import time

first, text1, seconds1, second, text2, seconds2, err_path = sys.argv[1:8]
with open(err_path, "w") as err:
    proc = subprocess.Popen(sys.argv[8:], stderr=err)
    deadline = time.time() + 600
    for name, text, seconds in ((first, text1, seconds1),
                                (second, text2, seconds2)):
        while proc.poll() is None and time.time() < deadline:
            if text in open(err_path, errors="replace").read():
                break
            time.sleep(0.05)
        if proc.poll() is None:
            time.sleep(float(seconds))
            proc.send_signal(getattr(signal, "SIG" + name))
    code = proc.wait()
sys.exit(128 - code if code < 0 else code)
