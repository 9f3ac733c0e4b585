"""PyTorch twin of rope-gqa-torch.test's spec (a Llama-style block: RMSNorm
pre-norm, rotary embeddings on Q and K, grouped-query causal attention with
2 key/value heads for 4 query heads, Hugging Face conventions): reads the
executable's weights and inputs, writes y.npy and the gradients of
sum(block(x) * r) by parameter name."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, HEADS, KV_HEADS, D_K = 16, 4, 2, 4


def rms_norm(x, weight, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, base=10000.0):  # x [B, h, T, d], Hugging Face's float32 angles
    t = x.shape[-2]
    inv_freq = 1.0 / (base ** (torch.arange(0, D_K, 2, dtype=torch.int64).float() / D_K))
    freqs = torch.outer(torch.arange(t).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos().double() + rotate_half(x) * emb.sin().double()


def main():
    weights_path, x_path, r_path, out_dir = sys.argv[1:5]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    x = torch.tensor(np.load(x_path), dtype=torch.float64)
    r = torch.tensor(np.load(r_path), dtype=torch.float64)
    b, t, _ = x.shape
    lin = torch.nn.functional.linear

    def attention(h):
        q = lin(h, w["blk.self_attn.W_q.weight"]).view(b, t, HEADS, D_K).transpose(1, 2)
        k = lin(h, w["blk.self_attn.W_k.weight"]).view(b, t, KV_HEADS, D_K).transpose(1, 2)
        v = lin(h, w["blk.self_attn.W_v.weight"]).view(b, t, KV_HEADS, D_K).transpose(1, 2)
        q, k = rope(q), rope(k)
        group = HEADS // KV_HEADS
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        s = q @ k.transpose(-2, -1) / D_K ** 0.5
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        s = s.masked_fill(~causal, -1e9)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        return lin(o, w["blk.self_attn.W_o.weight"])

    def block(x):
        h = x + attention(rms_norm(x, w["blk.attn_norm.weight"]))
        return h + lin(rms_norm(h, w["blk.ffn_norm.weight"]), w["blk.ffn.weight"],
                       w["blk.ffn.bias"])

    y = block(x)
    np.save(os.path.join(out_dir, "y.npy"), y.detach().numpy().astype(np.float32))
    (block(x) * r).sum().backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
