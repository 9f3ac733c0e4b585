#!/usr/bin/env bash
#===- bench-train.sh - base.tx training and decoding: txc vs PyTorch eager -===#
#
# Usage: scripts/bench-train.sh [BUILD_DIR] [STEPS]
# Compiles examples/transformer/base.tx at B=8, S=T=64 (vocabulary 8000) and,
# in one run on the same machine and thread count (TXRT_NUM_THREADS, default
# 2), times:
#   - one training step (forward, backward, Adam): the executable's `bench`
#     vs the seeds' PyTorch loop (scripts/bench_train_torch.py train);
#   - greedy decoding of 64 tokens for 8 sentences, ms per token: the
#     executable with its KV cache (decode_step) and with the prefix re-run,
#     vs the seeds' PyTorch re-run of the prefix.
# Medians, with the ratios. Debian python3-torch with libopenblas0-openmp.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-train"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}

echo "== compile"
/usr/bin/time -f "compile base.tx to an executable: %e s" \
  "$BUILD/bin/txc" examples/transformer/base.tx -D batch=8 -D max_len=64 -o "$OUT/base"

echo "== txc executable ($THREADS threads)"
txc=$(TXRT_NUM_THREADS=$THREADS "$OUT/base" bench --steps "$STEPS" --batch 8 \
        --src-len 64 --tgt-len 64)
echo "$txc"
echo "== PyTorch eager ($THREADS threads)"
torch_train=$("$PY" scripts/bench_train_torch.py train --threads "$THREADS" --repeat "$STEPS")
echo "$torch_train"
torch_greedy=$("$PY" scripts/bench_train_torch.py greedy --threads "$THREADS" --repeat 3)
echo "$torch_greedy"

txc_step=$(echo "$txc" | sed -nE 's/^train step +([0-9.]+) ms.*/\1/p')
txc_cache=$(echo "$txc" | sed -nE 's/^greedy +([0-9.]+) ms\/token.*KV cache.*/\1/p')
txc_rerun=$(echo "$txc" | sed -nE 's/^greedy +([0-9.]+) ms\/token.*prefix re-run.*/\1/p')
torch_step=$(echo "$torch_train" | awk '{print $2}')
torch_tok=$(echo "$torch_greedy" | awk '{print $2}')
echo
printf "train step (fwd+bwd+Adam), B=8 S=T=64, medians: txc %.0f ms, PyTorch %.0f ms, speedup %.2fx\n" \
  "$txc_step" "$torch_step" "$(echo "$torch_step / $txc_step" | bc -l)"
if [ -n "$txc_cache" ]; then
  printf "greedy decoding, ms/token: txc KV cache %.3f, txc prefix re-run %.3f, PyTorch prefix re-run %.3f; KV cache vs PyTorch %.2fx\n" \
    "$txc_cache" "$txc_rerun" "$torch_tok" "$(echo "$torch_tok / $txc_cache" | bc -l)"
fi
