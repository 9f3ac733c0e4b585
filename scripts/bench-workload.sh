#!/usr/bin/env bash
#===- bench-workload.sh - a real workload: the translate spec, 30k words ---===#
#
# Usage: scripts/bench-workload.sh [BUILD_DIR] [STEPS] [FIRST]
# Generates a corpus (scripts/bench_workload.py corpus: 50,000 pairs, 4-40
# words a side, Zipf-distributed words over 30,000 per side), compiles
# examples/translate/model.tx at d_model 256, 4 heads, 3+3 layers, d_ff
# 1024, vocabularies 30004, batch 64, max_len 64, warmup 4000, label
# smoothing 0.1, and trains it for STEPS steps (default 200: both runs
# together take about 10 minutes on 2 busy cores) with
# `train --data ... --batch 64 --min-freq 1`; then the same model in PyTorch
# eager (scripts/bench_workload.py train: the seeds' Transformer, the same
# corpus, batch size, batching procedure and schedule; not the identical
# batches, see there) for the same steps, on THREADS threads
# (TXRT_NUM_THREADS, default 2), one after the other. Prints the target
# tokens/s over the whole run (non-pad tgt_out tokens / the steps' time)
# and the ratio, the median per-step tokens/s of the first FIRST steps
# (default 100) and of the steps after them for both, the losses at the
# end, and the FIGURE lines for scripts/bench_summary.py. BENCH_RT=1 runs
# both under SCHED_RR (chrt -r 10, root).
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-200}
FIRST=${3:-100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-workload"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
. scripts/bench-prologue.sh

[ -f "$OUT/corpus.tsv" ] || "$PY" scripts/bench_workload.py corpus --out "$OUT/corpus.tsv"
"$BUILD/bin/txc" examples/translate/model.tx -D d_model=256 -D heads=4 -D layers=3 -D d_ff=1024 \
  -D src_vocab=30004 -D tgt_vocab=30004 -D batch=64 -D max_len=64 -D warmup=4000 \
  -D label_smoothing=0.1 -o "$OUT/translate"

echo "== txc: $STEPS steps"
start=$(date +%s)
"${RT[@]}" "$OUT/translate" train --data "$OUT/corpus.tsv" --steps "$STEPS" --batch 64 --min-freq 1 \
  --seed 1 --threads "$THREADS" --log "$OUT/txc.csv" --quiet | tee "$OUT/txc.txt"
echo "(txc run: $(( $(date +%s) - start )) s wall, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "== PyTorch eager: $STEPS steps"
start=$(date +%s)
"${RT[@]}" "$PY" scripts/bench_workload.py train --data "$OUT/corpus.tsv" --steps "$STEPS" \
  --threads "$THREADS" --log "$OUT/torch.csv"
echo "(PyTorch run: $(( $(date +%s) - start )) s wall, load average $(cut -d' ' -f1-3 /proc/loadavg))"

"$PY" - "$OUT" "$FIRST" <<'PYEOF'
import csv
import re
import statistics
import sys
out, first = sys.argv[1], int(sys.argv[2])
txc_rows = list(csv.DictReader(open(out + "/txc.csv")))
torch_rows = list(csv.DictReader(open(out + "/torch.csv")))
m = re.search(r"in ([0-9.]+) s \(([0-9.]+) target tokens/s\)", open(out + "/txc.txt").read())
txc_whole = float(m.group(2))
torch_whole = sum(int(r["tokens"]) for r in torch_rows) / sum(float(r["seconds"]) for r in torch_rows)
txc_rate = [float(r["tokens_per_second"]) for r in txc_rows]
torch_rate = [int(r["tokens"]) / float(r["seconds"]) for r in torch_rows]
steps = len(txc_rows)
print("whole run, %d steps: txc %.0f target tokens/s, PyTorch %.0f, ratio %.2fx (target >= 1.5x)"
      % (steps, txc_whole, torch_whole, txc_whole / torch_whole))
for name, rate in (("txc", txc_rate), ("PyTorch", torch_rate)):
    if len(rate) > first:
        a, b = statistics.median(rate[:first]), statistics.median(rate[first:])
        print("%s: median per-step tokens/s, steps 1-%d %.0f, steps %d-%d %.0f (%.2fx of the first)"
              % (name, first, a, first + 1, len(rate), b, b / a))
print("loss at the last step: txc %s, PyTorch %s" % (txc_rows[-1]["loss"], torch_rows[-1]["loss"]))
# One FIGURE line per figure (scripts/bench_summary.py reads them).
print("FIGURE workload.tokens_per_s %.0f tokens/s ratio=%.3f vs=pytorch_eager target=>=1.5"
      % (txc_whole, txc_whole / torch_whole))
if len(txc_rate) > first:
    a, b = statistics.median(txc_rate[:first]), statistics.median(txc_rate[first:])
    print("FIGURE workload.late_vs_early %.0f tokens/s ratio=%.3f vs=steps_1-%d" % (b, b / a, first))
PYEOF
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
