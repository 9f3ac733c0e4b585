"""PyTorch twin of attention-shared-heads-torch.test's spec: reads the
executable's weights (safetensors), ids and r, writes the forward output
y.npy, the loss of the train entry (loss.npy) and its gradients by
parameter name (safetensors), in float64."""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, HEADS, DK = 15, 3, 5


def block(w, ids):
    b, t = ids.shape
    x = w["emb.weight"][ids]
    keep = (ids != 0)[:, None, None, :]

    def split(h):
        return h.view(b, t, HEADS, DK).transpose(1, 2)

    def merge(h):
        return h.transpose(1, 2).reshape(b, t, D)

    q = split(F.linear(x, w["qkv.weight"], w["qkv.bias"]))
    s = (q @ q.transpose(-1, -2) / DK ** 0.5).masked_fill(~keep, -1e9)
    a = merge(s.softmax(-1) @ q)
    # The attention builtin drops masked keys; a row with none left is 0.
    h = split(F.linear(x, w["heads_proj.weight"], w["heads_proj.bias"]))
    s = (h @ h.transpose(-1, -2) / DK ** 0.5).masked_fill(~keep, float("-inf"))
    p = torch.where(keep.any(-1, keepdim=True), s.softmax(-1), torch.zeros_like(s))
    o = p @ q
    c = merge(o * 0.5 + o.mean(2, keepdim=True))
    return F.linear(a + c, w["out.weight"], w["out.bias"]) + merge(q)


def main():
    weights_path, ids_path, r_path, out_dir = sys.argv[1:5]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    ids = torch.tensor(np.loadtxt(ids_path, dtype=np.int64, ndmin=2))
    r = torch.tensor(np.load(r_path), dtype=torch.float64)
    y = block(w, ids)
    np.save(os.path.join(out_dir, "y.npy"), y.detach().numpy().astype(np.float32))
    loss = (block(w, ids) * r).sum()
    np.save(os.path.join(out_dir, "loss.npy"), loss.detach().numpy().astype(np.float32))
    loss.backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
