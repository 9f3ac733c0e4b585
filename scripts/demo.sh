#!/usr/bin/env bash
#===- demo.sh - the main job on the shipped example ------------------------===#
#
# Usage: scripts/demo.sh [BUILD_DIR]   (what `make demo` runs after building)
# Compiles examples/transformer/base.tx and prints what txc made of it (the
# spec summary with each compiler stage, the parameter count), then compiles
# examples/translate into a native executable and runs its encode and decode
# entries.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TXC="$BUILD/bin/txc"

echo "== txc examples/transformer/base.tx --summary"
"$TXC" examples/transformer/base.tx --summary
echo
echo "== txc examples/transformer/base.tx --list-params (last lines)"
"$TXC" examples/transformer/base.tx --list-params | tail -n 4
echo
echo "== txc examples/translate/model.tx -o $BUILD/translate (a native executable)"
"$TXC" examples/translate/model.tx -o "$BUILD/translate" --time-stages
"$BUILD/translate" info | head -n 30
echo
echo "== $BUILD/translate run encode / decode (random init; training arrives with autodiff)"
mkdir -p "$BUILD/demo"
printf '4 5 6\n7 8 9\n' > "$BUILD/demo/src.txt"
printf '2 4\n2 6\n' > "$BUILD/demo/tgt.txt"
"$BUILD/translate" run encode --init 1 --input src="$BUILD/demo/src.txt" --out-dir "$BUILD/demo"
"$BUILD/translate" run decode --init 1 --input tgt="$BUILD/demo/tgt.txt" \
  --input memory="$BUILD/demo/memory.npy" --input src="$BUILD/demo/src.txt" --out-dir "$BUILD/demo"
