#!/usr/bin/env bash
# base-vs-cpu.sh CPU_EXE CUDA_EXE OUT [PYTHON]: examples/transformer/base.tx
# compiled for the CPU and with --target=cuda (same B, S, T) computes the
# same function (issue 17's check, docs/cuda.md):
#   1. the forward: encode's memory and decode's logits from the same
#      parameters (--init 0) and inputs, max |gpu - cpu| / max |cpu| <= 1e-5
#      (test/utils/compare-npy.py);
#   2. the gradients of one step (the train_grad entry, --save-grads;
#      dropout seed 1: the same Philox masks on both devices), every tensor
#      within max(1e-4, 2 x the CPU's own spread) by the same measure
#      (test/utils/compare-grads.py --spread), and the loss. The spread is
#      the CPU executable against itself under ONEDNN_MAX_CPU_ISA=SSE41
#      (other GEMM kernels and summation orders): the gradients are not
#      continuous in rounding (ReLU's kink: a pre-activation within an ulp
#      of 0 takes either branch), and on an AMD EPYC the two instruction
#      sets' gradients differed by 2e-2, the first GPU run's from the CPU's
#      by 4e-3 (docs/cuda.md);
#   3. 20 Adam steps (the train entry, --repeat 20, --save): the function
#      the two checkpoints compute (decode's logits, both evaluated by the
#      CPU executable) within max(1e-4, 2 x the CPU's spread, measured the
#      same way: 4.4e-4 there), and every tensor <= 1e-2. Adam's first
#      updates are +-lr for every element whatever its gradient's size, so
#      an element whose gradient's sign is rounding noise moves either way
#      on either device; the first GPU run measured 4.2e-3 (a bias that
#      started at zero) and 6.9e-3 (a first moment) after 20 steps.
# The key projections' bias (W_k.bias) has a zero gradient in exact
# arithmetic: in 2 its gradients must be near zero (compare-grads.py
# --zero); in 3 it is left out (compare-checkpoints.py --exclude), as both
# devices feed rounding noise to Adam, which scales it to unit steps.
# Prints one PASS / FAIL line per stage; exits 1 if any failed.
set -u
cpu=$1 cuda=$2 out=$3 python=${4:-python3}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$out"
. "$here/stages.sh"
compare="$here/../../E2E/Inputs/compare-checkpoints.py"
utils="$here/../../utils"
"$python" - "$out" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(17)
for name in ("src", "tgt_in", "tgt_out"):
    np.save("%s/%s.npy" % (sys.argv[1], name), rng.integers(4, 8000, size=(8, 64), dtype=np.int32))
PY
inputs=(--input "src=$out/src.npy" --input "tgt_in=$out/tgt_in.npy" --input "tgt_out=$out/tgt_out.npy")
# The CPU's own spread: the same steps with other GEMM kernels.
side=sse41
stage "grads-$side" env ONEDNN_MAX_CPU_ISA=SSE41 "$cpu" run train_grad --init 0 --seed 1 \
  "${inputs[@]}" --out-dir "$out/$side" --save-grads "$out/$side/grads.safetensors"
stage "adam20-$side" env ONEDNN_MAX_CPU_ISA=SSE41 "$cpu" run train --init 0 --seed 1 \
  "${inputs[@]}" --out-dir "$out/$side/adam" --repeat 20 --save "$out/$side/adam20.safetensors"
stage "adam20-encode-$side" "$cpu" run encode --load "$out/$side/adam20.safetensors" \
  --input "src=$out/src.npy" --out-dir "$out/$side/adam"
stage "adam20-decode-$side" "$cpu" run decode --load "$out/$side/adam20.safetensors" \
  --input "tgt=$out/tgt_in.npy" --input "memory=$out/$side/adam/memory.npy" \
  --input "src=$out/src.npy" --out-dir "$out/$side/adam"
for side in cpu cuda; do
  exe=$cpu
  [[ $side == cuda ]] && exe=$cuda
  stage "encode-$side" "$exe" run encode --init 0 --input "src=$out/src.npy" --out-dir "$out/$side"
  stage "decode-$side" "$exe" run decode --init 0 --input "tgt=$out/tgt_in.npy" \
    --input "memory=$out/$side/memory.npy" --input "src=$out/src.npy" --out-dir "$out/$side"
  stage "grads-$side" "$exe" run train_grad --init 0 --seed 1 "${inputs[@]}" \
    --out-dir "$out/$side" --save-grads "$out/$side/grads.safetensors"
  stage "adam20-$side" "$exe" run train --init 0 --seed 1 "${inputs[@]}" \
    --out-dir "$out/$side/adam" --repeat 20 --save "$out/$side/adam20.safetensors"
  # The trained parameters' function, evaluated on the CPU for both.
  stage "adam20-encode-$side" "$cpu" run encode --load "$out/$side/adam20.safetensors" \
    --input "src=$out/src.npy" --out-dir "$out/$side/adam"
  stage "adam20-decode-$side" "$cpu" run decode --load "$out/$side/adam20.safetensors" \
    --input "tgt=$out/tgt_in.npy" --input "memory=$out/$side/adam/memory.npy" \
    --input "src=$out/src.npy" --out-dir "$out/$side/adam"
done
stage memory-compare "$python" "$utils/compare-npy.py" "$out/cuda/memory.npy" "$out/cpu/memory.npy" --rtol 1e-5
stage logits-compare "$python" "$utils/compare-npy.py" "$out/cuda/logits.npy" "$out/cpu/logits.npy" --rtol 1e-5
stage loss-compare "$python" "$utils/compare-npy.py" "$out/cuda/loss.npy" "$out/cpu/loss.npy" --rtol 1e-5
stage grads-compare "$python" "$utils/compare-grads.py" --quiet \
  "$out/cuda/grads.safetensors" "$out/cpu/grads.safetensors" --rtol 1e-4 \
  --zero 'W_k\.bias' --spread "$out/sse41/grads.safetensors"
stage adam20-logits-compare "$python" "$utils/compare-npy.py" "$out/cuda/adam/logits.npy" \
  "$out/cpu/adam/logits.npy" --rtol 1e-4 --spread "$out/sse41/adam/logits.npy"
stage adam20-compare "$python" "$compare" \
  "$out/cpu/adam20.safetensors" "$out/cuda/adam20.safetensors" --rtol 1e-2 \
  --exclude 'W_k\.bias'
exit $failed
