#!/usr/bin/env bash
#===- bench-train.sh - base.tx training and decoding: txc vs PyTorch eager -===#
#
# Usage: scripts/bench-train.sh [BUILD_DIR] [STEPS] [ROUNDS]
# Compiles examples/transformer/base.tx at B=8, S=T=64 (vocabulary 8000) and,
# in one run on the same machine and thread count (TXRT_NUM_THREADS, default
# 2), times:
#   - one training step (forward, backward, Adam): the executable's `train`
#     entry (`run train --repeat STEPS`) vs the seeds' PyTorch loop
#     (scripts/bench_torch.py train), alternating for ROUNDS rounds;
#   - greedy decoding of 64 tokens for 8 sentences, ms per token: the
#     executable with its KV cache (decode_step) and with the prefix re-run,
#     vs the seeds' PyTorch re-run of the prefix;
#   - the step's matmul-bound limit: bare dnnl_sgemm time of exactly the
#     step's matmuls (txrt-matmul-limit over a ONEDNN_VERBOSE=1 log of one
#     step), timed in every round right after the step, and the efficiency
#     = the median of the rounds' limit / step; fails if any matmul fell
#     back from brgemm to gemm:jit.
#   - profiling's overhead: `run train --profile` over 21 calls (every
#     other call profiled), the fastest profiled call against the fastest
#     unprofiled one (target < 5 %; a timing, so a benchmark figure rather
#     than a test: test/E2E/profile.test checks the report's form).
# Medians, with the ratios, then one FIGURE line per figure (the step and
# its ratio, the efficiency, fallbacks, decoding, the peak memory of
# `bench` beside its floor) for scripts/bench_summary.py. Debian
# python3-torch with libopenblas0-openmp.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-5}
ROUNDS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-train"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
if ! [ "$STEPS" -ge 2 ] 2>/dev/null; then
  echo "bench-train.sh: error: STEPS must be a number >= 2 (the first call is a warm-up; got '$STEPS')" >&2
  exit 2
fi

echo "== compile"
/usr/bin/time -f "compile base.tx to an executable: %e s" \
  "$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 -o "$OUT/base"

/usr/bin/python3 - "$OUT" <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng(0)
out = sys.argv[1]
for name in ("src", "tgt_in", "tgt_out"):
    np.save("%s/%s.npy" % (out, name), rng.integers(4, 8000, size=(8, 64), dtype=np.int32))
PYEOF

# The step's matmul-bound limit: one step under ONEDNN_VERBOSE=1, then bare
# dnnl_sgemm over exactly its matmul shapes and transposes
# (txrt-matmul-limit, timed in every round below, right after the step); a
# matmul that fell back from brgemm to gemm:jit fails the benchmark.
TXRT_NUM_THREADS=$THREADS ONEDNN_VERBOSE=1 "$OUT/base" run train --init 0 --input src="$OUT/src.npy" \
  --input tgt_in="$OUT/tgt_in.npy" --input tgt_out="$OUT/tgt_out.npy" --out-dir "$OUT/out" > "$OUT/verbose.txt"
matmul_limit_now() {
  if ! TXRT_NUM_THREADS=$THREADS "$BUILD/bin/txrt-matmul-limit" --reps 5 --require-brgemm \
       < "$OUT/verbose.txt" > "$OUT/limit.txt"; then
    cat "$OUT/limit.txt" >&2
    echo "bench-train: a matmul of the train step did not run on brgemm (see above)" >&2
    exit 1
  fi
  sed -nE 's/^matmul-limit ([0-9.]+) ms.*/\1/p' "$OUT/limit.txt"
}

# The train step, txc and PyTorch alternating for $ROUNDS rounds (the
# machine's speed drifts; interleaving keeps the ratio fair), and the
# matmul limit timed right after txc's step in each round: on a shared
# (virtual) machine the speed moves by 10-20 % from minute to minute, so the
# efficiency is the median of the rounds' limit / step, each pair measured
# within seconds of each other.
: > "$OUT/train.txt"
for round in $(seq "$ROUNDS"); do
  t=$(TXRT_NUM_THREADS=$THREADS "$OUT/base" run train --init 0 --input src="$OUT/src.npy" \
        --input tgt_in="$OUT/tgt_in.npy" --input tgt_out="$OUT/tgt_out.npy" --out-dir "$OUT/out" \
        --repeat "$STEPS" 2>&1 >/dev/null | grep "ran 'train'" | sed -E 's/.*median ([0-9.]+) ms.*/\1/')
  l=$(matmul_limit_now)
  p=$("$PY" scripts/bench_torch.py train --threads "$THREADS" --repeat "$STEPS" | awk '{print $2}')
  echo "round $round: txc $t ms, matmul limit $l ms, efficiency $(printf "%.3f" "$(echo "$l / $t" | bc -l)"), PyTorch $p ms" |
    tee -a "$OUT/train.txt"
done
# The median over the rounds of the number after LABEL in train.txt.
round_median() {
  sed -E "s/.*$1 ([0-9.]+).*/\\1/" "$OUT/train.txt" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
txc_step=$(round_median txc)
torch_step=$(round_median PyTorch)
matmul_limit=$(round_median "matmul limit")
efficiency=$(round_median efficiency)
echo "== matmul-bound limit ($THREADS threads)"
grep -E "^(matmul-limit|fallbacks)" "$OUT/limit.txt"

echo "== greedy decoding ($THREADS threads)"
txc=$(TXRT_NUM_THREADS=$THREADS "$OUT/base" bench --steps 1 --batch 8 --src-len 64 --tgt-len 64)
echo "$txc" | grep greedy
torch_greedy=$("$PY" scripts/bench_torch.py greedy --threads "$THREADS" --repeat 3)
echo "$torch_greedy"
txc_cache=$(echo "$txc" | sed -nE 's/^greedy +([0-9.]+) ms\/token.*KV cache.*/\1/p')
txc_rerun=$(echo "$txc" | sed -nE 's/^greedy +([0-9.]+) ms\/token.*prefix re-run.*/\1/p')
torch_tok=$(echo "$torch_greedy" | awk '{print $2}')
echo
printf "train step (fwd+bwd+Adam), B=8 S=T=64, medians of the round medians: txc %.0f ms, PyTorch %.0f ms, speedup %.2fx\n" \
  "$txc_step" "$torch_step" "$(echo "$torch_step / $txc_step" | bc -l)"
printf "train step efficiency: median of the rounds' bare sgemm of its matmuls / step = %.2f (medians: limit %.0f ms, step %.0f ms; target >= 0.85)\n" \
  "$efficiency" "$matmul_limit" "$txc_step"
if [ -n "$txc_cache" ]; then
  printf "greedy decoding, ms/token: txc KV cache %.3f, txc prefix re-run %.3f, PyTorch prefix re-run %.3f; KV cache vs PyTorch %.2fx\n" \
    "$txc_cache" "$txc_rerun" "$torch_tok" "$(echo "$torch_tok / $txc_cache" | bc -l)"
fi

echo "== profiling overhead ($THREADS threads)"
TXRT_NUM_THREADS=$THREADS "$OUT/base" run train --init 0 --input src="$OUT/src.npy" \
  --input tgt_in="$OUT/tgt_in.npy" --input tgt_out="$OUT/tgt_out.npy" --repeat 21 \
  --profile --profile-rows 0 --out-dir "$OUT/out" > "$OUT/profile.txt"
grep -E '^profiling overhead' "$OUT/profile.txt" || true
overhead=$(sed -nE 's/.*unprofiled run [0-9.]+ ms \(([-+0-9.]+) %\).*/\1/p' "$OUT/profile.txt")

# One FIGURE line per figure (scripts/bench_summary.py reads them).
fallbacks=$(sed -nE 's/^fallbacks ([0-9]+).*/\1/p' "$OUT/limit.txt")
peak_train=$(echo "$txc" | sed -nE 's/^peak memory +([0-9.]+) MB.*after the train steps.*/\1/p')
peak_end=$(echo "$txc" | sed -nE 's/^peak memory +([0-9.]+) MB.*floor:.* ([0-9.]+) MB\)$/\1/p')
floor=$(echo "$txc" | sed -nE 's/^peak memory +([0-9.]+) MB.*floor:.* ([0-9.]+) MB\)$/\2/p')
printf "FIGURE train.step %.1f ms ratio=%.3f vs=pytorch_eager\n" "$txc_step" "$(echo "$torch_step / $txc_step" | bc -l)"
printf "FIGURE train.efficiency %.3f x vs=matmul_limit target=>=0.85\n" "$efficiency"
[ -z "$fallbacks" ] || echo "FIGURE train.matmul_fallbacks $fallbacks matmuls target=<=0"
[ -z "$txc_cache" ] || printf "FIGURE decode.greedy_ms_per_token %.3f ms ratio=%.3f vs=pytorch_prefix_rerun\n" \
  "$txc_cache" "$(echo "$torch_tok / $txc_cache" | bc -l)"
[ -z "$peak_train" ] || echo "FIGURE memory.peak_train $peak_train MB${floor:+ floor=$floor}"
[ -z "$peak_end" ] || echo "FIGURE memory.peak_end $peak_end MB${floor:+ floor=$floor}"
[ -z "$overhead" ] || echo "FIGURE profile.overhead ${overhead#+} % target=<5"
