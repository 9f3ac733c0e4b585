#!/usr/bin/env bash
#===- bench-onnx.sh - base.tx forward: txc executable vs ONNX Runtime (CPU) -===#
#
# Usage: scripts/bench-onnx.sh [BUILD_DIR] [REPEAT] [ROUNDS]
# One-time setup: (cd bench/onnx && npm install --ignore-scripts), which puts
# onnxruntime-node (its Linux x64 libonnxruntime.so ships in the package)
# under bench/onnx/node_modules. Without it the script prints a skip line
# and exits 0. NODE names the node binary (default: node on the PATH).
#
# The PyTorch twin of base.tx (test/golden/seed_model.py, base config,
# vocabulary 8000, eval mode) is exported with torch.onnx.export
# (scripts/bench_torch.py onnx: model.onnx, weights.safetensors, src/tgt.npy
# at B=8, S=T=64 with padded rows, PyTorch's logits). The same weights go
# into the txc executable (`run ... --load weights.safetensors`), the same
# inputs into both; both run the forward (encode + teacher-forced decode
# over the full target) on THREADS threads (TXRT_NUM_THREADS, default 2;
# ONNX Runtime: intra-op THREADS, inter-op 1). ROUNDS alternating rounds of
# REPEAT timed runs each (medians per round, then the median of the rounds);
# prints the logits' max abs difference against PyTorch for both, the ms
# per forward and the ratio (target >= 1.3x), then its FIGURE line for
# scripts/bench_summary.py. BENCH_RT=1 runs both sides under SCHED_RR
# (chrt -r 10, root) on a shared machine.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
REPEAT=${2:-10}
ROUNDS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
NODE=${NODE:-node}

if ! (cd bench/onnx && "$NODE" -e "require('onnxruntime-node')") > /dev/null 2>&1; then
  echo "bench-onnx: skipped: onnxruntime-node does not load with $NODE (install it once: cd bench/onnx && npm install --ignore-scripts)"
  exit 0
fi
OUT="$BUILD/bench-onnx"
mkdir -p "$OUT"
. scripts/bench-prologue.sh
echo "onnxruntime-node $(cd bench/onnx && "$NODE" -e "console.log(require('onnxruntime-node').env.versions.node)")"

echo "== export (PyTorch $("$PY" -c 'import torch; print(torch.__version__)'))"
"$PY" scripts/bench_torch.py onnx --out "$OUT" --threads "$THREADS" 2>/dev/null
"$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 -o "$OUT/base"

median() { sed -E 's/.*median ([0-9.]+) ms.*/\1/'; }
: > "$OUT/rounds.txt"
for round in $(seq "$ROUNDS"); do
  enc=$(TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/base" run encode --load "$OUT/weights.safetensors" \
          --input src="$OUT/src.npy" --out-dir "$OUT/txc" --repeat "$REPEAT" 2>&1 >/dev/null | grep "ran 'encode'")
  dec=$(TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/base" run decode --load "$OUT/weights.safetensors" \
          --input tgt="$OUT/tgt.npy" --input memory="$OUT/txc/memory.npy" --input src="$OUT/src.npy" \
          --out-dir "$OUT/txc" --repeat "$REPEAT" 2>&1 >/dev/null | grep "ran 'decode'")
  t=$(echo "$(echo "$enc" | median) + $(echo "$dec" | median)" | bc -l)
  o=$("${RT[@]}" "$NODE" bench/onnx/forward.js "$OUT/model.onnx" "$OUT" "$REPEAT" "$THREADS" | awk '{print $2}')
  printf "round %d: txc %.1f ms (encode %s + decode %s), ONNX Runtime %.1f ms\n" "$round" "$t" \
    "$(echo "$enc" | median)" "$(echo "$dec" | median)" "$o" | tee -a "$OUT/rounds.txt"
done

"$PY" - "$OUT" <<'PYEOF'
import sys
import numpy as np
out = sys.argv[1]
torch_logits = np.load(out + "/logits.npy")
for name, path in (("txc", "/txc/logits.npy"), ("ONNX Runtime", "/ort_logits.npy")):
    got = np.load(out + path)
    print("logits vs PyTorch, %s: shape %s, max abs diff %.3g (largest |logit| %.3g)"
          % (name, list(got.shape), np.abs(got - torch_logits).max(), np.abs(torch_logits).max()))
PYEOF
mid() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
txc_ms=$(sed -E 's/.*txc ([0-9.]+) ms.*/\1/' "$OUT/rounds.txt" | mid)
ort_ms=$(sed -E 's/.*ONNX Runtime ([0-9.]+) ms.*/\1/' "$OUT/rounds.txt" | mid)
printf "forward (encode + decode), base.tx B=8 S=T=64 vocabulary 8000, median of %d rounds: txc %.1f ms, ONNX Runtime %.1f ms, speedup %.2fx (target >= 1.3x)\n" \
  "$ROUNDS" "$txc_ms" "$ort_ms" "$(echo "$ort_ms / $txc_ms" | bc -l)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# One FIGURE line per figure (scripts/bench_summary.py reads them).
printf "FIGURE forward.vs_onnx %.1f ms ratio=%.3f vs=onnxruntime target=>=1.3\n" \
  "$txc_ms" "$(echo "$ort_ms / $txc_ms" | bc -l)"
