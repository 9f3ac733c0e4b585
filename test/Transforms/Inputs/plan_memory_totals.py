"""Compares each entry's header totals in --emit=planned with its rows:
the arena's (rows at an offset) and the outputs' (rows at outN)."""
import re
import sys

headers, rows, entry = {}, {}, None
for line in open(sys.argv[1]):
    match = re.match(r"// entry (\S+): .*? totalling .*?\((\d+) B\)", line)
    if match:
        entry = match.group(1)
        outputs = re.search(r"; tensors totalling .*?\((\d+) B\) are computed in the outputs' buffers", line)
        headers[entry] = (int(match.group(2)), int(outputs.group(1)) if outputs else 0)
        rows[entry] = [0, 0]
        continue
    match = re.match(r"//   #\d+ .*?(\d+)\s+(\d+|out\d+)\s+\[\d+, \d+\]$", line)
    if match and entry:
        rows[entry][match.group(2).startswith("out")] += int(match.group(1))
for name, (arena, outputs) in headers.items():
    if (arena, outputs) == tuple(rows[name]):
        print(f"{name}: header equals the rows ({arena} B, outputs {outputs} B)")
    else:
        print(f"{name}: header {arena} B + outputs {outputs} B differs from the rows' {rows[name][0]} B + {rows[name][1]} B")
