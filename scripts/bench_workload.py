#!/usr/bin/env python3
"""The real-workload benchmark's corpus and its PyTorch side
(scripts/bench-workload.sh).

  corpus  writes --out F.tsv: --pairs source<TAB>target lines of words
          `s<id>` / `t<id>`, ids Zipf-distributed (exponent --zipf) over a
          --vocab-word vocabulary per side, lengths uniform in
          [--min-len, --max-len] (the target 0.8-1.25x its source's);
          seeded, the same arguments give the same file.
  train   trains the seeds' post-norm Transformer (test/golden/seed_model.py)
          at the translate spec's structure on F.tsv the way txc's `train`
          does: word vocabularies of every word (4 specials first, pad 0,
          SOS 2, EOS 3), per epoch the examples shuffled, windows of 16
          batches sorted by (source, target) length, cut into batches of
          --batch, the batches shuffled; src, tgt_in = [SOS] + target,
          tgt_out = target + [EOS]; model.train() (dropout), cross-entropy
          (ignore_index 0, --label_smoothing), Adam(0.9, 0.98, 1e-9) with the
          noam schedule (d_model^-0.5 min(s^-0.5, s warmup^-1.5)). Writes
          --log F.csv: step,loss,tokens,seconds (tokens = non-pad tgt_out).
          The batches follow the same procedure as txc's but from Python's
          random generator, so they are not the executable's batches one for
          one: the same corpus, batch size and length sorting.
"""
import argparse
import os
import random
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "golden"))
from seed_model import Transformer  # noqa: E402


def corpus(args):
    rng = np.random.default_rng(args.seed)
    ranks = np.arange(1, args.vocab_words + 1, dtype=np.float64)
    weights = ranks ** -args.zipf
    weights /= weights.sum()
    with open(args.out, "w") as f:
        for _ in range(args.pairs):
            n = int(rng.integers(args.min_len, args.max_len + 1))
            m = int(np.clip(round(n * rng.uniform(0.8, 1.25)), args.min_len, args.max_len))
            src = rng.choice(args.vocab_words, size=n, p=weights)
            tgt = rng.choice(args.vocab_words, size=m, p=weights)
            f.write(" ".join("s%d" % i for i in src) + "\t" +
                    " ".join("t%d" % i for i in tgt) + "\n")


def batches(pairs, batch, seed):
    """Yields (src, tgt) lists of id lists, epoch after epoch."""
    rng = random.Random(seed)
    while True:
        order = list(range(len(pairs)))
        rng.shuffle(order)
        epoch = []
        window = 16 * batch
        for start in range(0, len(order), window):
            chunk = sorted(order[start:start + window],
                           key=lambda i: (len(pairs[i][0]), len(pairs[i][1])))
            epoch += [chunk[j:j + batch] for j in range(0, len(chunk), batch)]
        rng.shuffle(epoch)
        for rows in epoch:
            yield [pairs[i] for i in rows]


def pad_rows(rows):
    width = max(len(r) for r in rows)
    return torch.tensor([r + [0] * (width - len(r)) for r in rows], dtype=torch.long)


def train(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    lines = [line.rstrip("\n").split("\t") for line in open(args.data)]
    vocabs = []
    for side in (0, 1):
        words = sorted({w for line in lines for w in line[side].split()})
        vocabs.append({w: i + 4 for i, w in enumerate(words)})
    pairs = [([vocabs[0][w] for w in s.split()], [vocabs[1][w] for w in t.split()])
             for s, t in lines]
    model = Transformer(args.vocab, args.vocab, args.d_model, args.layers, args.heads,
                        args.d_ff, 0.1)
    model.train()
    criterion = torch.nn.CrossEntropyLoss(ignore_index=0, label_smoothing=args.label_smoothing)
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: args.d_model ** -0.5 *
        min((s + 1) ** -0.5, (s + 1) * args.warmup ** -1.5))
    print("pytorch: %d pairs, vocabularies %d / %d, batch %d, %d steps"
          % (len(pairs), len(vocabs[0]) + 4, len(vocabs[1]) + 4, args.batch, args.steps))
    log = open(args.log, "w")
    log.write("step,loss,tokens,seconds\n")
    source = batches(pairs, args.batch, args.seed)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        rows = next(source)
        src = pad_rows([s for s, _ in rows])
        tgt_in = pad_rows([[2] + t for _, t in rows])
        tgt_out = pad_rows([t + [3] for _, t in rows])
        optimizer.zero_grad()
        logits = model(src, tgt_in)
        loss = criterion(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1))
        loss.backward()
        optimizer.step()
        schedule.step()
        now = time.perf_counter()
        log.write("%d,%.4f,%d,%.4f\n" % (step, loss.item(), int((tgt_out != 0).sum()),
                                         now - start))
        start = now
    log.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["corpus", "train"])
    p.add_argument("--out")
    p.add_argument("--data")
    p.add_argument("--log")
    p.add_argument("--pairs", type=int, default=50000)
    p.add_argument("--vocab-words", type=int, default=30000)
    p.add_argument("--zipf", type=float, default=1.1)
    p.add_argument("--min-len", type=int, default=4)
    p.add_argument("--max-len", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--vocab", type=int, default=30004, help="the model's vocabulary size")
    p.add_argument("--d_model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--d_ff", type=int, default=1024)
    p.add_argument("--warmup", type=int, default=4000)
    p.add_argument("--label_smoothing", type=float, default=0.1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    if args.what == "corpus":
        corpus(args)
    else:
        train(args)


if __name__ == "__main__":
    main()
