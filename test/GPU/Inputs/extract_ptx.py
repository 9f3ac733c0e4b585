#!/usr/bin/env python3
"""extract_ptx.py IN.mlir OUT_PREFIX: writes the PTX of every gpu.object in
IN.mlir (gpu-module-to-binary format=isa) to OUT_PREFIX.N.ptx, N = 0, 1, ...
MLIR prints the assembly as a string attribute with \\XX hex escapes and a
terminating NUL, which ptxas would read as an unexpected end of file."""
import re
import sys

text = open(sys.argv[1]).read()
objects = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', text)
if not objects:
    sys.exit("extract_ptx.py: no gpu.object with an assembly in " + sys.argv[1])
for n, escaped in enumerate(objects):
    ptx = re.sub(r'\\([0-9A-Fa-f]{2})', lambda m: chr(int(m.group(1), 16)),
                 escaped).replace('\\\\', '\\').replace('\\"', '"').rstrip('\0')
    with open("%s.%d.ptx" % (sys.argv[2], n), "w") as out:
        out.write(ptx)
