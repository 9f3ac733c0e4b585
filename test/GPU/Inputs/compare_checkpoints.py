#!/usr/bin/env python3
"""compare_checkpoints.py A B [--rtol R]: the tensors of two safetensors
checkpoints of the same model (e.g. one train step on the GPU and on the
CPU) agree: each tensor's norm-wise relative error ||a - b|| / ||b|| is at
most R (default 1e-4). Prints the worst tensor; exits 1 when any differs
more, a name or shape differs, or a value is not finite.

--skip REGEX leaves out the tensors whose name matches (re.search), and says
how many: for tensors whose values are rounding noise on both devices, e.g.
attention's key-projection bias, whose gradient is zero in exact arithmetic
(adding a constant to every key's score of a query leaves its softmax
unchanged), so that Adam's moments, the updates they scale to unit size,
and the bias itself differ arbitrarily between two correct programs.
--rtol-moments R2 bounds Adam's moments (.exp_avg, .exp_avg_sq) with R2
instead of R."""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--rtol-moments", type=float)
    parser.add_argument("--skip", help="leave out tensors matching this regex")
    args = parser.parse_args()
    a, _ = read_safetensors(args.a)
    b, _ = read_safetensors(args.b)
    if sorted(a) != sorted(b):
        print("tensor names differ: %s" % sorted(set(a) ^ set(b)))
        return 1
    worst, worst_name, problems, skipped = 0.0, "", [], 0
    for name in a:
        if args.skip and re.search(args.skip, name):
            skipped += 1
            continue
        moment = name.endswith(".exp_avg") or name.endswith(".exp_avg_sq")
        rtol = args.rtol_moments if moment and args.rtol_moments else args.rtol
        x, y = a[name].astype(np.float64), b[name].astype(np.float64)
        if x.shape != y.shape:
            problems.append("%s: shape %s vs %s" % (name, x.shape, y.shape))
            continue
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            problems.append("%s: not finite" % name)
            continue
        error = np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30)
        if error > worst:
            worst, worst_name = error, name
        if error > rtol:
            problems.append("%s: relative error %.3g > %.3g" % (name, error, rtol))
    for problem in problems:
        print(problem)
    if skipped:
        print("skipped %d tensors matching %r" % (skipped, args.skip))
    print("%d tensors, worst relative error %.3g (%s)" % (len(a) - skipped, worst, worst_name))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
