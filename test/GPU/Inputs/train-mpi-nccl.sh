#!/usr/bin/env bash
# train-mpi-nccl.sh CPU_EXE CUDA_EXE DATA OUT PYTHON MPIRUN...: data-parallel
# training over NCCL (docs/distributed.md) against the CPU build of the same
# spec (dropout included: a rank's piece draws the masks of its rows in the
# whole batch on the GPU as on the CPU, txrt_cuda_context_set_batch_rows).
#   1. mpirun -np 1 on the GPU: a one-rank NCCL communicator (NCCL_DEBUG=INFO
#      says "Init COMPLETE"), every bucket through ncclAllReduce; 3 steps
#      agree with the CPU's one process within 1e-4 and with the GPU
#      without mpirun within 1e-5 (the sum of one rank is the gradient; the
#      GPU's atomics are the only difference).
#   2. mpirun -np 2: with two GPUs or more, one per rank, the same 3 steps
#      within 1e-4 of the CPU; with one GPU NCCL refuses two ranks on it:
#      every rank ends with one error line naming ncclCommInitRank, and no
#      checkpoint is written.
# Prints one PASS / FAIL line per stage; exits 1 if any failed.
set -u
cpu=$1 cuda=$2 data=$3 out=$4 python=$5
shift 5
mpirun=("$@")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$out"
. "$here/stages.sh"
compare() { # compare A B RTOL
  "$python" "$here/../../E2E/Inputs/compare-checkpoints.py" "$1" "$2" \
    --rtol "$3" --exclude 'W_k\.bias'
}
train=(train --data "$data" --steps 3 --seed 3 --batch 8 --quiet)
stage cpu "$cpu" "${train[@]}" --threads 1 --save "$out/cpu.safetensors" --overwrite
stage gpu "$cuda" "${train[@]}" --save "$out/gpu.safetensors" --overwrite
stage np1 bash -c '"$@" 2>&1 | tee /dev/stderr | grep -q "Init COMPLETE"' _ \
  "${mpirun[@]}" -np 1 -x NCCL_DEBUG=INFO "$cuda" "${train[@]}" \
  --save "$out/np1.safetensors" --overwrite
stage np1-vs-cpu compare "$out/cpu.safetensors" "$out/np1.safetensors" 1e-4
stage np1-vs-gpu compare "$out/gpu.safetensors" "$out/np1.safetensors" 1e-5
gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"
if ((gpus >= 2)); then
  stage np2 "${mpirun[@]}" -np 2 "$cuda" "${train[@]}" \
    --save "$out/np2.safetensors" --overwrite
  stage np2-vs-cpu compare "$out/cpu.safetensors" "$out/np2.safetensors" 1e-4
else
  stage np2-one-gpu-refused bash -c '
    ! "$@" >"'"$out"'/np2.log" 2>&1 &&
      grep "^error: rank [01]: .*ncclCommInitRank" "'"$out"'/np2.log" &&
      test ! -e "'"$out"'/np2.safetensors"' _ \
    "${mpirun[@]}" -np 2 "$cuda" "${train[@]}" --save "$out/np2.safetensors" --overwrite
fi
exit $failed
