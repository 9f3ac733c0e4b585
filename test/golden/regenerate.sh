#!/usr/bin/env bash
# Regenerates test/golden/data (the PyTorch reference of test/E2E/golden-*.test)
# with Debian's python3 + python3-torch. One command, deterministic output.
set -euo pipefail
cd "$(dirname "$0")"
exec /usr/bin/python3 make_golden.py --out data --d_model 32 --heads 4 --layers 2 \
  --d_ff 64 --src_vocab 20 --tgt_vocab 24 --seed 0 "$@"
