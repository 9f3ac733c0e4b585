"""Compares each entry's header total in --emit=planned with its rows."""
import re
import sys

headers, rows, entry = {}, {}, None
for line in open(sys.argv[1]):
    match = re.match(r"// entry (\S+): .* totalling .*\((\d+) B\)", line)
    if match:
        entry = match.group(1)
        headers[entry], rows[entry] = int(match.group(2)), 0
        continue
    match = re.match(r"//   #\d+ .*?(\d+)\s+(?:\d+|out\d+)\s+\[\d+, \d+\]$", line)
    if match and entry:
        rows[entry] += int(match.group(1))
for name, total in headers.items():
    if total == rows[name]:
        print(f"{name}: header equals the rows ({total} B)")
    else:
        print(f"{name}: header {total} B differs from the rows' {rows[name]} B")
