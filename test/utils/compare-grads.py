#!/usr/bin/env python3
"""compare-grads ACTUAL.safetensors REFERENCE.safetensors [--rtol R]: compares
every tensor of two safetensors files (same names, same shapes) by
max |actual - reference| / max |reference| (DESIGN.md §7's measure), and
prints the worst error per tensor group (the name with layer indices
replaced by *, e.g. `decoder.layers.*.cross_attn.W_k.weight`), worst first:

  group decoder.layers.*.norm1.bias (2 tensors): max rel error 3.1e-06
  ...
  88 tensors (173600 values) in 42 groups: worst 4.2e-06 (final_linear.bias): ok

Exit 0 when every tensor is within R (default 1e-3), else 1 with one
`exceeds` line per tensor over R. --quiet leaves out the group lines.

--zero REGEX names tensors whose exact gradient is 0 (the key bias of
attention: softmax ignores a constant added to every score of a query row),
so both files hold rounding noise and a relative error means nothing: those
must have max |actual| <= --zero-atol (default 1e-6) times the largest
|reference| of all tensors, and are reported on their own line.

--spread OTHER names a second reference computed the same way with other
rounding (the CPU executable under ONEDNN_MAX_CPU_ISA=SSE41: other GEMM
kernels, other summation orders). The gradients of a deep network with
ReLU are not continuous in rounding: a pre-activation within an ulp of 0
takes the other branch, and one such kink moves a layer's weight gradient
by ~1e-3 of its largest value (base.tx at B=8, T=64: two CPU instruction
sets differ by 2e-2, docs/cuda.md). The bound is then max(R, --spread-factor
(default 2) times the worst error of OTHER against REFERENCE over all
tensors): ACTUAL must agree with REFERENCE as closely as the reference
agrees with itself.
"""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors  # noqa: E402


def rel_error(actual, reference):
    scale = float(np.abs(reference).max()) if reference.size else 0.0
    diff = np.abs(actual.astype(np.float64) - reference.astype(np.float64))
    return float(diff.max()) / (scale or 1.0) if diff.size else 0.0


def group_of(name):
    return re.sub(r"\.\d+\.", ".*.", name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("actual")
    parser.add_argument("reference")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--zero", default=None, metavar="REGEX")
    parser.add_argument("--zero-atol", type=float, default=1e-6)
    parser.add_argument("--spread", default=None, metavar="OTHER")
    parser.add_argument("--spread-factor", type=float, default=2.0)
    args = parser.parse_args()
    actual, _ = read_safetensors(args.actual)
    reference, _ = read_safetensors(args.reference)
    problems = []
    zeros = [n for n in reference if args.zero and re.search(args.zero, n)]
    bound = args.rtol
    if args.spread:
        other, _ = read_safetensors(args.spread)
        spreads = {n: rel_error(other[n], ref) for n, ref in reference.items()
                   if n not in zeros and n in other and other[n].shape == ref.shape}
        if len(spreads) != len(reference) - len(zeros):
            print("%s: not the reference's tensors" % args.spread)
            sys.exit(1)
        widest = max(spreads, key=spreads.get) if spreads else None
        bound = max(args.rtol, args.spread_factor * spreads.get(widest, 0.0))
        print("the reference's own spread (%s): worst %.2e (%s); bound "
              "max(%g, %g x spread) = %.2e" %
              (os.path.basename(args.spread), spreads.get(widest, 0.0), widest,
               args.rtol, args.spread_factor, bound))
    for name in reference:
        if name not in actual:
            problems.append("%s: missing from %s" % (name, args.actual))
    for name in actual:
        if name not in reference:
            problems.append("%s: not in the reference" % name)
    largest = max(float(np.abs(t).max()) for t in reference.values() if t.size)
    errors, groups = {}, {}
    for name, ref in reference.items():
        if name in zeros:
            continue
        if name not in actual:
            continue
        if actual[name].shape != ref.shape:
            problems.append("%s: shape %s, expected %s" %
                            (name, list(actual[name].shape), list(ref.shape)))
            continue
        if not np.all(np.isfinite(actual[name])):
            problems.append("%s: non-finite values" % name)
            continue
        errors[name] = rel_error(actual[name], ref)
        groups.setdefault(group_of(name), []).append(name)
        if errors[name] > bound:
            problems.append("%s: max rel error %.2e exceeds %.2e" %
                            (name, errors[name], bound))
    worst = lambda names: max(names, key=lambda n: errors[n])
    if not args.quiet:
        for group, names in sorted(groups.items(),
                                   key=lambda g: -errors[worst(g[1])]):
            print("group %s (%d tensor%s): max rel error %.2e" %
                  (group, len(names), "s" * (len(names) > 1),
                   errors[worst(names)]))
    if zeros:
        present = [n for n in zeros if n in actual]
        noise = max(float(np.abs(actual[n]).max()) for n in present)
        ok = noise <= args.zero_atol * largest and len(present) == len(zeros)
        print("zero-gradient tensors /%s/ (%d): max |actual| %.2e = %.1e of "
              "the largest gradient: %s" %
              (args.zero, len(zeros), noise, noise / largest,
               "ok" if ok else "exceeds %g" % args.zero_atol))
        if not ok:
            problems.append("zero-gradient tensors are not ~0")
    for line in problems:
        print(line)
    values = sum(reference[n].size for n in errors)
    top = worst(errors) if errors else None
    print("%d tensors (%d values) in %d groups: worst %.2e (%s): %s" %
          (len(errors), values, len(groups), errors.get(top, 0.0), top,
           "exceeds %.2e" % bound if problems else "ok"))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
