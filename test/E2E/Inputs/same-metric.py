# Usage: same-metric.py FILE_A FILE_B REGEX TOLERANCE
# Finds every match of REGEX (one group: a number) in both files and checks
# that they pair up, each two within TOLERANCE; prints them and exits 1 when
# they do not.
import re
import sys

path_a, path_b, pattern, tolerance = sys.argv[1:5]
tolerance = float(tolerance)
values = []
for path in (path_a, path_b):
    text = open(path).read()
    found = [float(m) for m in re.findall(pattern, text)]
    if not found:
        sys.exit(f"same-metric: no match of {pattern!r} in {path}:\n{text}")
    values.append(found)
if len(values[0]) != len(values[1]):
    sys.exit(f"same-metric: {len(values[0])} matches in {path_a}, "
             f"{len(values[1])} in {path_b}")
ok = all(abs(a - b) <= tolerance for a, b in zip(*values))
print(f"{pattern}: {values[0]} vs {values[1]} "
      f"(within {tolerance}: {'ok' if ok else 'FAILED'})")
sys.exit(0 if ok else 1)
