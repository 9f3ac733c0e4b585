#!/usr/bin/env bash
#===- bench-busy.sh - train step and decoding, quiet vs one busy process -===#
#
# Usage: scripts/bench-busy.sh [BUILD_DIR] [ROUNDS]
# Compiles examples/transformer/base.tx at B=8, S=T=64 and times, on
# TXRT_NUM_THREADS threads (default 2), one training step (`run train
# --repeat 3`, median) and greedy decoding of 32 tokens with the KV cache
# (`bench`, ms/token), each quiet and with one competing CPU-bound process (a shell
# busy loop at the same nice level), alternating for ROUNDS rounds. Prints
# the medians and busy/quiet ratios (target: <= 2.5x), then their FIGURE
# lines for scripts/bench_summary.py. Extra environment
# (OMP_WAIT_POLICY, GOMP_SPINCOUNT, ...) is passed through, so the wait
# policies can be compared by running the script under each.
# On a machine shared with other work, BENCH_RT=1 runs the model and the busy
# loop under SCHED_RR (chrt -r 10), so that only the busy loop competes.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-busy"
mkdir -p "$OUT"
THREADS=${TXRT_NUM_THREADS:-2}
RT=()
[ "${BENCH_RT:-0}" = 1 ] && RT=(chrt -r 10)

"$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 -o "$OUT/base"
/usr/bin/python3 - "$OUT" <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng(0)
for name in ("src", "tgt_in", "tgt_out"):
    np.save("%s/%s.npy" % (sys.argv[1], name), rng.integers(4, 8000, size=(8, 64), dtype=np.int32))
PYEOF

train() {
  TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/base" run train --init 0 --input src="$OUT/src.npy" \
    --input tgt_in="$OUT/tgt_in.npy" --input tgt_out="$OUT/tgt_out.npy" --out-dir "$OUT/out" \
    --repeat 3 2>&1 >/dev/null | sed -nE "s/.*ran 'train'.*median ([0-9.]+) ms.*/\1/p"
}
decode() {
  TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/base" bench --steps 1 --batch 8 --src-len 64 --tgt-len 32 |
    sed -nE 's/^greedy +([0-9.]+) ms\/token.*KV cache.*/\1/p'
}
busy_pid=
start_busy() { "${RT[@]}" bash -c 'while :; do :; done' & busy_pid=$!; }
stop_busy() { kill "$busy_pid"; wait "$busy_pid" 2>/dev/null || true; busy_pid=; }
trap '[ -n "$busy_pid" ] && kill "$busy_pid"' EXIT

: > "$OUT/times.txt"
for round in $(seq "$ROUNDS"); do
  tq=$(train); dq=$(decode)
  start_busy; tb=$(train); db=$(decode); stop_busy
  echo "round $round: train quiet $tq busy $tb ms; decode quiet $dq busy $db ms/token" | tee -a "$OUT/times.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { awk -v c="$1" '{print $c}' "$OUT/times.txt" | median; }
tq=$(col 5); tb=$(col 7); dq=$(col 11); db=$(col 13)
printf "busy machine (%s threads, one busy loop; OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s):\n" \
  "$THREADS" "${OMP_WAIT_POLICY:-unset}" "${GOMP_SPINCOUNT:-unset (the executable sets 1000)}"
printf "  train step: quiet %.0f ms, busy %.0f ms, %.2fx (target <= 2.5x)\n" "$tq" "$tb" "$(echo "$tb / $tq" | bc -l)"
printf "  greedy decode: quiet %.3f ms/token, busy %.3f ms/token, %.2fx (target <= 2.5x)\n" "$dq" "$db" "$(echo "$db / $dq" | bc -l)"
# One FIGURE line per figure (scripts/bench_summary.py reads them).
printf "FIGURE busy.train %.1f ms ratio=%.3f vs=quiet target=<=2.5\n" "$tb" "$(echo "$tb / $tq" | bc -l)"
printf "FIGURE busy.decode %.3f ms ratio=%.3f vs=quiet target=<=2.5\n" "$db" "$(echo "$db / $dq" | bc -l)"
