#!/usr/bin/env python3
"""compare-regenerated COMMITTED_DIR REGENERATED_DIR [--rtol R] [--exact F ...]
                      [--zero REGEX --zero-atol A]:
checks that a regenerated golden directory holds what the committed one does.

Every file of COMMITTED_DIR (subfolders are left out) must exist in REGENERATED_DIR and the reverse.
Files named with --exact (the seeded inputs: weights, token ids, batches) and
every file that is not .npy / .safetensors must be byte-identical. Other
.npy / .safetensors files hold values PyTorch computed, whose last bits
depend on the CPU's kernels (AVX-512 vs AVX2 BLAS paths round differently):
they must have the same tensor names, shapes and dtypes, integer tensors
equal, and float tensors within max |new - old| / max |old| <= R (default
1e-5, ten times tighter than the tolerances the E2E tests compare txc with).
Tensors named by --zero REGEX have an exact gradient of 0 (attention's key
bias: softmax is shift-invariant), so their gradients and Adam moments are
rounding noise and an Adam step moves them by +-lr in a noise direction:
they are compared by max |new - old| <= A instead.

Prints one line per file (`NAME: identical`, `NAME: within R (worst E, TENSOR)`
or what differs) and exits 1 if any file fails."""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors  # noqa: E402


def load_tensors(path):
    if path.endswith(".npy"):
        return {"": np.load(path)}
    return read_safetensors(path)[0]


def compare_tensors(name, old, new, rtol, zero, zero_atol):
    """Returns (error message or None, worst relative error, its tensor)."""
    if list(old) != list(new):
        return "tensor names differ: %s vs %s" % (sorted(old), sorted(new)), 0, ""
    worst, where = 0.0, ""
    for key, a in old.items():
        b = new[key]
        label = key or name
        if a.shape != b.shape or a.dtype != b.dtype:
            return "%s: %s %s vs %s %s" % (label, a.dtype, list(a.shape), b.dtype,
                                          list(b.shape)), 0, ""
        if not np.issubdtype(a.dtype, np.floating):
            if not np.array_equal(a, b):
                return "%s: integer values differ" % label, 0, ""
            continue
        if not np.all(np.isfinite(b)):
            return "%s: non-finite values" % label, 0, ""
        if zero and re.search(zero, label):
            diff = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
            if diff > zero_atol:
                return "%s: max abs error %.2e exceeds %g (--zero)" % (label, diff, zero_atol), 0, ""
            continue
        scale = float(np.abs(a).max()) if a.size else 0.0
        diff = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
        err = diff / scale if scale else diff
        if err > worst:
            worst, where = err, label
    if worst > rtol:
        return "%s: max rel error %.2e exceeds %g" % (where, worst, rtol), worst, where
    return None, worst, where


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("committed")
    parser.add_argument("regenerated")
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--exact", nargs="*", default=[])
    parser.add_argument("--zero", default=None, metavar="REGEX")
    parser.add_argument("--zero-atol", type=float, default=1e-6)
    args = parser.parse_args()
    def files(folder):  # subfolders belong to other generators
        return sorted(f for f in os.listdir(folder)
                      if os.path.isfile(os.path.join(folder, f)))
    old_files, new_files = files(args.committed), files(args.regenerated)
    failed = False
    for extra in sorted(set(new_files) - set(old_files)):
        print("%s: not in %s" % (extra, args.committed))
        failed = True
    for name in old_files:
        old_path = os.path.join(args.committed, name)
        new_path = os.path.join(args.regenerated, name)
        if not os.path.isfile(new_path):
            print("%s: not regenerated" % name)
            failed = True
            continue
        with open(old_path, "rb") as f:
            old_bytes = f.read()
        with open(new_path, "rb") as f:
            new_bytes = f.read()
        if old_bytes == new_bytes:
            print("%s: identical" % name)
            continue
        numeric = name.endswith(".npy") or name.endswith(".safetensors")
        if name in args.exact or not numeric:
            print("%s: differs (must be byte-identical)" % name)
            failed = True
            continue
        error, worst, where = compare_tensors(name, load_tensors(old_path),
                                              load_tensors(new_path), args.rtol,
                                              args.zero, args.zero_atol)
        if error:
            print("%s: %s" % (name, error))
            failed = True
        else:
            print("%s: within %g (worst %.2e, %s)" % (name, args.rtol, worst, where))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
