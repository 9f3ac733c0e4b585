#!/usr/bin/env python3
"""math_ops_torch.py --out DIR [--seed S] [--inputs-only]: the PyTorch
model of math-ops.tx (every tensor math builtin) on seeded weights and
inputs.

Writes DIR/weights.safetensors (the spec's parameter names; `net.tie` has
`net.l1`'s weights, so min / max of the two and reduce_max over x's equal
rows 0 and 1 meet exact ties), DIR/x.npy, DIR/sel.npy, and what the
compiled `fwd` and `train_grad` must give: DIR/y.npy, DIR/loss.npy and
DIR/grads.safetensors (the loss's gradient for every parameter), and
prints how many maxima of the reduce_max over rows tie. --inputs-only
writes the weights and inputs alone, with numpy (no torch needed).
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
from safetensors_np import write_safetensors  # noqa: E402

D = 8


def block(params, x, sel):
    import torch
    import torch.nn.functional as F

    def linear(name, v):
        return F.linear(v, params["net.%s.weight" % name],
                        params["net.%s.bias" % name])

    a, b, t = linear("l1", x), linear("l2", x), linear("tie", x)
    p = a.abs() + 0.5
    u = torch.exp(a * 0.5) + torch.log(p) + torch.sqrt(p) + torch.rsqrt(p) \
        + b.abs() - a
    v = torch.tanh(a) + torch.sigmoid(b) + F.silu(a) \
        + F.gelu(b, approximate="tanh") + F.gelu(a)
    v = v + torch.cos(a * 3) + torch.sin(b * 3) * math.cos(0.5)
    w = a ** 2 + b.pow(3) + p ** -0.5 + p.pow(0.5) + p ** -1 + p ** -2
    w = w + p ** 1.7 + b.pow(1) + b ** 0 + 0.1 * torch.sqrt(p) ** 3
    c = torch.clamp(a, -0.3, 0.3)
    m = torch.maximum(c, torch.tensor(0.3)) + torch.minimum(c, b) \
        + torch.maximum(a, b) + torch.minimum(b, torch.tensor(-0.3)) \
        + torch.clamp(b, min=0.0)
    m = m + torch.clamp(b, max=0.1) + torch.maximum(a, t) \
        + torch.minimum(t, a) \
        + torch.maximum(torch.tensor(1.0), b.mean(1, keepdim=True))
    k = torch.where(a > b, a, b * 2) + torch.where(b > 0, 1.5, b) \
        + torch.where(a < 0, a, 0.0)
    z = torch.where(sel > 0, a, t) + (sel > 0).float() * 0.25
    r = torch.amax(z, 1, keepdim=True) + torch.amax(a, -1, keepdim=True)
    r = r + b.mean(1, keepdim=True) + torch.amax(b, 0)
    return linear("out", u + v + w + m + k + r)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--inputs-only", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    weights = {}
    for name in ("l1", "l2", "tie", "out"):
        weights["net.%s.weight" % name] = rng.normal(
            0, 1 / math.sqrt(D), (D, D)).astype(np.float32)
        weights["net.%s.bias" % name] = rng.normal(0, 0.1, D).astype(np.float32)
    weights["net.tie.weight"] = weights["net.l1.weight"].copy()
    weights["net.tie.bias"] = weights["net.l1.bias"].copy()
    # B = 2, T = 5 (under the bounds 3 and 6); rows 0 and 1 equal and
    # large, so column maxima often tie between them.
    x = rng.normal(0, 1, (2, 5, D)).astype(np.float32)
    x[:, 1] = x[:, 0] = 2 * x[:, 0]
    sel = np.zeros((2, 5, 1), np.float32)
    sel[:, 0] = 1  # row 0 through a, row 1 (equal) through t

    write_safetensors(os.path.join(args.out, "weights.safetensors"), weights)
    np.save(os.path.join(args.out, "x.npy"), x)
    np.save(os.path.join(args.out, "sel.npy"), sel)
    if args.inputs_only:
        return

    import torch
    import torch.nn.functional as F

    params = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    y = block(params, torch.tensor(x), torch.tensor(sel))
    np.save(os.path.join(args.out, "y.npy"), y.detach().numpy())
    loss = (y * y).sum(-1).mean(-1).mean(-1)
    loss.backward()
    np.save(os.path.join(args.out, "loss.npy"), loss.detach().numpy())
    write_safetensors(os.path.join(args.out, "grads.safetensors"),
                      {k: v.grad.numpy() for k, v in params.items()})
    # How many maxima of reduce_max(z, 1) are shared by rows 0 and 1.
    with torch.no_grad():
        a = F.linear(torch.tensor(x), params["net.l1.weight"],
                     params["net.l1.bias"])
        z = a  # t equals a, so z equals a whatever sel picks
        ties = int(((z == z.amax(1, keepdim=True)).sum(1) > 1).sum())
    print("reduce_max over T: %d of %d maxima tie" % (ties, z[:, 0].numel()))

if __name__ == "__main__":
    main()
