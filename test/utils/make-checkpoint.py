#!/usr/bin/env python3
"""make-checkpoint WEIGHTS.safetensors TOKENIZER.json DATA.tsv --batch N
[--step K] --out CKPT.safetensors: turns parameters into a training
checkpoint (docs/driver.md, runtime/driver/loop/Checkpoint.h) so that an
executable's `train --resume CKPT --data DATA.tsv` continues Adam from these
weights: every parameter with its `<name>.exp_avg` / `<name>.exp_avg_sq`
(taken from WEIGHTS when it has them, e.g. a reference's optimizer state,
else zero), __metadata__ format txc-checkpoint at step K (default 0), epoch
K, batch 0 of it (the position after K steps when DATA is one batch), batch
size N, DATA's path and FNV-1a 64 hash. TOKENIZER is copied beside it
(CKPT.tokenizer.json): a resumed run takes its vocabularies from there.
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return h


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("weights")
    parser.add_argument("tokenizer")
    parser.add_argument("data")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--step", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    weights, _ = read_safetensors(args.weights)
    tensors = {}
    moments = (".exp_avg", ".exp_avg_sq")
    for name, value in weights.items():
        if name.endswith(moments):
            continue
        tensors[name] = value.astype(np.float32)
        for suffix in moments:
            tensors[name + suffix] = weights.get(
                name + suffix, np.zeros_like(tensors[name])).astype(np.float32)
    with open(args.data, "rb") as f:
        digest = fnv1a64(f.read())
    metadata = {"format": "txc-checkpoint", "step": str(args.step),
                "seed": str(args.seed), "epoch": str(args.step),
                "batch_in_epoch": "0",
                "batch_size": str(args.batch), "min_freq": "1",
                "data": args.data, "data_fnv1a64": "%016x" % digest}
    write_safetensors(args.out, tensors, metadata)
    stem = args.out[:-len(".safetensors")] if args.out.endswith(
        ".safetensors") else args.out
    shutil.copyfile(args.tokenizer, stem + ".tokenizer.json")


if __name__ == "__main__":
    main()
