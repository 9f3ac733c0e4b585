# Usage: signal-after.py SIGNAL TEXT SECONDS ERR_FILE CMD ARGS...
# Runs CMD with its stderr in ERR_FILE, waits until ERR_FILE holds TEXT
# (the process is past its start-up) and then SECONDS more, sends SIGNAL
# (TERM or INT) once, and exits with CMD's exit status (signal_steps.py).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from signal_steps import run

name, text, seconds, err_path = sys.argv[1:5]
sys.exit(run([(name, text, seconds)], err_path, sys.argv[5:]))
