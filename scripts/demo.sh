#!/usr/bin/env bash
#===- demo.sh - the main job: compile, train, translate --------------------===#
#
# Usage: scripts/demo.sh [BUILD_DIR]   (what `make demo` runs after building)
#
# Compiles examples/translate/model.tx into a native executable, trains it on
# the seeds' 8 toy English -> Spanish pairs until all 8 translate exactly
# (200 steps at a time, resuming the checkpoint, at most 3000 steps),
# translates them, and prints where the loss curve is. No Python runs.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TXC="$BUILD/bin/txc"
EXE="$BUILD/translate"
DATA=examples/translate/data/train.tsv
OUT="$BUILD/demo"
CKPT="$OUT/translate.safetensors"
mkdir -p "$OUT"

echo "== txc examples/translate/model.tx -o $EXE"
"$TXC" examples/translate/model.tx -o "$EXE" --time-stages
"$EXE" info | sed -n '/^entries/,$p' | grep -E '^  [a-z_]+\(' | sed 's/(.*//' \
  | tr -d ' ' | paste -sd' ' | sed 's/^/entries: /'

rm -f "$CKPT" "$OUT"/translate.*
cut -f1 "$DATA" > "$OUT/sources.txt"
cut -f2 "$DATA" > "$OUT/references.txt"
steps=0
while :; do
  steps=$((steps + 200))
  echo
  echo "== $EXE train --data $DATA --steps $steps --seed 1 --save $CKPT"
  resume=()
  [ -f "$CKPT" ] && resume=(--resume "$CKPT")
  "$EXE" train --data "$DATA" --steps "$steps" --seed 1 --save "$CKPT" "${resume[@]}"
  "$EXE" translate --load "$CKPT" < "$OUT/sources.txt" > "$OUT/translations.txt"
  exact=$(paste -d'\t' "$OUT/translations.txt" "$OUT/references.txt" \
            | awk -F'\t' '$1 == $2 { n++ } END { print n + 0 }')
  echo "$exact of 8 pairs translate exactly after $steps steps"
  if [ "$exact" -eq 8 ] || [ "$steps" -ge 3000 ]; then
    break
  fi
done

echo
echo "== $EXE translate --load $CKPT (the 8 training sources)"
paste -d'\t' "$OUT/sources.txt" "$OUT/translations.txt" \
  | awk -F'\t' '{ printf "  %-14s -> %s\n", $1, $2 }'
echo
echo "== $EXE eval --load $CKPT --data $DATA"
"$EXE" eval --load "$CKPT" --data "$DATA"
echo
echo "loss curve: $OUT/translate.loss.csv and $OUT/translate.loss.svg"
[ "$exact" -eq 8 ] || { echo "error: only $exact of 8 pairs translate exactly" >&2; exit 1; }
