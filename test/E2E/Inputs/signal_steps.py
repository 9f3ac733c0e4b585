# Shared by signal-after.py and signal-twice.py: runs CMD with its stderr
# in ERR_PATH and, for each (SIGNAL, TEXT, SECONDS) in turn, waits until
# ERR_PATH holds TEXT (the process is past that point) and then SECONDS
# more, and sends SIGNAL (TERM, INT, HUP, USR1, KILL); returns CMD's exit
# status as a shell reports it (a signal death is 128 + the signal). A
# timer alone could signal a process still starting on a busy machine,
# before its handler exists.
import signal
import subprocess
import time


def run(steps, err_path, cmd):
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stderr=err)
        deadline = time.time() + 600
        for name, text, seconds in steps:
            while proc.poll() is None and time.time() < deadline:
                if text in open(err_path, errors="replace").read():
                    break
                time.sleep(0.05)
            if proc.poll() is None:
                time.sleep(float(seconds))
                proc.send_signal(getattr(signal, "SIG" + name))
        code = proc.wait()
    return 128 - code if code < 0 else code
