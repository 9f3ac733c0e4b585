"""PyTorch twin of rms-norm-torch.test's spec: reads the executable's
weights (safetensors) and inputs (.npy), writes the forward output y.npy and
the gradients of sum(block(x) * r) by parameter name (safetensors)."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def main():
    weights_path, x_path, r_path, out_dir = sys.argv[1:5]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    x = torch.tensor(np.load(x_path), dtype=torch.float64)
    r = torch.tensor(np.load(r_path), dtype=torch.float64)

    def block(x):
        h = x + torch.nn.functional.linear(
            rms_norm(x, w["blk.norm1.weight"], 1e-6), w["blk.proj.weight"],
            w["blk.proj.bias"])
        return rms_norm(h, w["blk.norm2.weight"], 1e-5)

    y = block(x)
    np.save(os.path.join(out_dir, "y.npy"), y.detach().numpy().astype(np.float32))
    (block(x) * r).sum().backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
