#!/usr/bin/env python3
"""compare_checkpoints.py A B [--rtol R]: the tensors of two safetensors
checkpoints of the same model (e.g. one train step on the GPU and on the
CPU) agree: each tensor's norm-wise relative error ||a - b|| / ||b|| is at
most R (default 1e-4). Prints the worst tensor; exits 1 when any differs
more, a name or shape differs, or a value is not finite."""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    a, _ = read_safetensors(args.a)
    b, _ = read_safetensors(args.b)
    if sorted(a) != sorted(b):
        print("tensor names differ: %s" % sorted(set(a) ^ set(b)))
        return 1
    worst, worst_name, problems = 0.0, "", []
    for name in a:
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
        if error > args.rtol:
            problems.append("%s: relative error %.3g > %.3g" % (name, error, args.rtol))
    for problem in problems:
        print(problem)
    print("%d tensors, worst relative error %.3g (%s)" % (len(a), worst, worst_name))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
