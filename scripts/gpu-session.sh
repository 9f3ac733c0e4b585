#!/usr/bin/env bash
#===- scripts/gpu-session.sh - every GPU check and benchmark in one call ---===#
#
#   scripts/gpu-session.sh [SECONDS [CHECK_SECONDS]]   (on the GPU machine)
#
# A device session has minutes, not hours, of GPU time, and every machine
# start costs one or two of them: this runs `scripts/gpu-check.sh run` and
# then `scripts/bench-gpu.sh run` in one call, both under one deadline
# (GPU_DEADLINE, scripts/gpu-budget.sh) SECONDS from now (default 500; give
# the run tool's timeout_s some 40 s more), the checks under a first
# deadline CHECK_SECONDS from now (default 300) so that the benchmarks
# still run when a check hangs. The pack both need comes from
# `scripts/bench-gpu.sh pack` here (it runs gpu-check.sh pack too), carried
# as build-gpu-pack.
#
# The run tool returns at most 8 files: everything the scripts write
# (summaries, logs, each stage's output, no checkpoints) comes back as
# $OUT/results.tgz, the console as $OUT/console.txt, and the two summaries
# as $OUT/summary.txt and $OUT/bench-gpu.txt. Exits 1 when a check failed.
#
#===------------------------------------------------------------------------===#
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACK="$ROOT/build-gpu-pack"
final="${OUT:-$PACK/session}"
mkdir -p "$final"
start=$(date +%s)
total=${1:-500}
check=${2:-300}

{
  echo "== gpu-session: $(date -u), ${total} s in all, checks ${check} s"
  export GPU_CHECK_SANITIZER_SECONDS="${GPU_CHECK_SANITIZER_SECONDS:-60}"
  OUT="$PACK/out-check" GPU_DEADLINE=$((start + check)) \
    "$ROOT/scripts/gpu-check.sh" run
  check_status=$?
  echo "== gpu-check exit $check_status after $(($(date +%s) - start)) s"
  if grep -q '^FALLBACK attention' "$PACK/out-check/summary.txt" 2>/dev/null; then
    export TXRT_CUDA_ATTENTION=simt
    echo "== benchmarks with TXRT_CUDA_ATTENTION=simt (the tensor-core kernels failed)"
  fi
  OUT="$PACK/out-bench" GPU_DEADLINE=$((start + total)) \
    "$ROOT/scripts/bench-gpu.sh" run
  echo "== bench-gpu exit $? after $(($(date +%s) - start)) s"
  exit "$check_status"
} 2>&1 | tee "$final/console.txt"
status=${PIPESTATUS[0]}
cp "$PACK/out-check/summary.txt" "$final/" 2>/dev/null
cp "$PACK/out-bench/bench-gpu.txt" "$final/" 2>/dev/null
(cd "$PACK" && tar czf "$final/results.tgz" --exclude='*.safetensors' \
  --exclude="*.npy" out-check out-bench cuda-translate base-vs-cpu examples-vs-cpu glue-vs-cpu nccl 2>/dev/null)
exit "$status"
