#!/usr/bin/env python3
"""Validates the gradient reference of make_grad_golden.py: the same model,
weights and batch in float64, autograd against central differences
(L(w + h e_i) - L(w - h e_i)) / 2h, h = 1e-6, at two coordinates of every
parameter tensor (the largest |gradient| and one drawn at random).

  /usr/bin/python3 test/golden/check_grad_fd.py [--d_model 16 ...]

Prints one line per tensor group with the worst error |fd - autograd| /
max |autograd of the tensor| (the measure of compare-grads.py), the tensors
whose exact gradient is 0 (attention's key bias) with their largest
|autograd| and |fd|, and exits 1 when an error exceeds --rtol (1e-6).
"""
import argparse
import os
import re
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_grad_golden import (add_config_args, build_model, loss_of,  # noqa
                              make_batch)

ZERO_GRADIENT = r"W_k\.bias$"


def main():
    start = time.time()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_config_args(parser)
    parser.add_argument("--h", type=float, default=1e-6)
    parser.add_argument("--rtol", type=float, default=1e-6)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = build_model(args).double()
    batch, _ = make_batch(args)
    loss = lambda: loss_of(model, batch, args.label_smoothing)
    model.zero_grad()
    loss().backward()
    params = dict(model.named_parameters())
    grads = {n: p.grad.detach().clone() for n, p in params.items()}

    pick = torch.Generator().manual_seed(args.seed + 3)
    errors, zero_fd, problems, checked = {}, 0.0, [], 0
    with torch.no_grad():
        for name, p in params.items():
            flat, g = p.view(-1), grads[name].view(-1)
            coords = {int(g.abs().argmax()),
                      int(torch.randint(0, flat.numel(), (1,), generator=pick))}
            scale = float(g.abs().max())
            for i in sorted(coords):
                checked += 1
                saved = float(flat[i])
                flat[i] = saved + args.h
                up = float(loss())
                flat[i] = saved - args.h
                down = float(loss())
                flat[i] = saved
                fd = (up - down) / (2 * args.h)
                if re.search(ZERO_GRADIENT, name):
                    zero_fd = max(zero_fd, abs(fd))
                    continue
                err = abs(fd - float(g[i])) / scale
                errors[name] = max(errors.get(name, 0.0), err)
                if err > args.rtol:
                    problems.append("%s[%d]: autograd %.9e, fd %.9e, rel "
                                    "error %.2e" % (name, i, g[i], fd, err))
    groups = {}
    for name, err in errors.items():
        group = re.sub(r"\.\d+\.", ".*.", name)
        groups[group] = max(groups.get(group, 0.0), err)
    for group, err in sorted(groups.items(), key=lambda g: -g[1]):
        print("group %s: max rel error %.2e" % (group, err))
    zero_grad = max(float(grads[n].abs().max()) for n in grads
                    if re.search(ZERO_GRADIENT, n))
    largest = max(float(g.abs().max()) for g in grads.values())
    print("zero-gradient tensors /%s/: max |autograd| %.1e, max |fd| %.1e "
          "(largest gradient %.3f)" % (ZERO_GRADIENT, zero_grad, zero_fd,
                                       largest))
    if zero_grad > 1e-12 * largest or zero_fd > 1e-8 * largest:
        problems.append("the key-bias gradient is not 0")
    for line in problems:
        print(line)
    worst = max(errors, key=errors.get)
    print("float64 reference, loss %.9f: %d coordinates in %d tensors, worst "
          "rel error %.2e (%s): %s (%.1f s)" %
          (float(loss()), checked, len(params), errors[worst], worst,
           "exceeds %g" % args.rtol if problems else "ok",
           time.time() - start))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
