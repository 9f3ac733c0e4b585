#!/usr/bin/env bash
# glue-vs-cpu.sh BIN OUT [PYTHON]: the compiler-generated glue kernels that
# end in a scalar, on the GPU against the CPU build of the same spec:
#   - test/GPU/Inputs/scalar-glue.tx (BIN/scalar-glue-cpu, -cuda): rank-0
#     glue, a masked mean and a max reduced to scalars (one-thread kernels);
#     `peak`'s two scalars and `train_grad`'s loss and gradients;
#   - test/E2E/Inputs/math-edges.tx (BIN/math-edges-cpu, -cuda): every math
#     builtin as a glue kernel at the edges of its domain (0, -0, +-inf,
#     NaN, 3e38, ...), `fwd`'s 21 outputs (reduce_max to one value among
#     them) and `train_grad`'s gradients (a loss of 21 reductions to
#     scalars), each device against PyTorch as test/E2E/math-edges.test
#     does it (math_edges_torch.py: NaN where PyTorch gives NaN, the same
#     infinities, else 1e-5; needs torch in PYTHON).
# scalar-glue within 1e-5 of the CPU's largest value (compare-npy.py /
# compare-grads.py): glue has no GEMM, so there is no rounding spread to
# allow for beyond the math functions' own (libdevice vs the CPU's).
# Prints one PASS / FAIL line per stage; exits 1 if any failed.
set -u
bin=$1 out=$2 python=${3:-python3}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
utils="$here/../../utils"
mkdir -p "$out"
. "$here/stages.sh"
"$python" - "$out" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(3)
np.save(out + "/x.npy", rng.standard_normal((3, 5, 8)).astype(np.float32))
np.save(out + "/y.npy", rng.uniform(-1, 1, (3, 5, 5)).astype(np.float32))
m = np.ones((3, 5), np.float32)
m[1, 3:] = 0
m[2, 1:] = 0
np.save(out + "/m.npy", m)
PY
edges="$here/../../E2E/Inputs/math_edges_torch.py"
stage "math-edges-inputs" "$python" "$edges" inputs "$out/me-in"

sg_fwd=(--input "x=$out/x.npy")
sg_train=("${sg_fwd[@]}" --input "y=$out/y.npy" --input "m=$out/m.npy")
me_fwd=(--input "x=$out/me-in/x.npy")
me_train=("${me_fwd[@]}" --input "id=$out/me-in/id.npy")
for side in cpu cuda; do
  d="$out/$side"
  mkdir -p "$d/sg" "$d/me"
  stage "scalar-glue-peak-$side" "$bin/scalar-glue-$side" run peak --init 5 \
    "${sg_fwd[@]}" --out-dir "$d/sg"
  stage "scalar-glue-grads-$side" "$bin/scalar-glue-$side" run train_grad \
    --init 5 "${sg_train[@]}" --out-dir "$d/sg" --save-grads "$d/sg/grads.safetensors"
  stage "math-edges-fwd-$side" "$bin/math-edges-$side" run fwd --init 0 \
    "${me_fwd[@]}" --out-dir "$d/me"
  stage "math-edges-grads-$side" "$bin/math-edges-$side" run train_grad \
    --load "$out/me-in/weights.safetensors" "${me_train[@]}" --out-dir "$d/me/grad" \
    --save-grads "$d/me/grads.safetensors"
  stage "math-edges-vs-torch-$side" "$python" "$edges" check "$out/me-in" \
    "$d/me" "$d/me/grads.safetensors"
done
for name in top s loss; do
  stage "scalar-glue-$name-compare" "$python" "$utils/compare-npy.py" \
    "$out/cuda/sg/$name.npy" "$out/cpu/sg/$name.npy" --rtol 1e-5
done
stage "scalar-glue-grads-compare" "$python" "$utils/compare-grads.py" --quiet \
  "$out/cuda/sg/grads.safetensors" "$out/cpu/sg/grads.safetensors" --rtol 1e-5
exit $failed
