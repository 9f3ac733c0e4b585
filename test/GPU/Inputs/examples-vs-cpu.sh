#!/usr/bin/env bash
# examples-vs-cpu.sh BIN OUT [PYTHON]: the model kinds beside the 2017
# encoder-decoder (examples/llama: RMSNorm, rope, grouped-query attention,
# SwiGLU; examples/gpt: a causal LM with GELU; examples/bert: an encoder
# classifier with segments), each compiled for the CPU (BIN/NAME-cpu) and
# with --target=cuda (BIN/NAME-cuda), compute the same function:
#   1. the forward entry's output from the same parameters (--init 7) and
#      inputs (those of test/Examples/NAME-torch.test, padding included),
#      max |gpu - cpu| / max |cpu| <= 1e-5 (test/utils/compare-npy.py);
#   2. the gradients of one step (train_grad, --save-grads) within
#      max(1e-4, 2x the CPU's own spread under ONEDNN_MAX_CPU_ISA=SSE41)
#      (test/utils/compare-grads.py --spread; base-vs-cpu.sh says why);
#      BERT's key bias has a zero gradient in exact arithmetic (--zero);
#   3. 10 Adam steps (train --repeat 10): the forward output of the two
#      checkpoints, both evaluated on the CPU, within the same kind of bound.
# Prints one PASS / FAIL line per stage; exits 1 if any failed.
set -u
bin=$1 out=$2 python=${3:-python3}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
utils="$here/../../utils"
mkdir -p "$out"
. "$here/stages.sh"
printf '5 17 300 42 9 511 77 3 8\n12 400 33 21 0 0 0 0 0\n1 2 3 4 5 6 7 0 0\n' >"$out/ids.txt"
printf '17 300 42 9 511 77 3 8 0\n400 33 21 0 0 0 0 0 0\n2 3 4 5 6 7 0 0 0\n' >"$out/labels.txt"
printf '0 0 0 0 1 1 1 1 1\n0 0 1 1 0 0 0 0 0\n0 0 0 0 0 1 1 0 0\n' >"$out/segments.txt"
"$python" -c "import numpy as n; n.save('$out/classes.npy', n.array([2, 0, 1], dtype=n.int32))"

for name in llama gpt bert; do
  if [[ $name == bert ]]; then
    forward=classify zero=(--zero 'attention\.key\.bias')
    fwd_inputs=(--input "ids=$out/ids.txt" --input "segments=$out/segments.txt")
    train_inputs=("${fwd_inputs[@]}" --input "labels=$out/classes.npy")
  else
    forward=logits zero=()
    fwd_inputs=(--input "ids=$out/ids.txt")
    train_inputs=("${fwd_inputs[@]}" --input "labels=$out/labels.txt")
  fi
  dir="$out/$name"
  for side in cpu sse41 cuda; do
    exe="$bin/$name-cpu" env=()
    [[ $side == cuda ]] && exe="$bin/$name-cuda"
    [[ $side == sse41 ]] && env=(ONEDNN_MAX_CPU_ISA=SSE41)
    mkdir -p "$dir/$side"
    stage "$name-forward-$side" env "${env[@]}" "$exe" run "$forward" --init 7 \
      "${fwd_inputs[@]}" --out-dir "$dir/$side"
    stage "$name-grads-$side" env "${env[@]}" "$exe" run train_grad --init 7 \
      "${train_inputs[@]}" --out-dir "$dir/$side" --save-grads "$dir/$side/grads.safetensors"
    stage "$name-adam10-$side" env "${env[@]}" "$exe" run train --init 7 \
      "${train_inputs[@]}" --repeat 10 --out-dir "$dir/$side/adam" \
      --save "$dir/$side/adam10.safetensors"
    stage "$name-adam10-eval-$side" "$bin/$name-cpu" run "$forward" \
      --load "$dir/$side/adam10.safetensors" "${fwd_inputs[@]}" --out-dir "$dir/$side/adam"
  done
  out_npy=logits.npy
  stage "$name-forward-compare" "$python" "$utils/compare-npy.py" \
    "$dir/cuda/$out_npy" "$dir/cpu/$out_npy" --rtol 1e-5
  stage "$name-grads-compare" "$python" "$utils/compare-grads.py" --quiet \
    "$dir/cuda/grads.safetensors" "$dir/cpu/grads.safetensors" --rtol 1e-4 \
    --spread "$dir/sse41/grads.safetensors" "${zero[@]}"
  stage "$name-adam10-compare" "$python" "$utils/compare-npy.py" \
    "$dir/cuda/adam/$out_npy" "$dir/cpu/adam/$out_npy" --rtol 1e-4 \
    --spread "$dir/sse41/adam/$out_npy"
done
exit $failed
