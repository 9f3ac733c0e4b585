#!/usr/bin/env bash
#===- bench-steady.sh - is training as fast after thousands of steps? ------===#
#
# Usage: scripts/bench-steady.sh [BUILD_DIR] [STEPS] [FIRST] [LATE]
# Issue 18's "steady over long runs": trains the real-workload model of
# bench-workload.sh (examples/translate/model.tx at d_model 256, 3+3 layers,
# vocabularies of 30,004 words, batch 64, warmup 4000; the same generated
# corpus of 50,000 Zipf-distributed pairs, so rare embedding rows get
# Adam updates seldom and their moments decay) with txc alone for STEPS
# steps (default 2500) on THREADS threads (TXRT_NUM_THREADS, default 2),
# then prints the median per-step target tokens/s of steps 1..FIRST
# (default 200) and of steps after LATE (default 2000), their ratio
# (target: >= 0.95), and how many of the checkpoint's stored values are
# denormal floats (per tensor kind: parameters, exp_avg, exp_avg_sq), the
# cause of the decay the issue measured; then the FIGURE lines for
# scripts/bench_summary.py. TXRT_DENORMALS (runtime: moments
# by default, keep, flush) passes through, so `TXRT_DENORMALS=keep`
# shows the run without the fix. BENCH_RT=1 runs under SCHED_RR (root).
# At 2 threads on a 2-core Zen 4 a step takes ~0.8 s: 2500 steps ~35 min.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-2500}
FIRST=${3:-200}
LATE=${4:-2000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-steady"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
[ "$STEPS" -gt "$LATE" ] || { echo "bench-steady.sh: STEPS ($STEPS) must exceed LATE ($LATE)" >&2; exit 2; }
. scripts/bench-prologue.sh
echo "denormal mode: TXRT_DENORMALS=${TXRT_DENORMALS:-moments (default)}"

[ -f "$OUT/corpus.tsv" ] || "$PY" scripts/bench_workload.py corpus --out "$OUT/corpus.tsv"
"$BUILD/bin/txc" examples/translate/model.tx -D d_model=256 -D heads=4 -D layers=3 -D d_ff=1024 \
  -D src_vocab=30004 -D tgt_vocab=30004 -D batch=64 -D max_len=64 -D warmup=4000 \
  -D label_smoothing=0.1 -o "$OUT/translate"

start=$(date +%s)
"${RT[@]}" "$OUT/translate" train --data "$OUT/corpus.tsv" --steps "$STEPS" --batch 64 --min-freq 1 \
  --seed 1 --threads "$THREADS" --log "$OUT/txc.csv" --save "$OUT/steady.safetensors" --overwrite --quiet |
  tee "$OUT/txc.txt"
echo "(run: $(( $(date +%s) - start )) s wall, load average $(cut -d' ' -f1-3 /proc/loadavg))"

"$PY" - "$OUT" "$FIRST" "$LATE" <<'PYEOF'
import csv
import json
import statistics
import struct
import sys

import numpy as np

out, first, late = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = list(csv.DictReader(open(out + "/txc.csv")))
rate = {int(r["step"]): float(r["tokens_per_second"]) for r in rows}
early = [v for s, v in rate.items() if s <= first]
after = [v for s, v in rate.items() if s > late]
a, b = statistics.median(early), statistics.median(after)
print("median per-step target tokens/s: steps 1-%d %.0f, steps %d-%d %.0f: %.3fx of the first "
      "(target >= 0.95: %s)" % (first, a, late + 1, max(rate), b, b / a,
                                "met" if b / a >= 0.95 else "NOT met"))
for lo, hi in ((1, 500), (501, 1000), (1001, 1500), (1501, 2000), (2001, 2500), (2501, 10**9)):
    part = [v for s, v in rate.items() if lo <= s <= hi]
    if part:
        print("  steps %d-%d: median %.0f" % (lo, min(hi, max(rate)), statistics.median(part)))

with open(out + "/steady.safetensors", "rb") as f:
    size = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(size))
    base = 8 + size
    kinds = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        f.seek(base + t["data_offsets"][0])
        x = np.frombuffer(f.read(t["data_offsets"][1] - t["data_offsets"][0]), dtype=np.float32)
        kind = name.rsplit(".", 1)[-1] if name.rsplit(".", 1)[-1] in ("exp_avg", "exp_avg_sq") else "parameters"
        n, d = kinds.get(kind, (0, 0))
        kinds[kind] = (n + x.size, d + int(np.count_nonzero((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny))))
for kind, (n, d) in sorted(kinds.items()):
    print("denormal values in the checkpoint's %s: %d of %d (%.3f %%)" % (kind, d, n, 100.0 * d / n))
# One FIGURE line per figure (scripts/bench_summary.py reads them).
print("FIGURE steady.late_vs_early %.0f tokens/s ratio=%.3f vs=steps_1-%d target=>=0.95" % (b, b / a, first))
for kind, (n, d) in sorted(kinds.items()):
    print("FIGURE steady.denormals.%s %d values" % (kind, d))
PYEOF
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
