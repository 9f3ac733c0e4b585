#!/usr/bin/env python3
"""compare-npy ACTUAL.npy REFERENCE.npy [--rtol R]: compares two arrays of the
same shape by max |actual - reference| / max |reference| and prints
`NAME: shape S, max rel error E: ok` (exit 0) or `... exceeds R` (exit 1)."""
import argparse
import os
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("actual")
    parser.add_argument("reference")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    a, b = np.load(args.actual), np.load(args.reference)
    name = os.path.splitext(os.path.basename(args.reference))[0]
    if a.shape != b.shape:
        print("%s: shape %s, expected %s" % (name, list(a.shape), list(b.shape)))
        sys.exit(1)
    if not np.all(np.isfinite(a)):
        print("%s: non-finite values" % name)
        sys.exit(1)
    scale = float(np.abs(b).max()) or 1.0
    err = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) / scale
    ok = err <= args.rtol
    print("%s: shape %s, max rel error %.2e: %s" % (name, list(a.shape), err,
                                                    "ok" if ok else "exceeds %g" % args.rtol))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
