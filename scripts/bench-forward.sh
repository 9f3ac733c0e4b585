#!/usr/bin/env bash
#===- bench-forward.sh - base.tx forward: txc executable vs PyTorch eager --===#
#
# Usage: scripts/bench-forward.sh [BUILD_DIR] [REPEAT]
# Compiles examples/transformer/base.tx at B=8, S=T=64 (vocabulary 8000),
# times encode + decode of the executable (--repeat, min and median after the
# first run) and the seeds' PyTorch model in eval mode on the same shapes
# (Debian python3-torch, 2 threads), in one run, and prints the ratio.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
REPEAT=${2:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-forward"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}

echo "== compile"
/usr/bin/time -f "compile base.tx to an executable: %e s" \
  "$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 -o "$OUT/base"
"$PY" - "$OUT" <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng(0)
out = sys.argv[1]
np.save(out + "/src.npy", rng.integers(1, 8000, size=(8, 64), dtype=np.int32))
np.save(out + "/tgt.npy", rng.integers(1, 8000, size=(8, 64), dtype=np.int32))
PYEOF

median() { sed -E 's/.*median ([0-9.]+) ms.*/\1/'; }
minimum() { sed -E 's/.*min ([0-9.]+) ms.*/\1/'; }
echo "== txc executable (TXRT_NUM_THREADS=$THREADS, $REPEAT runs)"
enc=$(TXRT_NUM_THREADS=$THREADS "$OUT/base" run encode --init 0 --input src="$OUT/src.npy" \
        --out-dir "$OUT" --repeat "$REPEAT" 2>&1 >/dev/null | grep "ran 'encode'")
echo "$enc"
dec=$(TXRT_NUM_THREADS=$THREADS "$OUT/base" run decode --init 0 --input tgt="$OUT/tgt.npy" \
        --input memory="$OUT/memory.npy" --input src="$OUT/src.npy" --out-dir "$OUT" \
        --repeat "$REPEAT" 2>&1 >/dev/null | grep "ran 'decode'")
echo "$dec"
txc_ms=$(echo "$(echo "$enc" | median) + $(echo "$dec" | median)" | bc -l)
txc_min=$(echo "$(echo "$enc" | minimum) + $(echo "$dec" | minimum)" | bc -l)

echo "== PyTorch eager ($THREADS threads)"
torch=$("$PY" scripts/bench_torch.py forward --threads "$THREADS" --repeat "$REPEAT")
torch_ms=$(echo "$torch" | awk '{print $2}')
torch_min=$(echo "$torch" | awk '{print $3}')
printf "forward (encode + decode), B=8 S=T=64, base config, medians: txc %.1f ms, PyTorch %.1f ms, speedup %.2fx\n" \
  "$txc_ms" "$torch_ms" "$(echo "$torch_ms / $txc_ms" | bc -l)"
printf "                                             fastest runs: txc %.1f ms, PyTorch %.1f ms, speedup %.2fx\n" \
  "$txc_min" "$torch_min" "$(echo "$torch_min / $txc_min" | bc -l)"
"$OUT/base" info | grep -A6 "^entries"
