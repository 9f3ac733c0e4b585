"""Inputs of test/scripts/compare-spread.test: a reference, a second reference 1e-3 off
it (the spread), and results 1e-3 and 1e-2 off, as .npy and safetensors."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
from safetensors_np import write_safetensors  # noqa: E402

out = sys.argv[1]
ref = np.zeros(64, dtype=np.float32)
ref[0] = 1.0
for name, off in (("ref", 0.0), ("other", 1e-3), ("near", 1e-3), ("far", 1e-2)):
    x = ref.copy()
    x[5] = off
    np.save(os.path.join(out, name + ".npy"), x)
    write_safetensors(os.path.join(out, name + ".safetensors"),
                      {"w": x[:48].reshape(6, 8), "b": ref[:32].copy()})

# Adam checkpoints (compare-adam.py): a start, a reference after a step of
# -0.01 everywhere, a second reference whose step is 2e-3 off at one
# coordinate, and results 2e-3 and 2e-2 off there.
start = np.ones(8, dtype=np.float32)
write_safetensors(os.path.join(out, "adam-start.safetensors"), {"w": start})
for name, off in (("ref", 0.0), ("other", 2e-3), ("near", 2e-3), ("far", 2e-2)):
    w = (start - 0.01).astype(np.float64)
    w[3] -= 0.01 * off
    write_safetensors(os.path.join(out, "adam-" + name + ".safetensors"),
                      {"w": w.astype(np.float32),
                       "w.exp_avg": np.full(8, 0.5, np.float32),
                       "w.exp_avg_sq": np.full(8, 0.25, np.float32)})
