"""PyTorch twin of lm-awkward-torch.test's spec (a GPT-style language model
at sizes that are no multiple of 8: d 35, 5 heads of 7, d_ff 33, vocab 37,
learned positions, output tied to the token embedding, GELU tanh, label
smoothing). Reads the executable's weights (safetensors), ids and labels;
writes in float64 the logits (logits.npy), the train entry's loss
(loss.npy), its gradients by parameter name (grads.safetensors), and the
parameters and Adam moments after 3 steps of torch.optim.Adam with the
spec's optimizer (adam3.safetensors, named like a txc checkpoint).
A fifth argument `float32` computes all of it in float32 instead: the
spread of float32 arithmetic itself around the float64 results
(compare-adam.py --spread)."""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

VOCAB, D, HEADS, DK, LAYERS = 37, 35, 5, 7, 2


def layer_norm(x, w, name):
    return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], 1e-5)


def linear(x, w, name):
    return F.linear(x, w[name + ".weight"], w[name + ".bias"])


def gpt(w, ids):
    b, t = ids.shape
    keep = (ids != 0)[:, None, None, :] & torch.tril(
        torch.ones(t, t, dtype=torch.bool))
    x = w["wte"][ids] + w["wpe"][:t]
    for i in range(LAYERS):
        p = "h.%d." % i
        q, k, v = linear(layer_norm(x, w, p + "ln_1"), w, p + "attn.c_attn").split(D, -1)
        q, k, v = (z.view(b, t, HEADS, DK).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-1, -2) / DK ** 0.5).masked_fill(~keep, -1e9)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        x = x + linear(o, w, p + "attn.c_proj")
        h = F.gelu(linear(layer_norm(x, w, p + "ln_2"), w, p + "fc"), approximate="tanh")
        x = x + linear(h, w, p + "proj")
    return layer_norm(x, w, "ln_f") @ w["wte"].T


def loss_of(w, ids, labels):
    return F.cross_entropy(gpt(w, ids).reshape(-1, VOCAB), labels.reshape(-1),
                           ignore_index=0, label_smoothing=0.1)


def main():
    weights_path, ids_path, labels_path, out_dir = sys.argv[1:5]
    dtype = torch.float32 if sys.argv[5:6] == ["float32"] else torch.float64
    start = read_safetensors(weights_path)[0]
    w = {k: torch.tensor(v, dtype=dtype, requires_grad=True)
         for k, v in start.items()}
    ids = torch.tensor(np.loadtxt(ids_path, dtype=np.int64, ndmin=2))
    labels = torch.tensor(np.loadtxt(labels_path, dtype=np.int64, ndmin=2))
    np.save(os.path.join(out_dir, "logits.npy"),
            gpt(w, ids).detach().numpy().astype(np.float32))
    loss = loss_of(w, ids, labels)
    np.save(os.path.join(out_dir, "loss.npy"), loss.detach().numpy().astype(np.float32))
    loss.backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})

    names = list(w)
    params = [w[k] for k in names]
    opt = torch.optim.Adam(params, lr=1e-2, betas=(0.9, 0.95), eps=1e-8)
    for _ in range(3):
        opt.zero_grad()
        loss_of(w, ids, labels).backward()
        torch.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()
    out = {}
    for k, p in zip(names, params):
        state = opt.state[p]
        out[k] = p.detach().numpy().astype(np.float32)
        out[k + ".exp_avg"] = state["exp_avg"].numpy().astype(np.float32)
        out[k + ".exp_avg_sq"] = state["exp_avg_sq"].numpy().astype(np.float32)
    write_safetensors(os.path.join(out_dir, "adam3.safetensors"), out)


if __name__ == "__main__":
    main()
