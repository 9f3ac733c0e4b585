#!/usr/bin/env python3
"""Prints an entry with N tensors of 2^40 f32 elements (2^42 bytes) live at
once (plan-memory-invalid.mlir). The first one shares the returned output's
buffer, so N = 65 fills an activation arena of exactly 2^48 bytes and N = 66
needs more, although each tensor is within the size limits."""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 66
t = "tensor<1048576x1048576xf32>"
print('func.func @many(%%x: %s) -> %s attributes {tx.entry = "many"} {' % (t, t))
for i in range(n):
    print("  %%r%d = tx.relu %%x : (%s) -> %s" % (i, t, t))
print("  %%s1 = tx.add %%r0, %%r1 : (%s, %s) -> %s" % (t, t, t))
for i in range(2, n):
    print("  %%s%d = tx.add %%s%d, %%r%d : (%s, %s) -> %s" % (i, i - 1, i, t, t, t))
print("  return %%s%d : %s" % (n - 1, t))
print("}")
