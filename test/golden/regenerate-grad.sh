#!/usr/bin/env bash
# Regenerates test/golden/data/translate-grad (the PyTorch reference of
# test/E2E/grad-translate.test and adam-translate.test: weights, a padded
# batch, loss, every gradient, two Adam steps) with Debian's python3 +
# python3-torch. One command, deterministic output.
set -euo pipefail
cd "$(dirname "$0")"
exec /usr/bin/python3 make_grad_golden.py --out data/translate-grad --d_model 16 \
  --heads 4 --layers 2 --d_ff 32 --src_vocab 16 --tgt_vocab 16 --warmup 100 \
  --label_smoothing 0.1 --seed 0 --adam_steps 2 "$@"
