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


def default_dispositions():
    # A launcher that ignores a signal (nohup ignores SIGHUP, a shell's
    # `trap '' INT`) passes that on, and the driver keeps an ignored signal
    # ignored, as programs do: the signal this test sends then did nothing
    # and the run went on until it was killed. The test is about the
    # driver's own handling: it starts from the default dispositions.
    for name in ("SIGHUP", "SIGINT", "SIGTERM", "SIGUSR1"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)


def run(steps, err_path, cmd):
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stderr=err,
                                preexec_fn=default_dispositions)
        deadline = time.time() + 600
        for name, text, seconds in steps:
            while proc.poll() is None and time.time() < deadline:
                if text in open(err_path, errors="replace").read():
                    break
                time.sleep(0.05)
            if proc.poll() is None:
                time.sleep(float(seconds))
                proc.send_signal(getattr(signal, "SIG" + name))
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            # Not ended by its signals: fail, rather than hold the suite.
            proc.kill()
            proc.wait()
            err.write("signal_steps.py: the process did not end within "
                      "600 s of its start; killed\n")
            return 124
    return 128 - code if code < 0 else code
