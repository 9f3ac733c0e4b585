#!/usr/bin/env python3
"""The seeds' post-norm Transformer (shared/seeds 001/004) in PyTorch, used as
the reference for txc: parameter names and shapes (here), and golden numerics
(later). Module names follow seed 004, so state_dict keys are the names txc
gives parameters (encoder.layers.3.self_attn.W_q.weight, ...).

  python3 test/golden/seed_model.py --list-params [--d_model 512 ...]

prints `name shape` per parameter and the total, in the format of
`txc --list-params` (without the initializer column), for comparison.
"""
import argparse
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, h):
        super().__init__()
        self.h, self.d_k = h, d_model // h
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        b, t, _ = x.size()
        return x.view(b, t, self.h, self.d_k).transpose(1, 2)

    def forward(self, q, k, v, mask=None):
        q, k, v = (self.split_heads(f(x)) for f, x in
                   ((self.W_q, q), (self.W_k, k), (self.W_v, v)))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, t, _ = out.size()
        return self.W_o(out.transpose(1, 2).contiguous().view(b, t, -1))


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


def positional_encoding(t, d_model, device=None):
    pe = torch.zeros(t, d_model, device=device)
    position = torch.arange(0, t, dtype=torch.float, device=device).unsqueeze(1)
    div = torch.exp(torch.arange(0, d_model, 2, device=device).float()
                    * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)
    return pe


class EncoderLayer(nn.Module):
    def __init__(self, d_model, h, d_ff, dropout):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, h, d_ff, dropout):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h)
        self.cross_attn = MultiHeadAttention(d_model, h)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, src_mask, tgt_mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class Stack(nn.Module):
    def __init__(self, layer, vocab, d_model, n, h, d_ff, dropout):
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([layer(d_model, h, d_ff, dropout) for _ in range(n)])
        self.dropout = nn.Dropout(dropout)

    def embed(self, ids):
        x = self.embedding(ids) * math.sqrt(self.d_model)
        return self.dropout(x + positional_encoding(ids.size(1), self.d_model,
                                                     ids.device))


class Encoder(Stack):
    def __init__(self, *args):
        super().__init__(EncoderLayer, *args)

    def forward(self, src, mask):
        x = self.embed(src)
        for layer in self.layers:
            x = layer(x, mask)
        return x


class Decoder(Stack):
    def __init__(self, *args):
        super().__init__(DecoderLayer, *args)

    def forward(self, tgt, memory, src_mask, tgt_mask):
        x = self.embed(tgt)
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return x


class Transformer(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, d_model, n, h, d_ff, dropout, pad=0):
        super().__init__()
        self.pad = pad
        self.encoder = Encoder(src_vocab, d_model, n, h, d_ff, dropout)
        self.decoder = Decoder(tgt_vocab, d_model, n, h, d_ff, dropout)
        self.final_linear = nn.Linear(d_model, tgt_vocab)
        for p in self.parameters():  # the seeds' xavier init of matrices
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def masks(self, src, tgt):
        src_mask = (src != self.pad).unsqueeze(1).unsqueeze(2)
        causal = torch.tril(torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool,
                                       device=tgt.device))
        tgt_mask = (tgt != self.pad).unsqueeze(1).unsqueeze(2) & causal
        return src_mask, tgt_mask

    def forward(self, src, tgt):
        src_mask, tgt_mask = self.masks(src, tgt)
        memory = self.encoder(src, src_mask)
        return self.final_linear(self.decoder(tgt, memory, src_mask, tgt_mask))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list-params", action="store_true")
    for name, default in (("d_model", 512), ("heads", 8), ("layers", 6),
                          ("d_ff", 2048), ("src_vocab", 8000), ("tgt_vocab", 8000)):
        parser.add_argument("--" + name, type=int, default=default)
    args = parser.parse_args()
    model = Transformer(args.src_vocab, args.tgt_vocab, args.d_model, args.layers,
                        args.heads, args.d_ff, 0.1)
    if args.list_params:
        total = 0
        state = model.state_dict()
        for name, tensor in state.items():
            print(name, list(tensor.shape))
            total += tensor.numel()
        print("total: %d parameters in %d tensors" % (total, len(state)))


if __name__ == "__main__":
    main()
