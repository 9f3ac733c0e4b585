#!/usr/bin/env bash
#===- bench-fusion.sh - base.tx fused vs --no-fuse, in one run ------------===#
#
# Usage: scripts/bench-fusion.sh [BUILD_DIR] [REPEAT] [ROUNDS]
# Compiles examples/transformer/base.tx at B=8, S=T=64 twice (all fusion
# passes, and --no-fuse), then, alternating between the two executables for
# ROUNDS rounds: the forward pass (encode + decode, REPEAT runs each) and the
# training step (REPEAT/2 runs); prints the medians of the per-round medians,
# the ratios, and each entry's planned activation arena.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
REPEAT=${2:-10}
ROUNDS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-fusion"
mkdir -p "$OUT"
export TXRT_NUM_THREADS=${TXRT_NUM_THREADS:-2}
for v in fused unfused; do
  flag=()
  [ "$v" = unfused ] && flag=(--no-fuse)
  "$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 "${flag[@]}" -o "$OUT/$v"
done
/usr/bin/python3 - "$OUT" <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng(0)
out = sys.argv[1]
for name in ("src", "tgt", "tgt_out"):
    np.save("%s/%s.npy" % (out, name), rng.integers(4, 8000, size=(8, 64), dtype=np.int32))
PYEOF
median() { sed -E 's/.*median ([0-9.]+) ms.*/\1/'; }
: > "$OUT/times.txt"
for round in $(seq "$ROUNDS"); do
  for v in fused unfused; do
    exe="$OUT/$v"
    enc=$("$exe" run encode --init 0 --input src="$OUT/src.npy" --out-dir "$OUT/$v.out" \
            --repeat "$REPEAT" 2>&1 >/dev/null | grep "ran 'encode'" | median)
    dec=$("$exe" run decode --init 0 --input tgt="$OUT/tgt.npy" --input memory="$OUT/$v.out/memory.npy" \
            --input src="$OUT/src.npy" --out-dir "$OUT/$v.out" --repeat "$REPEAT" 2>&1 >/dev/null \
            | grep "ran 'decode'" | median)
    step=$("$exe" run train --init 0 --input src="$OUT/src.npy" --input tgt_in="$OUT/tgt.npy" \
             --input tgt_out="$OUT/tgt_out.npy" --out-dir "$OUT/$v.out" --repeat $((REPEAT / 2 + 1)) \
             2>&1 >/dev/null | grep "ran 'train'" | median)
    echo "$v $(echo "$enc + $dec" | bc -l) $step" | tee -a "$OUT/times.txt"
  done
done
/usr/bin/python3 - "$OUT/times.txt" <<'PYEOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
med = {v: [statistics.median(float(r[i]) for r in rows if r[0] == v) for i in (1, 2)]
       for v in ("fused", "unfused")}
for i, what in enumerate(("forward (encode + decode)", "train step")):
    f, u = med["fused"][i], med["unfused"][i]
    print("%-26s fused %8.1f ms   --no-fuse %8.1f ms   speedup %.2fx" % (what, f, u, u / f))
PYEOF
for v in fused unfused; do
  echo "== $v: activation arenas"
  "$OUT/$v" info | grep -E "^  [a-z_]+\(|activation arena" | paste - - \
    | sed -E 's/^  ([a-z_]+)\(.*activation arena ([0-9.]+ [KMG]iB).*/  \1: \2/'
done
