"""PyTorch twin of s2s-prenorm-torch.test's spec (a pre-norm encoder-decoder:
d 12, 3 heads of 4, d_ff 33, vocabularies 11 and 13). Reads the
executable's weights (safetensors), src, a one-token decoder input, tgt_in
and tgt_out; writes in float64 the encoder's memory (memory.npy), the
logits of that token given the memory (logits.npy), the train entry's loss
(loss.npy) and gradients (grads.safetensors), and the parameters and Adam
moments after 3 steps of torch.optim.Adam with the spec's noam schedule
and clipping (adam3.safetensors, named like a txc checkpoint)."""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, HEADS, DK, TGT_VOCAB, LAYERS, WARMUP = 12, 3, 4, 13, 2, 5


def linear(x, w, name):
    return F.linear(x, w[name + ".weight"], w[name + ".bias"])


def layer_norm(x, w, name):
    return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], 1e-5)


def positions(t):
    pos = torch.arange(t, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, D, 2, dtype=torch.float64) * (-math.log(10000.0) / D))
    pe = torch.zeros(t, D, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


def mha(w, p, q_in, kv, keep):
    b, tq, tk = q_in.shape[0], q_in.shape[1], kv.shape[1]
    q = linear(q_in, w, p + "W_q").view(b, tq, HEADS, DK).transpose(1, 2)
    k = linear(kv, w, p + "W_k").view(b, tk, HEADS, DK).transpose(1, 2)
    v = linear(kv, w, p + "W_v").view(b, tk, HEADS, DK).transpose(1, 2)
    s = (q @ k.transpose(-1, -2) / DK ** 0.5).masked_fill(~keep, -1e9)
    o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, tq, D)
    return linear(o, w, p + "W_o")


def ffn(w, p, x):
    return linear(linear(x, w, p + "w1").relu(), w, p + "w2")


def encode(w, src):
    x = w["src_embed.weight"][src] * D ** 0.5 + positions(src.shape[1])
    keep = (src != 0)[:, None, None, :]
    for i in range(LAYERS):
        p = "encoder.layers.%d." % i
        n = layer_norm(x, w, p + "norm1")
        x = x + mha(w, p + "self_attn.", n, n, keep)
        x = x + ffn(w, p + "feed_forward.", layer_norm(x, w, p + "norm2"))
    return layer_norm(x, w, "encoder.norm")


def decode(w, tgt, memory, src):
    t = tgt.shape[1]
    y = w["tgt_embed.weight"][tgt] * D ** 0.5 + positions(t)
    src_keep = (src != 0)[:, None, None, :]
    tgt_keep = (tgt != 0)[:, None, None, :] & torch.tril(torch.ones(t, t, dtype=torch.bool))
    for i in range(LAYERS):
        p = "decoder.layers.%d." % i
        n = layer_norm(y, w, p + "norm1")
        y = y + mha(w, p + "self_attn.", n, n, tgt_keep)
        y = y + mha(w, p + "cross_attn.", layer_norm(y, w, p + "norm2"), memory, src_keep)
        y = y + ffn(w, p + "feed_forward.", layer_norm(y, w, p + "norm3"))
    return linear(layer_norm(y, w, "decoder.norm"), w, "generator")


def loss_of(w, src, tgt_in, tgt_out):
    logits = decode(w, tgt_in, encode(w, src), src)
    return F.cross_entropy(logits.reshape(-1, TGT_VOCAB), tgt_out.reshape(-1),
                           ignore_index=0, label_smoothing=0.1)


def ids(path):
    return torch.tensor(np.loadtxt(path, dtype=np.int64, ndmin=2))


def main():
    weights_path, src_path, tok_path, in_path, out_path, out_dir = sys.argv[1:7]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    src, tok, tgt_in, tgt_out = ids(src_path), ids(tok_path), ids(in_path), ids(out_path)
    memory = encode(w, src)
    np.save(os.path.join(out_dir, "memory.npy"), memory.detach().numpy().astype(np.float32))
    logits = decode(w, tok, memory, src)
    np.save(os.path.join(out_dir, "logits.npy"), logits.detach().numpy().astype(np.float32))
    loss = loss_of(w, src, tgt_in, tgt_out)
    np.save(os.path.join(out_dir, "loss.npy"), loss.detach().numpy().astype(np.float32))
    loss.backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})

    names = list(w)
    params = [w[k] for k in names]
    opt = torch.optim.Adam(params, lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    noam = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: D ** -0.5 * min((s + 1) ** -0.5, (s + 1) * WARMUP ** -1.5))
    for _ in range(3):
        opt.zero_grad()
        loss_of(w, src, tgt_in, tgt_out).backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        noam.step()
    out = {}
    for k, p in zip(names, params):
        out[k] = p.detach().numpy().astype(np.float32)
        out[k + ".exp_avg"] = opt.state[p]["exp_avg"].numpy().astype(np.float32)
        out[k + ".exp_avg_sq"] = opt.state[p]["exp_avg_sq"].numpy().astype(np.float32)
    write_safetensors(os.path.join(out_dir, "adam3.safetensors"), out)


if __name__ == "__main__":
    main()
