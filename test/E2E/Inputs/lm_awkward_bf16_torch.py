"""The twin of lm_awkward_torch.py (lm-awkward-torch.test's GPT-style spec
at sizes that are no multiple of 8) for the spec compiled with
--precision=bf16: every tx.linear reads bf16 (bf16_torch.linear), the
fused attention rounds its block products (bf16_torch.attention; with
--unfused-attention the products are unfused tx.matmul and stay f32, as
`txc --no-fuse` compiles them), and the tied output projection, an f32
tx.matmul, stays unrounded. Same arguments and outputs as
lm_awkward_torch.py."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import bf16_torch  # noqa: E402
import lm_awkward_torch as twin  # noqa: E402

FUSED = "--unfused-attention" not in sys.argv
if not FUSED:
    sys.argv.remove("--unfused-attention")


def linear(x, w, name):
    return bf16_torch.linear(x, w[name + ".weight"], w[name + ".bias"])


def gpt(w, ids):
    b, t = ids.shape
    d, heads, dk = twin.D, twin.HEADS, twin.DK
    keep = (ids != 0)[:, None, None, :] & torch.tril(torch.ones(t, t, dtype=torch.bool))
    x = w["wte"][ids] + w["wpe"][:t]
    for i in range(twin.LAYERS):
        p = "h.%d." % i
        q, k, v = linear(twin.layer_norm(x, w, p + "ln_1"), w, p + "attn.c_attn").split(d, -1)
        q, k, v = (z.view(b, t, heads, dk).transpose(1, 2) for z in (q, k, v))
        if FUSED:
            o = bf16_torch.attention(q, k, v, keep, dk ** -0.5)
        else:
            s = (q @ k.transpose(-1, -2) / dk ** 0.5).masked_fill(~keep, -1e9)
            o = s.softmax(-1) @ v
        x = x + linear(o.transpose(1, 2).reshape(b, t, d), w, p + "attn.c_proj")
        h = torch.nn.functional.gelu(
            linear(twin.layer_norm(x, w, p + "ln_2"), w, p + "fc"), approximate="tanh")
        x = x + linear(h, w, p + "proj")
    return twin.layer_norm(x, w, "ln_f") @ w["wte"].T


twin.linear = linear
twin.gpt = gpt

if __name__ == "__main__":
    twin.main()
