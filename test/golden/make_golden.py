#!/usr/bin/env python3
"""Golden data for txc: the seeds' post-norm Transformer (seed_model.py) in
PyTorch, at a small config, in eval mode (no dropout), float32.

  /usr/bin/python3 test/golden/make_golden.py --out build/golden [--d_model 64 ...]

writes into the output directory:

  weights.safetensors  the state_dict under its own names (= txc's parameter
                       names), F32, written by the small writer below (the
                       `safetensors` package is not needed)
  src.npy, tgt.npy     int32 ids [B, S] / [B, T]: ids in 1..vocab-1, each row
                       right-padded with pad id 0 to a different length
  memory.npy           encoder output, float32 [B, S, d_model]
  logits.npy           decoder + final_linear, float32 [B, T, tgt_vocab]
  config.txt           the -D flags txc needs to compile
                       examples/transformer/base.tx at this config

The same arguments give the same files (seeded init and ids, one thread).
Masks are seed_model.py's: padding on the source; padding & causal on the
target.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "utils")]
from safetensors_np import write_safetensors as write_arrays  # noqa: E402
from seed_model import Transformer  # noqa: E402  (path set just above)

CONFIG_FLAGS = ("d_model", "heads", "layers", "d_ff", "src_vocab", "tgt_vocab")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/golden",
                        help="output directory (created; default build/golden)")
    for name, default in (("d_model", 64), ("heads", 4), ("layers", 2),
                          ("d_ff", 128), ("src_vocab", 50), ("tgt_vocab", 60),
                          ("seed", 0), ("batch", 3), ("src_len", 7),
                          ("tgt_len", 6)):
        parser.add_argument("--" + name, type=int, default=default)
    args = parser.parse_args()
    if args.d_model % args.heads:
        parser.error("d_model must be a multiple of heads")
    if min(args.batch, args.src_len, args.tgt_len) < 1:
        parser.error("batch, src_len and tgt_len must be at least 1")
    if min(args.src_vocab, args.tgt_vocab) < 2:
        parser.error("vocabularies need at least 2 ids (0 is the pad)")
    return args


def padded_ids(generator, batch, length, vocab, pad=0):
    """Ids in [1, vocab) with row b right-padded to length - 2b (>= 1)."""
    ids = torch.randint(1, vocab, (batch, length), generator=generator)
    lengths = [max(1, length - 2 * b) for b in range(batch)]
    for b, n in enumerate(lengths):
        ids[b, n:] = pad
    return ids.to(torch.int32), lengths


def write_safetensors(path, tensors, metadata):
    """Writes {name: torch tensor} as float32 safetensors (through path.tmp,
    fsync and rename; test/utils/safetensors_np.py has the format)."""
    write_arrays(path, {name: tensor.detach().cpu().contiguous().numpy().astype("<f4")
                        for name, tensor in tensors.items()}, metadata)


def main():
    start = time.time()
    args = parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    model = Transformer(args.src_vocab, args.tgt_vocab, args.d_model,
                        args.layers, args.heads, args.d_ff, 0.1, pad=0)
    model.eval()

    generator = torch.Generator().manual_seed(args.seed + 1)
    src, src_lengths = padded_ids(generator, args.batch, args.src_len,
                                  args.src_vocab)
    tgt, tgt_lengths = padded_ids(generator, args.batch, args.tgt_len,
                                  args.tgt_vocab)
    with torch.no_grad():
        src_long, tgt_long = src.long(), tgt.long()
        src_mask, tgt_mask = model.masks(src_long, tgt_long)
        memory = model.encoder(src_long, src_mask)
        logits = model.final_linear(
            model.decoder(tgt_long, memory, src_mask, tgt_mask))
        assert torch.equal(logits, model(src_long, tgt_long))

    os.makedirs(args.out, exist_ok=True)
    flags = " ".join("-D %s=%d" % (name, getattr(args, name))
                     for name in CONFIG_FLAGS)
    write_safetensors(os.path.join(args.out, "weights.safetensors"),
                      model.state_dict(),
                      {"format": "pt", "generator": "test/golden/make_golden.py",
                       "seed": str(args.seed), "flags": flags})
    np.save(os.path.join(args.out, "src.npy"), src.numpy())
    np.save(os.path.join(args.out, "tgt.npy"), tgt.numpy())
    np.save(os.path.join(args.out, "memory.npy"),
            memory.numpy().astype(np.float32))
    np.save(os.path.join(args.out, "logits.npy"),
            logits.numpy().astype(np.float32))
    with open(os.path.join(args.out, "config.txt"), "w") as f:
        f.write(flags + "\n")

    params = sum(t.numel() for t in model.state_dict().values())
    print("wrote %s: %d parameters, src %s lengths %s, tgt %s lengths %s, "
          "logits %s (%.1f s)" % (args.out, params, list(src.shape),
                                  src_lengths, list(tgt.shape), tgt_lengths,
                                  list(logits.shape), time.time() - start))


if __name__ == "__main__":
    main()
