#!/usr/bin/env bash
#===- fusion-differential.sh - the fusion differential tester, longer ------===#
#
# Usage: scripts/fusion-differential.sh [BUILD_DIR] [SEEDS] [SPECS_PER_SEED]
# Runs test/utils/fusion_differential.py (what make check runs with seed 12
# and 30 specs) for SEEDS random seeds (default 5) of SPECS_PER_SEED specs of
# 8 cases (default 40); prints each seed's summary and exits non-zero on the
# first mismatch, with the command that reproduces it.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
SEEDS=${2:-5}
SPECS=${3:-40}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for ((i = 0; i < SEEDS; i++)); do
  seed=$((RANDOM * 32768 + RANDOM))
  "$PY" "$ROOT/test/utils/fusion_differential.py" --txc "$BUILD/bin/txc" \
    --seed "$seed" --specs "$SPECS" --work "$BUILD/fusion-differential/$seed"
done
