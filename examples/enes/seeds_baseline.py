#!/usr/bin/env python3
"""The seeds' PyTorch training loop on the examples/enes corpus: the baseline
that issue 16 compares the compiled model with.

Written the way ../shared/seeds write it (notebooks 000, 001 and 004): a
word-level vocabulary (whitespace and punctuation pre-tokenizer, words seen
at least twice, [UNK] [PAD] [SOS] [EOS]), the post-norm Transformer of
notebook 004 (no embedding scale, sinusoidal positions, nn.LayerNorm),
Adam(lr=1e-4, betas=(0.9, 0.98), eps=1e-9) at a constant learning rate,
CrossEntropyLoss(ignore_index=pad), shuffled batches of --batch pairs, and
greedy decoding that re-runs the decoder over the prefix. Two deviations,
both in PyTorch's favour: batches are padded to their longest pair rather
than to a fixed seq_len, and the encoder runs once per decoded sentence.

It trains for --minutes of wall-clock time, then translates --test and
prints corpus BLEU computed with sacreBLEU's defaults (13a tokenization,
brevity penalty, exp smoothing), implemented below so that no package is
needed; `--score HYP REF` scores any two files with the same code.

    python3 examples/enes/seeds_baseline.py --train data/train.tsv \
        --test data/test.tsv --minutes 40 --threads 1 --out /tmp/seeds
"""

import argparse
import collections
import math
import pathlib
import random
import re
import sys
import time


# --- BLEU as sacreBLEU computes it by default -------------------------------

_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (line.replace("&quot;", '"').replace("&amp;", "&")
                .replace("&lt;", "<").replace("&gt;", ">"))
    line = " {} ".format(line)
    for pattern, repl in _13A:
        line = pattern.sub(repl, line)
    return line.split()


def corpus_bleu(hyps, refs, max_order=4):
    matches = [0] * max_order
    totals = [0] * max_order
    hyp_len = ref_len = 0
    for hyp, ref in zip(hyps, refs):
        h, r = tokenize_13a(hyp), tokenize_13a(ref)
        hyp_len += len(h)
        ref_len += len(r)
        for n in range(1, max_order + 1):
            hc = collections.Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            rc = collections.Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1))
            matches[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            totals[n - 1] += max(len(h) - n + 1, 0)
    if hyp_len == 0:
        return 0.0
    # sacreBLEU's 'exp' smoothing: the k-th zero-match order counts 1 / 2^k.
    log_p, k = 0.0, 1
    for n in range(max_order):
        if totals[n] == 0:
            return 0.0
        if matches[n] == 0:
            k *= 2
            log_p += math.log(100.0 / (k * totals[n]))
        else:
            log_p += math.log(100.0 * matches[n] / totals[n])
    bp = 1.0 if hyp_len >= ref_len else math.exp(1.0 - ref_len / hyp_len)
    return bp * math.exp(log_p / max_order)


# --- data, as the seeds prepare it ------------------------------------------

_WORDS = re.compile(r"\w+|[^\w\s]+")  # HuggingFace's Whitespace pre-tokenizer
SPECIALS = ["[UNK]", "[PAD]", "[SOS]", "[EOS]"]
UNK, PAD, SOS, EOS = 0, 1, 2, 3


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if "\t" in line:
                src, tgt = line.split("\t", 1)
                pairs.append((src, tgt))
    return pairs


def build_vocab(sentences, min_frequency=2):
    counts = collections.Counter(w for s in sentences for w in _WORDS.findall(s))
    words = sorted((w for w, c in counts.items() if c >= min_frequency),
                   key=lambda w: (-counts[w], w))
    itos = SPECIALS + words
    return {w: i for i, w in enumerate(itos)}, itos


def encode(sentence, stoi, max_len):
    ids = [stoi.get(w, UNK) for w in _WORDS.findall(sentence)]
    return ids[:max_len - 2]


def detokenize(words):
    text = " ".join(words)
    text = re.sub(r" ([.,;:!?)\]}])", r"\1", text)
    return re.sub(r"([(\[{¿¡]) ", r"\1", text)


# --- the model of notebook 004 ----------------------------------------------

def build_model(torch, nn, src_vocab, tgt_vocab, d_model, layers, heads, d_ff, dropout, max_len):
    """Notebook 004's Transformer: the layers of test/golden/seed_model.py (the
    project's PyTorch twin of the seeds), but 004's top level, which neither
    scales the embeddings by sqrt(d_model) nor re-initializes the matrices
    (the twin follows txc's spec and notebook 001 there)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "test" / "golden"))
    from seed_model import DecoderLayer, EncoderLayer, positional_encoding

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embedding = nn.Embedding(src_vocab, d_model)
            self.tgt_embedding = nn.Embedding(tgt_vocab, d_model)
            self.register_buffer("pe", positional_encoding(max_len, d_model).unsqueeze(0))
            self.encoder_layers = nn.ModuleList(
                EncoderLayer(d_model, heads, d_ff, dropout) for _ in range(layers))
            self.decoder_layers = nn.ModuleList(
                DecoderLayer(d_model, heads, d_ff, dropout) for _ in range(layers))
            self.dropout = nn.Dropout(dropout)
            self.final_linear = nn.Linear(d_model, tgt_vocab)

        @staticmethod
        def padding_mask(seq):
            return (seq != PAD).unsqueeze(1).unsqueeze(2)

        def embed(self, embedding, ids):
            return self.dropout(embedding(ids) + self.pe[:, :ids.size(1)])

        def encode(self, src):
            src_mask = self.padding_mask(src)
            x = self.embed(self.src_embedding, src)
            for layer in self.encoder_layers:
                x = layer(x, src_mask)
            return x, src_mask

        def decode(self, tgt, memory, src_mask):
            t = tgt.size(1)
            look_ahead = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1) == 0
            tgt_mask = self.padding_mask(tgt) & look_ahead
            x = self.embed(self.tgt_embedding, tgt)
            for layer in self.decoder_layers:
                x = layer(x, memory, src_mask, tgt_mask)
            return self.final_linear(x)

        def forward(self, src, tgt):
            memory, src_mask = self.encode(src)
            return self.decode(tgt, memory, src_mask)

    return Transformer()


def pad_batch(torch, rows):
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train")
    ap.add_argument("--test")
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-ff", type=int, default=1024)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--test-limit", type=int, default=0, help="translate only the first N test pairs")
    ap.add_argument("--out", default=None, help="write hypotheses to OUT.hyp")
    ap.add_argument("--score", nargs=2, metavar=("HYP", "REF"),
                    help="print the BLEU of two line-aligned files and exit")
    args = ap.parse_args()

    if args.score:
        hyps = open(args.score[0], encoding="utf-8").read().splitlines()
        refs = open(args.score[1], encoding="utf-8").read().splitlines()
        if len(hyps) != len(refs):
            sys.exit(f"error: {args.score[0]} has {len(hyps)} lines, {args.score[1]} has {len(refs)}")
        print(f"BLEU {corpus_bleu(hyps, refs):.2f}")
        return

    import torch
    import torch.nn as nn
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)

    start = time.time()
    pairs = read_pairs(args.train)
    src_stoi, _ = build_vocab(s for s, _ in pairs)
    tgt_stoi, tgt_itos = build_vocab(t for _, t in pairs)
    data = [([SOS] + encode(s, src_stoi, args.max_len) + [EOS],
             [SOS] + encode(t, tgt_stoi, args.max_len) + [EOS]) for s, t in pairs]
    unk = sum(x == UNK for _, t in data for x in t) / max(1, sum(len(t) for _, t in data))
    print(f"seeds: {len(data)} pairs, vocabularies {len(src_stoi)} / {len(tgt_stoi)} words, "
          f"{100 * unk:.1f} % of target words [UNK], prepared in {time.time() - start:.1f} s", flush=True)

    model = build_model(torch, nn, len(src_stoi), len(tgt_stoi), args.d_model, args.layers,
                        args.heads, args.d_ff, args.dropout, args.max_len)
    params = sum(p.numel() for p in model.parameters())
    print(f"seeds: {params / 1e6:.1f} M parameters, {args.threads} thread(s)", flush=True)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)

    train_start = time.time()
    deadline = train_start + 60.0 * args.minutes
    step = epoch = tokens = 0
    window_tokens, window_start, window_loss, window_steps = 0, train_start, 0.0, 0
    model.train()
    while time.time() < deadline:
        epoch += 1
        order = list(range(len(data)))
        random.shuffle(order)
        for i in range(0, len(order), args.batch):
            if time.time() >= deadline:
                break
            rows = [data[j] for j in order[i:i + args.batch]]
            src = pad_batch(torch, [s for s, _ in rows])
            tgt = pad_batch(torch, [t for _, t in rows])
            optimizer.zero_grad()
            logits = model(src, tgt[:, :-1])
            loss = criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
            loss.backward()
            optimizer.step()
            step += 1
            n = int((tgt[:, 1:] != PAD).sum())
            tokens += n
            window_tokens += n
            window_loss += float(loss)
            window_steps += 1
            if step % 100 == 0:
                now = time.time()
                print(f"seeds: epoch {epoch} step {step} loss {window_loss / window_steps:.3f} "
                      f"{window_tokens / (now - window_start):.0f} target tokens/s", flush=True)
                window_tokens, window_start, window_loss, window_steps = 0, now, 0.0, 0
    elapsed = time.time() - train_start
    print(f"seeds: trained {step} steps ({epoch} epoch(s)), {tokens} target tokens in "
          f"{elapsed:.0f} s: {tokens / elapsed:.0f} target tokens/s", flush=True)

    test = read_pairs(args.test)
    if args.test_limit:
        test = test[:args.test_limit]
    model.eval()
    hyps = []
    decode_start = time.time()
    with torch.no_grad():
        for i in range(0, len(test), 64):
            chunk = test[i:i + 64]
            src = pad_batch(torch, [[SOS] + encode(s, src_stoi, args.max_len) + [EOS] for s, _ in chunk])
            memory, src_mask = model.encode(src)
            out = torch.full((len(chunk), 1), SOS, dtype=torch.long)
            done = torch.zeros(len(chunk), dtype=torch.bool)
            for _ in range(args.max_len - 1):
                nxt = model.decode(out, memory, src_mask)[:, -1].argmax(-1)
                nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
                out = torch.cat([out, nxt.unsqueeze(1)], dim=1)
                done |= nxt == EOS
                if bool(done.all()):
                    break
            for row in out.tolist():
                words = []
                for x in row[1:]:
                    if x in (EOS, PAD):
                        break
                    words.append(tgt_itos[x])
                hyps.append(detokenize(words))
    refs = [t for _, t in test]
    if args.out:
        with open(args.out + ".hyp", "w", encoding="utf-8") as f:
            f.write("\n".join(hyps) + "\n")
    unk_out = sum(h.split().count("[UNK]") for h in hyps) / max(1, sum(len(h.split()) for h in hyps))
    print(f"seeds: test BLEU {corpus_bleu(hyps, refs):.2f} on {len(test)} pairs "
          f"({100 * unk_out:.1f} % of output words [UNK]; decoded in {time.time() - decode_start:.0f} s)",
          flush=True)


if __name__ == "__main__":
    main()
