#!/usr/bin/env python3
"""compare-adam ACTUAL.safetensors REFERENCE.safetensors --start W.safetensors
[--zero REGEX]: compares a training checkpoint after Adam steps (parameters,
<name>.exp_avg, <name>.exp_avg_sq; docs/driver.md) with a reference of the
same names (torch.optim.Adam's state, test/golden/make_grad_golden.py), all
by max |actual - reference| / max |reference| per tensor:

  params      the parameters                          (--rtol-params 1e-5)
  update      the step taken, param - start (W)       (--rtol-update 1e-3)
  exp_avg     Adam's first moment                     (--rtol-moments 1e-3)
  exp_avg_sq  Adam's second moment                    (--rtol-moments 1e-3)

The parameters are fp32, so each side's update is rounded to the spacing
of its parameter (1.2e-7 for |p| in [1, 2), ~1e-3 of a step of 1e-4):
`update` counts what exceeds one such spacing of the reference parameter.
It prints per quantity the worst tensor (with --loss-csv, also the loss
the checkpoint's step logged, CKPT.loss.csv, against the reference's
__metadata__ "loss", --rtol-loss 1e-5), per group with --groups. The
update is tiny next to the parameters (lr ~ 1e-4), so `update` is the
measure that sees a wrong learning rate or bias correction.

Adam's first steps move every coordinate by about +-lr whatever the size
of its gradient (step 1: lr * g / (|g| + eps)), so where the gradient is
within rounding noise of 0 the direction is noise too, on either side:

--zero REGEX names tensors whose exact gradient is 0 (attention's key bias):
their moments must be ~0 (|exp_avg| <= --zero-atol, |exp_avg_sq| <=
zero-atol^2) and their step at most --max-step.
--small T (default 1e-3): in the other tensors, coordinates whose reference
|exp_avg| is not 0 but below T times the tensor's largest are left out of
`params` and `update` and must move at most --max-step instead. A step is
m_hat / sqrt(v_hat) scaled, as accurate as the coordinate's own gradient
relative to itself: gradients that agree within ~1e-6 of a tensor's
largest give steps within ~1e-3 down to coordinates 1e-3 of it. Both kinds
are counted on their own line.

--spread OTHER names a second reference computed with other rounding (the
same steps in float32, where REFERENCE is float64): each quantity's bound
is then max(its rtol, --spread-factor (default 2) times OTHER's worst
error against REFERENCE by the same measure). Adam's first steps magnify
rounding (a step is m / sqrt(v), near +-lr where the gradient is small),
so float32 arithmetic itself is ~1e-3 from float64 in `update` after a
few steps (PyTorch's own float32 run: 1.12e-3 in lm-awkward-torch.test).

--max-step is the most Adam can move a coordinate (beyond the rounding of
the fp32 parameter), the sum of the steps' learning rates (times 1.001 from step 2 on, the bound of
|m_hat| / sqrt(v_hat) at betas (0.9, 0.98)); no bound when left out.
"""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors  # noqa: E402

QUANTITIES = ("params", "update", "exp_avg", "exp_avg_sq")


def rel_error(actual, reference):
    scale = float(np.abs(reference).max()) or 1.0
    return float(np.abs(actual.astype(np.float64) -
                        reference.astype(np.float64)).max()) / scale


def step_beyond_ulp(update, param):
    """|update| less one fp32 spacing of the parameter (its rounding)."""
    return np.maximum(np.abs(update.astype(np.float64)) -
                      np.spacing(np.abs(param).astype(np.float32)), 0.0)


def quantity_errors(got, want):
    """Per quantity, the error of `got` against `want` (dicts by quantity;
    the update beyond one fp32 spacing of the reference parameter)."""
    errors = {}
    for q in QUANTITIES:
        if q == "update":
            ulp = np.spacing(np.abs(want["params"]).astype(np.float32))
            excess = np.maximum(np.abs(got[q].astype(np.float64) -
                                       want[q].astype(np.float64)) - ulp, 0.0)
            errors[q] = float(excess.max()) / (
                float(np.abs(want[q]).max()) or 1.0)
        else:
            errors[q] = rel_error(got[q], want[q])
    return errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("actual")
    parser.add_argument("reference")
    parser.add_argument("--start", required=True)
    parser.add_argument("--rtol-params", type=float, default=1e-5)
    parser.add_argument("--rtol-update", type=float, default=1e-3)
    parser.add_argument("--rtol-moments", type=float, default=1e-3)
    parser.add_argument("--zero", default=None, metavar="REGEX")
    parser.add_argument("--zero-atol", type=float, default=1e-6)
    parser.add_argument("--small", type=float, default=1e-3)
    parser.add_argument("--max-step", type=float, default=None,
                        help="bound on |param - start| where the gradient is ~0")
    parser.add_argument("--groups", action="store_true")
    parser.add_argument("--spread", default=None, metavar="OTHER")
    parser.add_argument("--spread-factor", type=float, default=2.0)
    parser.add_argument("--loss-csv", default=None)
    parser.add_argument("--rtol-loss", type=float, default=1e-5)
    args = parser.parse_args()
    actual, meta = read_safetensors(args.actual)
    reference, ref_meta = read_safetensors(args.reference)
    start, _ = read_safetensors(args.start)
    rtol = {"params": args.rtol_params, "update": args.rtol_update,
            "exp_avg": args.rtol_moments, "exp_avg_sq": args.rtol_moments}

    problems = [n + ": missing from " + args.actual
                for n in reference if n not in actual]
    errors = {q: {} for q in QUANTITIES}
    spread = {q: 0.0 for q in QUANTITIES}
    other = read_safetensors(args.spread)[0] if args.spread else None
    zero_step, zero_m, zero_v, zeros = 0.0, 0.0, 0.0, []
    small_step, small_count, total = 0.0, 0, 0
    for name, w0 in start.items():
        if any(n not in actual for n in
               (name, name + ".exp_avg", name + ".exp_avg_sq")):
            continue
        got = {"params": actual[name], "update": actual[name] - w0,
               "exp_avg": actual[name + ".exp_avg"],
               "exp_avg_sq": actual[name + ".exp_avg_sq"]}
        if args.zero and re.search(args.zero, name):
            zeros.append(name)
            zero_step = max(zero_step, float(step_beyond_ulp(
                got["update"], actual[name]).max()))
            zero_m = max(zero_m, float(np.abs(got["exp_avg"]).max()))
            zero_v = max(zero_v, float(np.abs(got["exp_avg_sq"]).max()))
            continue
        want = {"params": reference[name], "update": reference[name] - w0,
                "exp_avg": reference[name + ".exp_avg"],
                "exp_avg_sq": reference[name + ".exp_avg_sq"]}
        m_ref = np.abs(want["exp_avg"])
        # Exact zeros (rows of tokens not in the batch) stay compared.
        small = (m_ref < args.small * float(m_ref.max())) & (m_ref != 0)
        total += small.size
        if small.any():
            small_count += int(small.sum())
            small_step = max(small_step, float(step_beyond_ulp(
                got["update"], actual[name])[small].max()))
        for q in QUANTITIES:
            if not np.all(np.isfinite(got[q])):
                problems.append("%s %s: non-finite values" % (name, q))
                got[q] = want[q]
            if q in ("params", "update"):
                # The scale stays the whole tensor's.
                got[q] = np.where(small, want[q], got[q])
        for q, err in quantity_errors(got, want).items():
            errors[q][name] = err
        if other is not None:
            theirs = {"params": other[name], "update": other[name] - w0,
                      "exp_avg": other[name + ".exp_avg"],
                      "exp_avg_sq": other[name + ".exp_avg_sq"]}
            for q in ("params", "update"):
                theirs[q] = np.where(small, want[q], theirs[q])
            for q, err in quantity_errors(theirs, want).items():
                spread[q] = max(spread[q], err)

    bound = {q: max(rtol[q], args.spread_factor * spread[q])
             for q in QUANTITIES}
    for q in QUANTITIES:
        for name, err in errors[q].items():
            if err > bound[q]:
                problems.append("%s %s: max rel error %.2e exceeds %g" %
                                (name, q, err, bound[q]))

    step = meta.get("step", "?")
    for q in QUANTITIES:
        if args.groups:
            groups = {}
            for name, err in errors[q].items():
                group = re.sub(r"\.\d+\.", ".*.", name)
                groups[group] = max(groups.get(group, 0.0), err)
            for group, err in sorted(groups.items(), key=lambda g: -g[1]):
                print("  %s %s: max rel error %.2e" % (q, group, err))
        worst = max(errors[q], key=errors[q].get)
        note = (" (the reference's own spread %.2e, bound %.2e)" %
                (spread[q], bound[q]) if other is not None else "")
        print("step %s %s: %d tensors, worst rel error %.2e (%s)%s" %
              (step, q, len(errors[q]), errors[q][worst], worst, note))
    if zeros:
        ok = (zero_m <= args.zero_atol and zero_v <= args.zero_atol ** 2 and
              (args.max_step is None or zero_step <= args.max_step))
        print("step %s zero-gradient tensors /%s/ (%d): max |exp_avg| %.1e, "
              "max |exp_avg_sq| %.1e, max |step| %.2e: %s" %
              (step, args.zero, len(zeros), zero_m, zero_v, zero_step,
               "ok" if ok else "not ~0"))
        if not ok:
            problems.append("zero-gradient tensors: moments or step too large")
    ok = args.max_step is None or small_step <= args.max_step
    print("step %s small-gradient coordinates (0 < |exp_avg| < %g of the "
          "tensor's largest): %d of %d, max |step| %.2e: %s" %
          (step, args.small, small_count, total, small_step,
           "ok" if ok else "exceeds %g" % args.max_step))
    if not ok:
        problems.append("small-gradient coordinates: step too large")
    if args.loss_csv:
        rows = [line.strip().split(",") for line in open(args.loss_csv)]
        logged = [float(r[1]) for r in rows[1:] if r[0] == step]
        want = float(ref_meta["loss"])
        err = abs(logged[-1] - want) / abs(want) if logged else float("inf")
        print("step %s loss: %s, reference %.8g, rel error %.1e" %
              (step, logged[-1] if logged else "not logged", want, err))
        if err > args.rtol_loss:
            problems.append("loss: rel error %.2e exceeds %g" %
                            (err, args.rtol_loss))
    for line in problems:
        print(line)
    print("step %s: %s" % (step, "ok" if not problems else
                           "%d problems" % len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
