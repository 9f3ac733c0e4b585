"""Loads an `export`ed safetensors file into the seeds' PyTorch Transformer
(test/golden/seed_model.py) with load_state_dict(strict=True), so every
name and shape must match, and writes its logits for src.npy / tgt.npy.

usage: load_exported_torch.py W.safetensors SRC.npy TGT.npy OUT.npy
       d_model heads layers d_ff src_vocab tgt_vocab"""
import os
import sys

import numpy as np
import torch

here = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(here, "..", "..", "utils"))
sys.path.insert(0, os.path.join(here, "..", "..", "golden"))
from safetensors_np import read_safetensors  # noqa: E402
from seed_model import Transformer  # noqa: E402


def main():
    weights, src, tgt, out = sys.argv[1:5]
    d_model, heads, layers, d_ff, src_vocab, tgt_vocab = map(int, sys.argv[5:11])
    torch.manual_seed(123)  # other weights than the file's, until loaded
    model = Transformer(src_vocab, tgt_vocab, d_model, layers, heads, d_ff,
                        0.1, pad=0)
    model.eval()
    tensors, metadata = read_safetensors(weights)
    result = model.load_state_dict(
        {name: torch.from_numpy(array) for name, array in tensors.items()},
        strict=True)
    print("load_state_dict(strict=True): %d tensors, missing %d, unexpected %d,"
          " format %s" % (len(tensors), len(result.missing_keys),
                          len(result.unexpected_keys), metadata.get("format")))
    with torch.no_grad():
        logits = model(torch.from_numpy(np.load(src)).long(),
                       torch.from_numpy(np.load(tgt)).long())
    np.save(out, logits.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
