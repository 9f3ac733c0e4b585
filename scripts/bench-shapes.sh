#!/usr/bin/env bash
#===- bench-shapes.sh - base.tx train step vs PyTorch at larger shapes -----===#
#
# Usage: scripts/bench-shapes.sh [BUILD_DIR] [STEPS] [CONFIGS...]
# For each configuration BxTxV (default: B in {8, 32} x T in {64, 256} x
# vocabulary in {8000, 32000}, S = T, base.tx sizes otherwise), compiles
# examples/transformer/base.tx at that size and times one training step
# (forward, backward, Adam): the executable's `run train --repeat STEPS+1`
# (the first run untimed) against the seeds' PyTorch loop
# (scripts/bench_torch.py train, one untimed step, then STEPS), one after
# the other in the same run, on THREADS threads (TXRT_NUM_THREADS, default
# 2). Prints a table of medians with the ratio PyTorch / txc and the
# target tokens per second of both, then the FIGURE lines for
# scripts/bench_summary.py (each configuration; the ratio at the most work
# over the ratio at the least). BENCH_RT=1 runs both sides under SCHED_RR
# (chrt -r 10, root) on a shared machine.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-2}
shift $(( $# > 2 ? 2 : $# ))
CONFIGS=("$@")
[ ${#CONFIGS[@]} -eq 0 ] && CONFIGS=(8x64x8000 8x256x8000 32x64x8000 32x256x8000
                                     8x64x32000 8x256x32000 32x64x32000 32x256x32000)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-shapes"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
. scripts/bench-prologue.sh

: > "$OUT/table.txt"
for config in "${CONFIGS[@]}"; do
  IFS=x read -r B T V <<< "$config"
  exe="$OUT/base-$config"
  "$BUILD/bin/txc" examples/transformer/base.tx -D batch="$B" -D max_len="$T" \
    -D src_vocab="$V" -D tgt_vocab="$V" -o "$exe"
  "$PY" - "$OUT" "$B" "$T" "$V" <<'PYEOF'
import sys
import numpy as np
out, b, t, v = sys.argv[1], *map(int, sys.argv[2:])
rng = np.random.default_rng(0)
for name in ("src", "tgt_in", "tgt_out"):
    np.save("%s/%s.npy" % (out, name), rng.integers(4, v, size=(b, t), dtype=np.int32))
PYEOF
  txc=$(TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$exe" run train --init 0 --input src="$OUT/src.npy" \
          --input tgt_in="$OUT/tgt_in.npy" --input tgt_out="$OUT/tgt_out.npy" --out-dir "$OUT/out" \
          --repeat $((STEPS + 1)) 2>&1 >/dev/null | grep "ran 'train'" | sed -E 's/.*median ([0-9.]+) ms.*/\1/')
  torch=$("${RT[@]}" "$PY" scripts/bench_torch.py train --threads "$THREADS" --batch "$B" \
            --src_len "$T" --tgt_len "$T" --vocab "$V" --repeat "$STEPS" --warmup 1 | awk '{print $2}')
  printf "%s %s %s %s %s\n" "$B" "$T" "$V" "$txc" "$torch" | tee -a "$OUT/table.txt"
  rm -f "$exe"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$PY" - "$OUT/table.txt" "$STEPS" <<'PYEOF'
import sys
rows = [line.split() for line in open(sys.argv[1])]
print("train step, medians of %s steps each (ratio = PyTorch / txc)" % sys.argv[2])
print("| B | T | vocabulary | txc ms | PyTorch ms | ratio | txc tokens/s | PyTorch tokens/s |")
print("|---|---|---|---|---|---|---|---|")
for b, t, v, txc, torch in rows:
    tokens = int(b) * int(t)
    print("| %s | %s | %s | %.0f | %.0f | %.2fx | %.0f | %.0f |" % (
        b, t, v, float(txc), float(torch), float(torch) / float(txc),
        tokens / float(txc) * 1000, tokens / float(torch) * 1000))
# One FIGURE line per figure (scripts/bench_summary.py reads them): each
# configuration, and the ratio at the most work (B x T, then vocabulary)
# over the ratio at the least, which must not fall (target >= 1).
for b, t, v, txc, torch in rows:
    print("FIGURE shapes.%sx%sx%s %.0f ms ratio=%.3f vs=pytorch_eager"
          % (b, t, v, float(txc), float(torch) / float(txc)))
if len(rows) > 1:
    work = sorted(rows, key=lambda r: (int(r[0]) * int(r[1]), int(r[2])))
    ratio = [float(r[4]) / float(r[3]) for r in (work[0], work[-1])]
    print("FIGURE shapes.ratio_most_over_least_work %.3f x vs=%sx%sx%s target=>=1"
          % (ratio[1] / ratio[0], *work[0][:3]))
PYEOF
