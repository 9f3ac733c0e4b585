# Usage: signal-twice.py FIRST TEXT1 SECONDS1 SECOND TEXT2 SECONDS2 ERR_FILE
#        CMD ARGS...
# As signal-after.py, twice: signal FIRST SECONDS1 after ERR_FILE holds
# TEXT1, then SECOND SECONDS2 after it holds TEXT2 (a scheduler's grace
# period ending, a user pressing Ctrl-C again) (signal_steps.py).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from signal_steps import run

first, text1, seconds1, second, text2, seconds2, err_path = sys.argv[1:8]
sys.exit(run([(first, text1, seconds1), (second, text2, seconds2)], err_path,
             sys.argv[8:]))
