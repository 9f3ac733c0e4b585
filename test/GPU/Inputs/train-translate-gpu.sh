#!/usr/bin/env bash
# train-translate-gpu.sh CPU_EXE CUDA_EXE DATA OUT [PYTHON]: the translate
# example on the GPU against the CPU build of the same spec (docs/cuda.md).
#   1. `info` lists the CUDA device.
#   2. One train step from the same initialization (--seed 1) on each
#      device: every tensor of the two checkpoints (parameters, Adam's
#      moments) within 1e-4 norm-wise relative error.
#   3. The parameter arena stays on the GPU (docs/cuda.md, "Memory"): 20
#      steps with --ema and a save every 10 copy it in once (`train
#      --verbose` counts the copies), the --ema average is updated there 20
#      times and comes back only for the two saves, and a run resumed at
#      step 10 (the checkpoint copied in once more) ends where the
#      uninterrupted run does (1e-4: the embedding gradient's atomicAdd is
#      not bitwise repeatable).
#   4. CUDA graphs (docs/cuda.md "CUDA graphs"): 20 steps with the train
#      steps captured and replayed (`train --verbose` counts a capture and
#      replays) end where 20 steps with TXRT_CUDA_GRAPHS=0 do (1e-4, as 3).
#   5. Decoding steps as CUDA graphs: `bench --decode-only` (5 rounds of
#      the same greedy batch on a device, beam search sentence by sentence
#      and batched) captures and replays each position's step, and its
#      greedy and beam tokens are those of the same run with
#      TXRT_CUDA_GRAPHS=0, byte for byte.
#   6. 600 steps on the GPU (the README's recipe): all eight pairs translate
#      exactly, on the GPU and by the CPU executable from the GPU's
#      checkpoint (a GPU checkpoint resumes on the CPU).
# The key projections' bias (W_k.bias) is left out of 2 and 3: its gradient
# is zero in exact arithmetic, so its moments and values are rounding noise
# scaled up by Adam (compare-checkpoints.py --exclude; the first GPU run found
# every other tensor within the bounds and these 1.75 and 4.95 apart).
# Prints one PASS / FAIL line per stage; exits 1 if any failed.
set -u
cpu=$1 cuda=$2 data=$3 out=$4 python=${5:-python3}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$out"
. "$here/stages.sh"
compare="$here/../../E2E/Inputs/compare-checkpoints.py"
exact() { # exact EXE CHECKPOINT: "exact N of 8"
  cut -f1 "$data" | "$1" translate --load "$2" >"$out/translated.txt" &&
    cut -f2 "$data" | paste - "$out/translated.txt" |
    awk -F'\t' '$1 == $2 { n++ } END { print "exact", n + 0, "of", NR; exit n != NR }'
}
stage info bash -c "'$cuda' info | grep -A4 '^cuda devices' && '$cuda' info | grep -q '^  cuda:0 '"
stage step1-cpu "$cpu" train --data "$data" --steps 1 --seed 1 --threads 1 \
  --save "$out/cpu1.safetensors" --overwrite --quiet
stage step1-gpu "$cuda" train --data "$data" --steps 1 --seed 1 \
  --save "$out/gpu1.safetensors" --overwrite --quiet
stage step1-compare "$python" "$compare" \
  "$out/cpu1.safetensors" "$out/gpu1.safetensors" --rtol 1e-4 --exclude 'W_k\.bias'
stage resident-gpu bash -c "'$cuda' train --data '$data' --steps 20 --seed 1 \
  --ema 0.9 --every 10 --save '$out/gpu20.safetensors' --overwrite --quiet --verbose \
  >'$out/resident.log' 2>&1 &&
  grep 'parameter arena .* copied in 1x' '$out/resident.log' &&
  grep 'weight average (--ema, .*): updated on the device 20x, copied in 1x, back 2x' \
    '$out/resident.log'"
stage resume10-gpu "$cuda" train --data "$data" --steps 10 --seed 1 \
  --ema 0.9 --save "$out/gpu10.safetensors" --overwrite --quiet
stage resume20-gpu bash -c "'$cuda' train --data '$data' --steps 20 \
  --resume '$out/gpu10.safetensors' --save '$out/gpu20r.safetensors' --overwrite \
  --quiet --verbose 2>&1 | grep 'parameter arena .* copied in 1x'"
stage resume-compare "$python" "$compare" \
  "$out/gpu20.safetensors" "$out/gpu20r.safetensors" --rtol 1e-4 --exclude 'W_k\.bias'
stage graphs-gpu bash -c "'$cuda' train --data '$data' --steps 20 --seed 1 \
  --save '$out/graphs20.safetensors' --overwrite --quiet --verbose >'$out/graphs.log' 2>&1 &&
  grep -E 'CUDA graphs: [1-9][0-9]* captured, [1-9][0-9]* steps replayed' \
    '$out/graphs.log'"
stage direct-gpu bash -c "TXRT_CUDA_GRAPHS=0 '$cuda' train --data '$data' \
  --steps 20 --seed 1 --save '$out/direct20.safetensors' --overwrite --quiet --verbose \
  2>&1 | grep 'CUDA graphs: 0 captured, 0 steps replayed'"
stage graphs-compare "$python" "$compare" \
  "$out/direct20.safetensors" "$out/graphs20.safetensors" --rtol 1e-4 --exclude 'W_k\.bias'
decodeBench() { # decodeBench NAME [ENV...]: bench's tokens to OUT/NAME-*.npy
  local name=$1
  shift
  env "$@" "$cuda" bench --steps 1 --batch 4 --src-len 16 --tgt-len 16 \
    --decode-only --beam 2 --decode-out "$out/$name-greedy.npy" \
    --beam-out "$out/$name-beam.npy"
}
stage decode-graphs-gpu bash -c "$(declare -f decodeBench); cuda='$cuda' out='$out'
  decodeBench decode-graphs | tee '$out/decode-graphs.log' &&
  grep -E 'CUDA graphs: [1-9][0-9]* captured, [1-9][0-9]* steps replayed' \
    '$out/decode-graphs.log'"
stage decode-direct-gpu bash -c "$(declare -f decodeBench); cuda='$cuda' out='$out'
  decodeBench decode-direct TXRT_CUDA_GRAPHS=0 | grep 'CUDA graphs: 0 captured'"
stage decode-graphs-compare bash -c "cmp '$out/decode-graphs-greedy.npy' \
  '$out/decode-direct-greedy.npy' && cmp '$out/decode-graphs-beam.npy' \
  '$out/decode-direct-beam.npy'"
stage train600-gpu "$cuda" train --data "$data" --steps 600 --seed 1 \
  --save "$out/gpu600.safetensors" --overwrite --quiet
stage exact-gpu exact "$cuda" "$out/gpu600.safetensors"
stage exact-cpu-from-gpu exact "$cpu" "$out/gpu600.safetensors"
exit $failed
