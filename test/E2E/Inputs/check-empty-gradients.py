# Usage: check-empty-gradients.py METADATA.json PARAMS.bin
# After a train_grad call on an empty batch (empty_batch_harness.c), every
# gradient in the parameter arena must be 0: a sum over no rows. Prints the
# number of gradients and the names of those that are not all zeros.
import json
import struct
import sys

meta = json.load(open(sys.argv[1]))
arena = open(sys.argv[2], "rb").read()
bad = []
count = 0
for p in meta["params"]:
    if "grad_offset" not in p:
        continue
    count += 1
    n = 1
    for s in p["shape"]:
        n *= s
    values = struct.unpack_from("<%df" % n, arena, p["grad_offset"])
    if any(v != 0.0 for v in values):
        bad.append("%s (%d of %d not 0, e.g. %g)" % (
            p["name"], sum(v != 0.0 for v in values), n,
            next(v for v in values if v != 0.0)))
print("%d gradients, %d not zero%s" % (count, len(bad),
                                        ": " + ", ".join(bad) if bad else ""))
