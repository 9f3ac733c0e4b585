# Usage: check-metric.py FILE REGEX OP BOUND
# Finds the first match of REGEX (one group: a number) in FILE and checks
# `value OP bound` (OP: lt, ge); prints the value and exits 1 when it fails.
import re
import sys

path, pattern, op, bound = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
text = open(path).read()
match = re.search(pattern, text)
if not match:
    sys.exit(f"check-metric: no match of {pattern!r} in {path}:\n{text}")
value = float(match.group(1))
ok = value < bound if op == "lt" else value >= bound
print(f"{pattern}: {value} ({op} {bound}: {'ok' if ok else 'FAILED'})")
sys.exit(0 if ok else 1)
