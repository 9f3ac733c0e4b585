"""PyTorch twin of indexing-torch.test's spec: reads the executable's weights
(safetensors) and inputs, writes the forward outputs (y, first, last .npy)
and the gradients of the training loss by parameter name (safetensors), all
in float64."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D = 16


def rotate_half(x):
    x1 = x[..., : D // 2]
    x2 = x[..., D // 2:]
    return torch.cat((-x2, x1), dim=-1)


def main():
    weights_path, ids_path, rev_path, r_path, rc_path, out_dir = sys.argv[1:7]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    ids = torch.tensor(np.loadtxt(ids_path, dtype=np.int64, ndmin=2))
    rev = torch.tensor(np.loadtxt(rev_path, dtype=np.int64, ndmin=1))
    r = torch.tensor(np.load(r_path), dtype=torch.float64)
    rc = torch.tensor(np.load(rc_path), dtype=torch.float64)
    B, T = ids.shape

    def body():
        h = (w["net.wte"][ids] + w["net.wpe"][torch.arange(T)]
             + w["net.pos"][:T])
        h = torch.nn.functional.linear(h, w["net.proj.weight"],
                                       w["net.proj.bias"])
        a, b = torch.chunk(h, 2, dim=-1)
        glu = a * torch.sigmoid(b)
        even = h[..., ::2]
        odd = h[..., 1::2]
        mixed = torch.stack((even, odd * 2.0), dim=-1)
        rot = rotate_half(mixed.reshape(B, T, D))
        p, q = torch.split(rot, [4, 12], dim=-1)
        return torch.cat((glu, p, q[:, rev]), dim=-1)

    y = body()
    outputs = {"y": y, "first": y[:, 0, :],
               "last": torch.select(y, 1, -1)[:, 2:30:3]}
    for name, value in outputs.items():
        np.save(os.path.join(out_dir, name + ".npy"),
                value.detach().numpy().astype(np.float32))
    y = body()
    loss = (y * r).sum() + (y[:, 0] * rc).sum()
    loss.backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
