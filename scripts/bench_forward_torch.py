#!/usr/bin/env python3
"""PyTorch eager reference for scripts/bench-forward.sh: the seeds' post-norm
Transformer (test/golden/seed_model.py) at base.tx's config, eval mode, one
forward (encode + decode, as txc's `encode` and `decode` entries) on a batch
of random ids; prints `torch_forward_ms MEDIAN MIN` over --repeat runs after
warm-up."""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "golden"))
from seed_model import Transformer  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--src_len", type=int, default=64)
    p.add_argument("--tgt_len", type=int, default=64)
    p.add_argument("--d_model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--d_ff", type=int, default=2048)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Transformer(args.vocab, args.vocab, args.d_model, args.layers, args.heads,
                        args.d_ff, 0.1).eval()
    src = torch.randint(1, args.vocab, (args.batch, args.src_len))
    tgt = torch.randint(1, args.vocab, (args.batch, args.tgt_len))
    times = []
    with torch.no_grad():
        for i in range(args.repeat + 2):
            start = time.perf_counter()
            model(src, tgt)
            if i >= 2:
                times.append((time.perf_counter() - start) * 1000)
    print("torch_forward_ms %.2f %.2f" % (statistics.median(times), min(times)))


if __name__ == "__main__":
    main()
