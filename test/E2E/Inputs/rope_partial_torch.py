"""PyTorch twin of rope-partial-torch.test's block (GPT-NeoX's partial
rotary embeddings: the first ROT features of each head rotate, with
inv_freq over ROT, Hugging Face's float32 angles; causal attention):
reads the executable's weights and inputs, writes y.npy and the gradients
of sum(block(x) * r) by parameter name."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "utils"))
from safetensors_np import read_safetensors, write_safetensors  # noqa: E402

D, HEADS, D_K, ROT = 20, 2, 10, 4


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def partial_rope(x, base=10000.0):  # x [B, h, T, D_K]
    t = x.shape[-2]
    inv_freq = 1.0 / (base ** (torch.arange(0, ROT, 2, dtype=torch.int64).float() / ROT))
    freqs = torch.outer(torch.arange(t).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    rot, rest = x[..., :ROT], x[..., ROT:]
    rot = rot * emb.cos().double() + rotate_half(rot) * emb.sin().double()
    return torch.cat((rot, rest), dim=-1)


def main():
    weights_path, x_path, r_path, out_dir = sys.argv[1:5]
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in read_safetensors(weights_path)[0].items()}
    x = torch.tensor(np.load(x_path), dtype=torch.float64)
    r = torch.tensor(np.load(r_path), dtype=torch.float64)
    b, t, _ = x.shape
    lin = torch.nn.functional.linear

    def heads(h, name):
        return lin(h, w["blk." + name + ".weight"]).view(b, t, HEADS, D_K).transpose(1, 2)

    def block(x):
        q, k, v = partial_rope(heads(x, "W_q")), partial_rope(heads(x, "W_k")), heads(x, "W_v")
        s = q @ k.transpose(-2, -1) / D_K ** 0.5
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        s = s.masked_fill(~causal, -1e9)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        return lin(o, w["blk.W_o.weight"])

    y = block(x)
    np.save(os.path.join(out_dir, "y.npy"), y.detach().numpy().astype(np.float32))
    (block(x) * r).sum().backward()
    write_safetensors(os.path.join(out_dir, "grads.safetensors"),
                      {k: v.grad.numpy().astype(np.float32) for k, v in w.items()})


if __name__ == "__main__":
    main()
