#!/usr/bin/env python3
"""compare-npy ACTUAL.npy REFERENCE.npy [--rtol R]: compares two arrays of the
same shape by max |actual - reference| / max |reference| and prints
`NAME: shape S, max rel error E: ok` (exit 0) or `... exceeds R` (exit 1).

--spread OTHER.npy: a second reference computed with other rounding (see
compare-grads.py); the bound is then max(R, --spread-factor (default 2)
times OTHER's error against REFERENCE)."""
import argparse
import os
import sys

import numpy as np


def rel_error(actual, reference):
    scale = float(np.abs(reference).max()) or 1.0
    diff = np.abs(actual.astype(np.float64) - reference.astype(np.float64))
    return float(diff.max()) / scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("actual")
    parser.add_argument("reference")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--spread", default=None, metavar="OTHER")
    parser.add_argument("--spread-factor", type=float, default=2.0)
    args = parser.parse_args()
    a, b = np.load(args.actual), np.load(args.reference)
    name = os.path.splitext(os.path.basename(args.reference))[0]
    bound, note = args.rtol, ""
    if args.spread:
        other = np.load(args.spread)
        if other.shape != b.shape:
            print("%s: shape %s, expected %s" % (args.spread, list(other.shape),
                                                 list(b.shape)))
            sys.exit(1)
        spread = rel_error(other, b)
        bound = max(args.rtol, args.spread_factor * spread)
        note = " (the reference's own spread %.2e, bound %.2e)" % (spread, bound)
    if a.shape != b.shape:
        print("%s: shape %s, expected %s" % (name, list(a.shape), list(b.shape)))
        sys.exit(1)
    if not np.all(np.isfinite(a)):
        print("%s: non-finite values" % name)
        sys.exit(1)
    err = rel_error(a, b)
    ok = err <= bound
    print("%s: shape %s, max rel error %.2e%s: %s" %
          (name, list(a.shape), err, note, "ok" if ok else "exceeds %.2e" % bound))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
