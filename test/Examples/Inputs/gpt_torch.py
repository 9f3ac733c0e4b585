"""PyTorch twin of examples/gpt/model.tx (GPT-2's math: learned positions,
pre-norm LayerNorm, fused QKV, causal attention with padding, GELU tanh
MLP, output tied to the token embedding) in float64 on the executable's
weights: writes logits.npy for ids, and the gradients of the mean next-token
cross-entropy (ignore_index = pad) by parameter name.

usage: gpt_torch.py WEIGHTS.safetensors IDS.txt LABELS.txt OUT_DIR"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, LAYERS, HEADS, PAD, EPS = 64, 2, 4, 0, 1e-5
D_K = D // HEADS


def read_ids(path):
    return torch.tensor([[int(t) for t in line.split()]
                         for line in open(path) if line.strip()])


def gpt(w, ids):
    b, t = ids.shape
    keep = (ids != PAD)[:, None, None, :] & torch.tril(torch.ones(t, t, dtype=torch.bool))

    def ln(x, name):
        return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], EPS)

    def lin(x, name):
        return F.linear(x, w[name + ".weight"], w[name + ".bias"])

    x = w["wte"][ids] + w["wpe"][torch.arange(t)]
    for i in range(LAYERS):
        p = f"h.{i}."
        q, k, v = lin(ln(x, p + "ln_1"), p + "attn.c_attn").split(D, dim=-1)
        q, k, v = (z.view(b, t, HEADS, D_K).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-2, -1) / D_K ** 0.5).masked_fill(~keep, -1e9)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        x = x + lin(o, p + "attn.c_proj")
        h = F.gelu(lin(ln(x, p + "ln_2"), p + "mlp.c_fc"), approximate="tanh")
        x = x + lin(h, p + "mlp.c_proj")
    return ln(x, "ln_f") @ w["wte"].t()


def main():
    weights_path, ids_path, labels_path, out_dir = sys.argv[1:5]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    ids, labels = read_ids(ids_path), read_ids(labels_path)
    logits = gpt(w, ids)
    np.save(os.path.join(out_dir, "logits.npy"),
            logits.detach().numpy().astype(np.float32))
    F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                    ignore_index=PAD).backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
