#!/usr/bin/env python3
"""fd-check-exe EXE --load W.safetensors --grads G.safetensors --tensor NAME
[--tensor NAME ...] [--h H] [--rtol R] [--entry train_grad] -- INPUT...

Checks a compiled model's gradient against central differences of its own
loss: for each NAME, at the coordinate i of the largest |G[NAME]| (G is the
executable's `--save-grads` output for W), runs

  EXE run ENTRY --load W(+-h e_i) --threads 1 INPUT...

twice and compares fd = (loss(+h) - loss(-h)) / 2h with G[NAME][i]. The
losses are fp32, so h is large (default 1e-2) and the tolerance loose
(default 2e-2 relative to |G[NAME][i]|). Prints one line per coordinate
and a summary; exits 1 when one exceeds R.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("exe")
    parser.add_argument("--load", required=True)
    parser.add_argument("--grads", required=True)
    parser.add_argument("--tensor", action="append", required=True)
    parser.add_argument("--entry", default="train_grad")
    parser.add_argument("--h", type=float, default=1e-2)
    parser.add_argument("--rtol", type=float, default=2e-2)
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()
    weights, metadata = read_safetensors(args.load)
    grads, _ = read_safetensors(args.grads)

    def loss_with(tmp, name, index, value):
        perturbed = dict(weights)
        perturbed[name] = weights[name].copy()
        perturbed[name].flat[index] = value
        path = os.path.join(tmp, "w.safetensors")
        write_safetensors(path, perturbed, metadata)
        out = os.path.join(tmp, "out")
        subprocess.run([args.exe, "run", args.entry, "--load", path,
                        "--threads", "1", "--out-dir", out] + args.inputs,
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return float(np.load(os.path.join(out, "loss.npy")))

    worst, failed = 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.tensor:
            g = grads[name]
            index = int(np.abs(g).argmax())
            w = float(weights[name].flat[index])
            # The perturbed value as fp32 holds it: difference by that.
            up, down = np.float32(w + args.h), np.float32(w - args.h)
            fd = (loss_with(tmp, name, index, up) -
                  loss_with(tmp, name, index, down)) / (float(up) - float(down))
            analytic = float(g.flat[index])
            err = abs(fd - analytic) / abs(analytic)
            worst = max(worst, err)
            failed += err > args.rtol
            coord = np.unravel_index(index, g.shape)
            print("%s[%s]: gradient %.6e, fd %.6e, rel error %.1e%s" %
                  (name, ",".join(map(str, coord)), analytic, fd, err,
                   "" if err <= args.rtol else " exceeds %g" % args.rtol))
    print("%d coordinates, h %g: worst rel error %.1e: %s" %
          (len(args.tensor), args.h, worst,
           "ok" if not failed else "%d exceed %g" % (failed, args.rtol)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
