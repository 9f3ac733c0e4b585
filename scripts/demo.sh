#!/usr/bin/env bash
#===- demo.sh - the main job on the shipped example ------------------------===#
#
# Usage: scripts/demo.sh [BUILD_DIR]   (what `make demo` runs after building)
# Compiles examples/transformer/base.tx and prints what txc made of it: the
# spec summary with each compiler stage, and the parameter count.
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
echo "== txc examples/translate/model.tx --emit=tx (first lines)"
"$TXC" examples/translate/model.tx --emit=tx | head -n 5
