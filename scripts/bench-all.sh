#!/usr/bin/env bash
#===- bench-all.sh - every issue-18 figure with its ratio, in one run -----===#
#
# Usage: scripts/bench-all.sh [BUILD_DIR]
# Runs the benchmark scripts one after the other, each one's whole output
# (stdout and stderr) tee'd to BUILD_DIR/bench-all/<part>.log, then
# scripts/bench_summary.py over the logs: one table of every FIGURE line
# (value, ratio and baseline, target, met / NOT met), the CPU and the load
# averages, also written to BUILD_DIR/bench-all/summary.txt. The parts:
#   train     bench-train.sh     train step vs PyTorch eager, step efficiency
#                                against its matmul-bound limit, gemm:jit
#                                fallbacks, greedy ms/token, peak memory of
#                                `bench` beside the parameter + gradient +
#                                moment floor
#   onnx      bench-onnx.sh      forward vs ONNX Runtime (needs
#                                bench/onnx/node_modules, else it prints a
#                                skip line and no figure)
#   decode    bench-decode.sh    greedy and beam decoding vs PyTorch with a
#                                KV cache, batch 1, 8, 32
#   busy      bench-busy.sh      train step and decoding with one busy
#                                process vs quiet
#   compile   bench-compile.sh   base.tx compile time; time and memory per
#                                layer of examples/copy against depth
#   shapes    bench-shapes.sh    train step vs PyTorch, B x T x vocabulary
#   workload  bench-workload.sh  the 30k-vocabulary translate workload vs
#                                PyTorch over a run
#   steady    bench-steady.sh    tokens/s late vs early, denormals
# Environment:
#   BENCH_ALL=full (default)  the issue's run lengths: workload 2000 steps,
#                   steadiness 2500 steps, compile up to 128 layers, all
#                   eight shapes, 3 rounds where the scripts alternate.
#                   HOURS on a 2-core machine (the workload and steadiness
#                   runs alone take 1-3 hours each).
#   BENCH_ALL=quick  minutes: one round, one or two steps each, decoding
#                   16 tokens without beam search (unless BEAM is set), 2
#                   shapes, compile at 6 / 12 / 24 layers, workload 60
#                   steps, steadiness 60 steps (late = after step 40).
#                   Checks the plumbing; its figures are not the issue's
#                   measurements, and the table's header says so.
#   BENCH_ALL_SKIP="onnx busy"  parts not to run (a table row says so).
#   TXRT_NUM_THREADS, BENCH_RT and the scripts' own variables pass through.
# A part that fails keeps its output in its log, gets a FAILED row, and the
# others still run; the exit status is 1 if any part failed, 2 on a bad
# BENCH_ALL or BENCH_ALL_SKIP.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
usage() { sed -n '4,/^#===-/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODE=${BENCH_ALL:-full}
PARTS=(train onnx decode busy compile shapes workload steady)

# Each part's arguments after BUILD_DIR, per mode (read through ARGS; the
# train step needs 2 steps at least: `run --repeat 1` prints no median).
# shellcheck disable=SC2034
declare -A QUICK=(
  [train]="2 1" [onnx]="2 1" [decode]="1 16" [busy]="1" [compile]="6 12 24"
  [shapes]="1 8x64x8000 8x64x32000" [workload]="60 30" [steady]="60 20 40")
# shellcheck disable=SC2034
declare -A FULL=(
  [train]="5 3" [onnx]="10 3" [decode]="2 64" [busy]="3" [compile]="6 24 96 128"
  [shapes]="2" [workload]="2000 200" [steady]="2500 200 2000")
case "$MODE" in
  quick) declare -n ARGS=QUICK ;;
  full) declare -n ARGS=FULL ;;
  *) echo "error: BENCH_ALL=$MODE: expected quick or full (default)" >&2; exit 2 ;;
esac
declare -A SKIP=()
for part in ${BENCH_ALL_SKIP:-}; do
  [ -n "${ARGS[$part]+set}" ] ||
    { echo "error: BENCH_ALL_SKIP names '$part', not a part (${PARTS[*]})" >&2; exit 2; }
  SKIP[$part]=1
done
[ -x "$BUILD/bin/txc" ] || { echo "error: $BUILD/bin/txc not found (build it first)" >&2; exit 2; }

LOGS="$BUILD/bench-all"
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS/summary.txt"
MAIN="$LOGS/bench-all.log"
# shellcheck disable=SC2034 # read by bench-prologue.sh
THREADS=${TXRT_NUM_THREADS:-2}
{
  . scripts/bench-prologue.sh
  if [ "$MODE" = quick ]; then
    echo "NOTE quick (BENCH_ALL=quick): not the issue's run lengths"
  else
    echo "NOTE full: the issue's run lengths"
  fi
} | tee "$MAIN"

failed=0
logs=("$MAIN")
for part in "${PARTS[@]}"; do
  if [ -n "${SKIP[$part]:-}" ]; then
    echo "PART $part skipped (BENCH_ALL_SKIP)" | tee -a "$MAIN"
    continue
  fi
  log="$LOGS/$part.log"
  read -r -a args <<< "${ARGS[$part]}"
  echo "== $part: scripts/bench-$part.sh $BUILD ${args[*]} (log $log)" | tee -a "$MAIN"
  start=$(date +%s)
  set +e
  env=()
  if [ "$MODE" = quick ] && [ "$part" = decode ]; then env=(BEAM="${BEAM:-0}"); fi
  env "${env[@]}" scripts/"bench-$part.sh" "$BUILD" "${args[@]}" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  logs+=("$log")
  if [ "$rc" = 0 ]; then
    echo "PART $part ok ($(( $(date +%s) - start )) s)" | tee -a "$MAIN"
  else
    echo "PART $part FAILED exit $rc after $(( $(date +%s) - start )) s (see $log)" | tee -a "$MAIN"
    failed=1
  fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$MAIN"

echo
/usr/bin/python3 scripts/bench_summary.py "${logs[@]}" 2>&1 | tee "$LOGS/summary.txt" || exit 2
exit "$failed"
