#!/usr/bin/env python3
"""Prints a spec that unrolls to a lot (unroll-limits.test), small as text:

  chain N        defs f0 .. fN, each calling the next (N deep)
  nest N D       defs f0 .. fN, each nesting relu( D deep around the next call
  fanout N       defs f0 .. fN, each calling the next twice (2^N calls)
"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
out = ["dim B <= 4"]
if kind == "chain":
    for i in range(n):
        out.append("def f%d(x) { return f%d(x) }" % (i, i + 1))
elif kind == "nest":
    depth = int(sys.argv[3])
    for i in range(n):
        out.append("def f%d(x) { return %sf%d(x)%s }"
                   % (i, "relu(" * depth, i + 1, ")" * depth))
elif kind == "fanout":
    for i in range(n):
        out.append("def f%d(x) {" % i)
        out.append("  a = f%d(x)" % (i + 1))
        out.append("  b = f%d(x)" % (i + 1))
        out.append("  return a")
        out.append("}")
else:
    sys.exit("unknown kind " + kind)
out.append("def f%d(x) { return relu(x) }" % n)
out.append("entry e(x: [B, 8]) -> z {")
out.append("  z = f0(x)")
out.append("}")
print("\n".join(out))
