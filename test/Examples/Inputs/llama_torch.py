"""PyTorch twin of examples/llama/model.tx (Hugging Face LlamaForCausalLM's
math: RMSNorm pre-norm, rotary embeddings with float32 angles, grouped-query
causal attention through repeat_kv, SwiGLU MLP, untied lm_head) in float64
on the executable's weights: writes logits.npy for ids, and the gradients
of the mean next-token cross-entropy (ignore_index = pad) by parameter name.

usage: llama_torch.py WEIGHTS.safetensors IDS.txt LABELS.txt OUT_DIR"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, LAYERS, HEADS, KV_HEADS, PAD, EPS = 64, 2, 4, 2, 0, 1e-6
D_K = D // HEADS


def read_ids(path):
    return torch.tensor([[int(t) for t in line.split()]
                         for line in open(path) if line.strip()])


def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, base=10000.0):  # x [B, h, T, d_k]
    t = x.shape[-2]
    inv_freq = 1.0 / (base ** (torch.arange(0, D_K, 2, dtype=torch.int64).float() / D_K))
    freqs = torch.outer(torch.arange(t).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos().double() + rotate_half(x) * emb.sin().double()


def repeat_kv(x, n_rep):  # [B, kv, T, d] -> [B, kv * n_rep, T, d]
    b, kv, t, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, n_rep, t, d).reshape(b, kv * n_rep, t, d)


def llama(w, ids):
    b, t = ids.shape
    lin = torch.nn.functional.linear
    keep = (ids != PAD)[:, None, None, :] & torch.tril(torch.ones(t, t, dtype=torch.bool))
    x = w["embed_tokens.weight"][ids]
    for i in range(LAYERS):
        p = f"layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"])
        q = lin(h, w[p + "self_attn.q_proj.weight"]).view(b, t, HEADS, D_K).transpose(1, 2)
        k = lin(h, w[p + "self_attn.k_proj.weight"]).view(b, t, KV_HEADS, D_K).transpose(1, 2)
        v = lin(h, w[p + "self_attn.v_proj.weight"]).view(b, t, KV_HEADS, D_K).transpose(1, 2)
        q, k = rope(q), rope(k)
        k, v = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        s = (q @ k.transpose(-2, -1) / D_K ** 0.5).masked_fill(~keep, -1e9)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        x = x + lin(o, w[p + "self_attn.o_proj.weight"])
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"])
        gate = torch.nn.functional.silu(lin(h, w[p + "mlp.gate_proj.weight"]))
        up = lin(h, w[p + "mlp.up_proj.weight"])
        x = x + lin(gate * up, w[p + "mlp.down_proj.weight"])
    return lin(rms_norm(x, w["norm.weight"]), w["lm_head.weight"])


def main():
    weights_path, ids_path, labels_path, out_dir = sys.argv[1:5]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    ids, labels = read_ids(ids_path), read_ids(labels_path)
    logits = llama(w, ids)
    np.save(os.path.join(out_dir, "logits.npy"),
            logits.detach().numpy().astype(np.float32))
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=PAD)
    loss.backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
