# Usage: broadcast_grad_check.py UTILS X.npy W.safetensors G.safetensors OUT_DIR
# For rank7-broadcast-gradient.test: y = x * p (p broadcast over x's
# leading and size-1 axes), loss = sum(y * y). Compares the forward's y
# and s = reduce_sum(y, axis = 2) and train's gradient of p, 2 * sum of
# y * x over the axes p is broadcast along, with float64 numpy.
import sys

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402
from safetensors_np import read_safetensors  # noqa: E402

x = np.load(sys.argv[2]).astype(np.float64)
p = read_safetensors(sys.argv[3])[0]["p"].astype(np.float64)
g = read_safetensors(sys.argv[4])[0]["p"]
out = sys.argv[5]
y = x * p
lead = y.ndim - p.ndim
axes = tuple(i for i in range(y.ndim)
             if i < lead or (p.shape[i - lead] == 1 and y.shape[i] != 1))
want = (2 * y * x).sum(axis=axes).reshape(p.shape)
errors = {
    "y": np.abs(np.load(out + "/y.npy") - y).max(),
    "s": np.abs(np.load(out + "/s.npy") - y.sum(axis=2)).max(),
    "grad": np.abs(g - want).max() / np.abs(want).max(),
}
for name, error in errors.items():
    print("%s %s" % (name, "ok" if error < 1e-5 else "differs by %g" % error))
