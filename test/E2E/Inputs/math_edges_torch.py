#!/usr/bin/env python3
"""math_edges_torch.py: PyTorch's side of math-edges.tx.

  math_edges_torch.py inputs DIR          writes DIR/x.npy (0, -0, ±1, ±inf,
                                          NaN, 3e38, ...), DIR/id.npy and
                                          DIR/weights.safetensors (every w_<f>
                                          all ones)
  math_edges_torch.py check DIR OUT G     compares the compiled fwd's outputs
                                          OUT/<name>.npy and train_grad's
                                          gradients G.safetensors with PyTorch

An element agrees when both are NaN, both the same infinity (or zero sign
aside, both zero), or both finite within 1e-5 relative (plus 1e-30). Prints
one line per output and gradient and `N outputs, M gradients: ok`; exits 1
on a difference.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

X = [0.0, -0.0, 1.0, -1.0, 1e-30, 0.5, -0.5, 20.0, -20.0, 100.0, -100.0,
     3e38, -3e38, float("inf"), float("-inf"), float("nan")]


def zero():
    return torch.tensor(0.0)


# name in the spec: (output of fwd, weight of train), f
FUNCTIONS = [
    ("e", "exp", torch.exp),
    ("l", "log", torch.log),
    ("s", "sqrt", torch.sqrt),
    ("r", "rsqrt", torch.rsqrt),
    ("ab", "abs", torch.abs),
    ("th", "tanh", torch.tanh),
    ("sg", "sigmoid", torch.sigmoid),
    ("si", "silu", F.silu),
    ("gt", "gelu_tanh", lambda v: F.gelu(v, approximate="tanh")),
    ("p2", "pow2", lambda v: v ** 2),
    ("p3", "pow3", lambda v: v ** 3),
    ("ph", "pow_half", lambda v: v ** 0.5),
    ("pq", "pow_rsqrt", lambda v: v ** -0.5),
    ("pm", "pow_inv", lambda v: v ** -1),
    ("pn", "pow_inv2", lambda v: v ** -2),
    ("pf", "pow_frac", lambda v: v ** 1.5),
    ("mx", "max", lambda v: torch.maximum(v, zero())),
    ("mn", "min", lambda v: torch.minimum(zero(), v)),
    ("cl", "clamp", lambda v: torch.clamp(v, -1, 1)),
    ("wh", "where", lambda v: torch.where(v > 0, v, 0.0)),
    ("rm", "reduce_max", lambda v: torch.amax(v, -1, keepdim=True)),
]


def agree(actual, expected):
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    if a.shape != e.shape:
        return False, "shape %s, expected %s" % (list(a.shape), list(e.shape))
    nan = np.isnan(e)
    inf = np.isinf(e)
    fin = ~nan & ~inf
    bad = (np.isnan(a) != nan) | (inf & (a != e))
    with np.errstate(invalid="ignore", over="ignore"):
        bad |= fin & ~(np.abs(a - e) <= 1e-5 * np.abs(e) + 1e-30)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return False, "at x = %r: %r, expected %r" % (
            X[i % len(X)], a.flat[i], e.flat[i])
    return True, "%d values agree" % e.size


def main():
    if sys.argv[1] == "inputs":
        out = sys.argv[2]
        os.makedirs(out, exist_ok=True)
        np.save(os.path.join(out, "x.npy"), np.array(X, np.float32))
        np.save(os.path.join(out, "id.npy"), np.zeros(1, np.int32))
        write_safetensors(os.path.join(out, "weights.safetensors"),
                          {"w_%s.weight" % w: np.ones((1, len(X)), np.float32)
                           for _, w, _ in FUNCTIONS})
        return
    _, _, inputs, outputs, grads_path = sys.argv
    x = torch.tensor(np.load(os.path.join(inputs, "x.npy")))
    grads, _ = read_safetensors(grads_path)
    problems = 0
    for name, weight, f in FUNCTIONS:
        ok, why = agree(np.load(os.path.join(outputs, name + ".npy")),
                        f(x).numpy())
        print("%s(x): %s" % (weight, why))
        problems += not ok
    for name, weight, f in FUNCTIONS:
        w = torch.ones(1, len(X), requires_grad=True)
        f(x * w).sum().backward()
        ok, why = agree(grads["w_%s.weight" % weight], w.grad.numpy())
        print("gradient of %s: %s" % (weight, why))
        problems += not ok
    print("%d outputs, %d gradients: %s" % (
        len(FUNCTIONS), len(FUNCTIONS),
        "ok" if not problems else "%d differ" % problems))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
