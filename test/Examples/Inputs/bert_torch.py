"""PyTorch twin of examples/bert/model.tx (BERT's math: token + position +
segment embeddings and LayerNorm, post-norm encoder layers with a padding
mask and an erf GELU, first-token pooling through a tanh pooler, a
classification head) in float64 on the executable's weights: writes
logits.npy, and the gradients of the mean cross-entropy by parameter name.

usage: bert_torch.py WEIGHTS.safetensors IDS.txt SEGMENTS.txt LABELS.npy OUT_DIR"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, LAYERS, HEADS, PAD, EPS = 64, 2, 4, 0, 1e-12
D_K = D // HEADS


def read_ids(path):
    return torch.tensor([[int(t) for t in line.split()]
                         for line in open(path) if line.strip()])


def bert(w, ids, segments):
    b, t = ids.shape
    keep = (ids != PAD)[:, None, None, :]

    def ln(x, name):
        return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], EPS)

    def lin(x, name):
        return F.linear(x, w[name + ".weight"], w[name + ".bias"])

    x = (w["word_embeddings"][ids] + w["position_embeddings"][:t]
         + w["token_type_embeddings"][segments])
    x = ln(x, "embeddings_norm")
    for i in range(LAYERS):
        p = f"layer.{i}."
        q, k, v = (lin(x, p + "attention." + n).view(b, t, HEADS, D_K).transpose(1, 2)
                   for n in ("query", "key", "value"))
        s = (q @ k.transpose(-2, -1) / D_K ** 0.5).masked_fill(~keep, -1e9)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        x = ln(x + lin(o, p + "attention.output"), p + "attention_norm")
        h = lin(F.gelu(lin(x, p + "intermediate")), p + "output")
        x = ln(x + h, p + "output_norm")
    pooled = torch.tanh(lin(x[:, 0, :], "pooler"))
    return lin(pooled, "classifier")


def main():
    weights_path, ids_path, segments_path, labels_path, out_dir = sys.argv[1:6]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    ids, segments = read_ids(ids_path), read_ids(segments_path)
    labels = torch.tensor(np.load(labels_path), dtype=torch.int64)
    logits = bert(w, ids, segments)
    np.save(os.path.join(out_dir, "logits.npy"),
            logits.detach().numpy().astype(np.float32))
    F.cross_entropy(logits, labels).backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
