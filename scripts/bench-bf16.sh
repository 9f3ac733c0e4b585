#!/usr/bin/env bash
#===- bench-bf16.sh - base.tx train step: fp32, bf16, PyTorch autocast ----===#
#
# Usage: scripts/bench-bf16.sh [BUILD_DIR] [STEPS] [ROUNDS]
# Compiles examples/transformer/base.tx at B=8, S=T=64 (vocabulary 8000)
# twice, with --precision=fp32 and --precision=bf16, and in one run on the
# same machine and thread count (TXRT_NUM_THREADS, default 2) times:
#   - one training step (forward, backward, Adam) of each executable
#     (`run train --repeat STEPS`) and of the seeds' PyTorch loop under
#     torch.autocast(cpu, bfloat16) (scripts/bench_torch.py --autocast bf16),
#     alternating for ROUNDS rounds;
#   - the bare oneDNN matmuls of the step's linears (forward, data and
#     weight gradients: every product tx-precision runs in bf16), in f32 and
#     in bf16 (scripts/bench-bf16-matmul.cpp): the limit a step could reach
#     if all else were free, and the step's efficiency against it;
#   - inference in both precisions, alternating for ROUNDS rounds: the
#     forward (encode + decode over the full target, B=8, S=T=64: `run
#     encode` and `run decode --repeat STEPS`) and greedy decoding of 64
#     tokens with the KV cache at batch 1 and batch 8 (`bench --decode-only`),
#     ms/token.
# Medians, then one FIGURE line per figure (scripts/bench_summary.py);
# the CPU's name and its bf16 instructions are printed first, then
# the machine line (load average) of scripts/bench-prologue.sh; BENCH_RT=1
# runs every timed command at real-time priority (chrt, root).
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-5}
ROUNDS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-bf16"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
if ! [ "$STEPS" -ge 2 ] 2>/dev/null; then
  echo "bench-bf16.sh: error: STEPS must be a number >= 2 (the first call is a warm-up; got '$STEPS')" >&2
  exit 2
fi

cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
flags=$(grep -m1 "^flags" /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx512_bf16|amx_bf16)$' | tr '\n' ' ')
echo "== CPU: $cpu; bf16 instructions: ${flags:-none}; $THREADS threads"
. scripts/bench-prologue.sh

echo "== compile"
"$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 -o "$OUT/base-fp32"
"$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 --precision=bf16 -o "$OUT/base-bf16"
c++ -O2 -std=c++17 scripts/bench-bf16-matmul.cpp -ldnnl -o "$OUT/matmul"

"$PY" - "$OUT" <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng(0)
out = sys.argv[1]
for name in ("src", "tgt_in", "tgt_out"):
    np.save("%s/%s.npy" % (out, name), rng.integers(4, 8000, size=(8, 64), dtype=np.int32))
PYEOF

step_ms() { # executable -> median ms of `run train --repeat STEPS`
  TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$1" run train --init 0 --input src="$OUT/src.npy" \
    --input tgt_in="$OUT/tgt_in.npy" --input tgt_out="$OUT/tgt_out.npy" --out-dir "$OUT/out" \
    --repeat "$STEPS" 2>&1 >/dev/null | grep "ran 'train'" | sed -E 's/.*median ([0-9.]+) ms.*/\1/'
}
: > "$OUT/train.txt"
for round in $(seq "$ROUNDS"); do
  f=$(step_ms "$OUT/base-fp32")
  b=$(step_ms "$OUT/base-bf16")
  p=$("${RT[@]}" "$PY" scripts/bench_torch.py train --autocast bf16 --threads "$THREADS" --repeat "$STEPS" | awk '{print $2}')
  echo "round $round: fp32 $f ms, bf16 $b ms, PyTorch autocast $p ms" | tee -a "$OUT/train.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "== inference: forward (encode + decode over the full target) and greedy decoding"
forward_ms() { # executable -> median ms of encode plus median ms of decode
  local dir="$OUT/forward-$(basename "$1")" enc dec
  mkdir -p "$dir"
  enc=$(TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$1" run encode --init 0 --input src="$OUT/src.npy" \
    --out-dir "$dir" --repeat "$STEPS" 2>&1 >/dev/null | grep "ran 'encode'" | sed -E 's/.*median ([0-9.]+) ms.*/\1/')
  dec=$(TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$1" run decode --init 0 --input tgt="$OUT/tgt_in.npy" \
    --input memory="$dir/memory.npy" --input src="$OUT/src.npy" --out-dir "$dir" \
    --repeat "$STEPS" 2>&1 >/dev/null | grep "ran 'decode'" | sed -E 's/.*median ([0-9.]+) ms.*/\1/')
  echo "$enc + $dec" | bc -l
}
greedy_ms() { # executable batch -> ms/token of greedy decoding with the KV cache
  TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$1" bench --decode-only --batch "$2" --src-len 64 --tgt-len 64 |
    sed -nE 's/^greedy +([0-9.]+) ms\/token.*KV cache.*/\1/p'
}
: > "$OUT/inference.txt"
for round in $(seq "$ROUNDS"); do
  line="round $round:"
  for p in fp32 bf16; do
    line="$line $p forward $(forward_ms "$OUT/base-$p") ms"
    line="$line $p greedy1 $(greedy_ms "$OUT/base-$p" 1) ms/token"
    line="$line $p greedy8 $(greedy_ms "$OUT/base-$p" 8) ms/token"
  done
  echo "$line" | tee -a "$OUT/inference.txt"
done
inference() { # precision measure -> the median over the rounds
  sed -E "s/.* $1 $2 ([0-9.]+) ms.*/\1/" "$OUT/inference.txt" | median
}
fp32=$(sed -E 's/.*fp32 ([0-9.]+) ms.*/\1/' "$OUT/train.txt" | median)
bf16=$(sed -E 's/.*bf16 ([0-9.]+) ms.*/\1/' "$OUT/train.txt" | median)
torch=$(sed -E 's/.*autocast ([0-9.]+) ms.*/\1/' "$OUT/train.txt" | median)

# The step's linears (M = 512 tokens): per layer and direction, forward
# M x out x in, data gradient M x in x out, weight gradient out x in x M.
# Encoder: 4 attention projections + FFN; decoder: 8 projections + FFN;
# the vocabulary projection once.
shapes=()
add() { # m n k count: forward, dX and dW products
  shapes+=("$1,$2,$3,$4" "$1,$3,$2,$4" "$2,$3,$1,$4")
}
add 512 512 512 72
add 512 2048 512 12
add 512 512 2048 12
add 512 8000 512 1
echo "== bare oneDNN matmuls over the step's linear shapes"
OMP_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/matmul" f32 3 "${shapes[@]}" | tee "$OUT/matmul-f32.txt" | tail -1
OMP_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/matmul" bf16 3 "${shapes[@]}" | tee "$OUT/matmul-bf16.txt"
mm_f32=$(tail -1 "$OUT/matmul-f32.txt" | sed -E 's/total ([0-9.]+) ms.*/\1/')
mm_bf16=$(tail -1 "$OUT/matmul-bf16.txt" | sed -E 's/total ([0-9.]+) ms.*/\1/')

echo
echo "CPU: $cpu ($THREADS threads)"
printf "train step B=8 S=T=64: fp32 %.0f ms, bf16 %.0f ms (%.2fx), PyTorch eager bf16 autocast %.0f ms (bf16 vs PyTorch %.2fx)\n" \
  "$fp32" "$bf16" "$(echo "$fp32 / $bf16" | bc -l)" "$torch" "$(echo "$torch / $bf16" | bc -l)"
printf "bare oneDNN matmuls of the step's linears: f32 %.0f ms, bf16 %.0f ms (%.2fx); step efficiency vs that limit: fp32 %.0f%%, bf16 %.0f%%\n" \
  "$mm_f32" "$mm_bf16" "$(echo "$mm_f32 / $mm_bf16" | bc -l)" \
  "$(echo "100 * $mm_f32 / $fp32" | bc -l)" "$(echo "100 * $mm_bf16 / $bf16" | bc -l)"
printf "forward (encode + decode), B=8 S=T=64: fp32 %.1f ms, bf16 %.1f ms (%.2fx)\n" \
  "$(inference fp32 forward)" "$(inference bf16 forward)" \
  "$(echo "$(inference fp32 forward) / $(inference bf16 forward)" | bc -l)"
for batch in 1 8; do
  printf "greedy decoding with the KV cache, batch %d, 64 tokens: fp32 %.3f ms/token, bf16 %.3f ms/token (%.2fx)\n" \
    "$batch" "$(inference fp32 greedy$batch)" "$(inference bf16 greedy$batch)" \
    "$(echo "$(inference fp32 greedy$batch) / $(inference bf16 greedy$batch)" | bc -l)"
done

# One FIGURE line per figure (scripts/bench_summary.py reads them). The
# step target is issue 19's for a CPU with AVX512_BF16 only (>= 1.5x the
# fp32 step; with AMX it asks 3x).
printf "FIGURE bf16.step %.1f ms ratio=%.3f vs=fp32_step target=>=1.5\n" "$bf16" "$(echo "$fp32 / $bf16" | bc -l)"
printf "FIGURE bf16.step_vs_pytorch_autocast %.1f ms ratio=%.3f vs=pytorch_autocast\n" "$bf16" "$(echo "$torch / $bf16" | bc -l)"
printf "FIGURE bf16.efficiency %.3f x vs=bf16_matmul_limit\n" "$(echo "$mm_bf16 / $bf16" | bc -l)"
printf "FIGURE bf16.forward %.1f ms ratio=%.3f vs=fp32_forward\n" "$(inference bf16 forward)" \
  "$(echo "$(inference fp32 forward) / $(inference bf16 forward)" | bc -l)"
for batch in 1 8; do
  printf "FIGURE bf16.greedy_batch%d %.3f ms ratio=%.3f vs=fp32_greedy\n" "$batch" "$(inference bf16 greedy$batch)" \
    "$(echo "$(inference fp32 greedy$batch) / $(inference bf16 greedy$batch)" | bc -l)"
done
