#!/usr/bin/env python3
"""Gradient and Adam golden data for txc: examples/translate/model.tx (the
seeds' post-norm Transformer of seed_model.py: masks from pad id 0,
embeddings * sqrt(d_model), sinusoidal positions) with its training loss,
cross_entropy(ignore_index = pad, label_smoothing), in PyTorch, float32, no
dropout, at a small config.

  /usr/bin/python3 test/golden/make_grad_golden.py --out DIR [--d_model 16 ...]

writes into DIR:

  weights.safetensors  the parameters under txc's names (F32): seed_model's
                       init, then every bias and LayerNorm gain/bias moved
                       off its 0 / 1 start (so no gradient is special)
  src.npy, tgt_in.npy, tgt_out.npy
                       the batch, int32 [B, S] / [B, T]: sentences of
                       different lengths right-padded with 0,
                       tgt_in = [SOS] + target, tgt_out = target + [EOS]
  batch.tsv            the same batch as text (words sN / tN are id N)
  tokenizer.json       the vocabularies that map those words to those ids
                       (for `train --resume`)
  loss.npy             the loss, float32 []
  grads.safetensors    d loss / d parameter, named like the parameter
  adam1.safetensors, adam2.safetensors
                       parameters, <name>.exp_avg and <name>.exp_avg_sq after
                       1 and 2 steps of torch.optim.Adam(betas=(0.9, 0.98),
                       eps=1e-9) under the spec's noam schedule (factor 1,
                       warmup), each step on this batch; __metadata__
                       has the step, its lr and the loss it took the
                       gradient of
  config.txt           the -D flags of txc for this config

The same arguments give byte-identical files (seeded, one torch thread).
check_grad_fd.py checks this reference's gradient against central
differences in float64.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import write_safetensors  # noqa: E402
from seed_model import Transformer  # noqa: E402

CONFIG_FLAGS = ("d_model", "heads", "layers", "d_ff", "src_vocab", "tgt_vocab",
                "warmup")
PAD, SOS, EOS, FIRST_WORD = 0, 2, 3, 4
SPECIALS = ["[PAD]", "[UNK]", "[SOS]", "[EOS]"]
# Words per sentence of the batch: row b has SRC_WORDS[b] source words and
# TGT_WORDS[b] target words (T = max + 1 for [SOS] / [EOS]).
SRC_WORDS = (5, 7, 2, 4)
TGT_WORDS = (3, 1, 5, 2)


def add_config_args(parser):
    for name, default in (("d_model", 16), ("heads", 4), ("layers", 2),
                          ("d_ff", 32), ("src_vocab", 16), ("tgt_vocab", 16),
                          ("warmup", 100), ("seed", 0)):
        parser.add_argument("--" + name, type=int, default=default)
    parser.add_argument("--label_smoothing", type=float, default=0.1)


def build_model(args):
    """seed_model's Transformer without dropout, with biases and LayerNorm
    parameters drawn at random (seeded) instead of 0 / 1."""
    torch.manual_seed(args.seed)
    model = Transformer(args.src_vocab, args.tgt_vocab, args.d_model,
                        args.layers, args.heads, args.d_ff, 0.0, pad=PAD)
    generator = torch.Generator().manual_seed(args.seed + 2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".norm" in name and name.endswith(".weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=generator))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=generator))
    model.eval()
    return model


def make_batch(args):
    """(src, tgt_in, tgt_out) int64 tensors and the batch as TSV lines."""
    generator = torch.Generator().manual_seed(args.seed + 1)
    batch, S, T = len(SRC_WORDS), max(SRC_WORDS), max(TGT_WORDS) + 1
    src = torch.zeros(batch, S, dtype=torch.long)
    tgt_in = torch.zeros(batch, T, dtype=torch.long)
    tgt_out = torch.zeros(batch, T, dtype=torch.long)
    lines = []
    for b, (n, m) in enumerate(zip(SRC_WORDS, TGT_WORDS)):
        s = torch.randint(FIRST_WORD, args.src_vocab, (n,), generator=generator)
        t = torch.randint(FIRST_WORD, args.tgt_vocab, (m,), generator=generator)
        src[b, :n] = s
        tgt_in[b, 0], tgt_in[b, 1:m + 1] = SOS, t
        tgt_out[b, :m], tgt_out[b, m] = t, EOS
        lines.append(" ".join("s%d" % i for i in s.tolist()) + "\t" +
                     " ".join("t%d" % i for i in t.tolist()))
    return (src, tgt_in, tgt_out), lines


def tokenizer_json(args):
    side = lambda prefix, vocab: SPECIALS + ["%s%d" % (prefix, i) for i in
                                             range(FIRST_WORD, vocab)]
    return {"format": "txc-tokenizer", "version": 1, "lowercase": True,
            "min_freq": 1, "source": side("s", args.src_vocab),
            "target": side("t", args.tgt_vocab)}


def loss_of(model, batch, label_smoothing):
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)),
                           tgt_out.reshape(-1), ignore_index=PAD,
                           label_smoothing=label_smoothing)


def noam(args, step):
    """The spec's lr = noam(d_model, warmup = warmup), factor 1."""
    return args.d_model ** -0.5 * min(step ** -0.5, step * args.warmup ** -1.5)


def adam_state(model, optimizer):
    """Parameters and moments in txc's checkpoint order and names."""
    tensors = {}
    for name, p in model.named_parameters():
        state = optimizer.state[p]
        tensors[name] = p
        tensors[name + ".exp_avg"] = state["exp_avg"]
        tensors[name + ".exp_avg_sq"] = state["exp_avg_sq"]
    return tensors


def main():
    start = time.time()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/golden-grad")
    parser.add_argument("--adam_steps", type=int, default=2)
    add_config_args(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = build_model(args)
    batch, lines = make_batch(args)
    os.makedirs(args.out, exist_ok=True)
    out = lambda name: os.path.join(args.out, name)
    flags = " ".join("-D %s=%s" % (k, getattr(args, k)) for k in CONFIG_FLAGS)
    flags += " -D dropout=0 -D label_smoothing=%g" % args.label_smoothing
    meta = {"format": "pt", "generator": "test/golden/make_grad_golden.py",
            "seed": str(args.seed), "flags": flags}

    write_safetensors(out("weights.safetensors"), model.state_dict(), meta)
    for name, tensor in zip(("src", "tgt_in", "tgt_out"), batch):
        np.save(out(name + ".npy"), tensor.numpy().astype(np.int32))
    with open(out("batch.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(out("tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(args), f, indent=1)
        f.write("\n")
    with open(out("config.txt"), "w") as f:
        f.write(flags + "\n")

    # The gradient; then Adam steps on the same batch (the first step's
    # gradient is this one).
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98),
                                 eps=1e-9, foreach=False)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda epoch: noam(args, epoch + 1))
    losses = []
    for step in range(1, args.adam_steps + 1):
        optimizer.zero_grad()
        loss = loss_of(model, batch, args.label_smoothing)
        loss.backward()
        losses.append(loss.item())
        if step == 1:
            np.save(out("loss.npy"), np.float32(loss.item()))
            write_safetensors(out("grads.safetensors"),
                              {n: p.grad for n, p in model.named_parameters()},
                              meta)
        lr = optimizer.param_groups[0]["lr"]
        assert math.isclose(lr, noam(args, step))
        optimizer.step()
        schedule.step()
        write_safetensors(out("adam%d.safetensors" % step),
                          adam_state(model, optimizer),
                          dict(meta, step=str(step), lr=repr(lr),
                               loss=repr(losses[-1])))

    params = sum(p.numel() for p in model.parameters())
    print("wrote %s: %d parameters, batch src %s tgt %s, loss %.6f, Adam "
          "losses %s (%.1f s)" % (args.out, params, list(batch[0].shape),
                                  list(batch[1].shape), losses[0],
                                  ["%.6f" % x for x in losses],
                                  time.time() - start))


if __name__ == "__main__":
    main()
