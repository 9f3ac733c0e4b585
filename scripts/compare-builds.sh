#!/usr/bin/env bash
#===- compare-builds.sh - the IR txc emits must not depend on its compiler -===#
#
# Usage: scripts/compare-builds.sh [BUILD_A] [BUILD_B]
#        (default: build build-sanitize, the g++ and the clang-19 builds)
#
# Runs txc and tx-opt of both builds on the same inputs and compares their
# output byte for byte:
#   - every `// RUN: tx-opt %s ARGS` line of the lit tests' .mlir files;
#   - for every spec seed (test/fuzz/corpus/spec-frontend/, the examples and
#     the lit tests' specs) that compiles: --emit=planned, tx-lower-entries
#     of the planned IR, and --emit=llvm.
# C++ leaves the order of evaluating a call's arguments unspecified, so a
# call with two arguments that each create an op emits them in a different
# order under GCC and clang; this finds such calls (docs/testing.md). Prints
# each input whose outputs differ and one line:
#   compare-builds: N outputs compared, D differ
# and exits non-zero if any differ.
#
#===------------------------------------------------------------------------===#
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:-build}
B=${2:-build-sanitize}
cd "$ROOT"
for build in "$A" "$B"; do
  if [ ! -x "$build/bin/txc" ] || [ ! -x "$build/bin/tx-opt" ]; then
    echo "compare-builds: error: $build/bin/txc or tx-opt is not built" >&2
    exit 2
  fi
done
# A sanitizer build's leak check is not what this compares.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
compared=0
differ=0

# compare NAME COMMAND...: COMMAND with %B replaced by each build.
compare() {
  local name=$1; shift
  local outs=() build
  for build in "$A" "$B"; do
    local out="$WORK/$(echo "$build" | tr / _).out"
    "${@//%B/$build}" >"$out" 2>&1
    echo "exit $?" >>"$out"
    outs+=("$out")
  done
  compared=$((compared + 1))
  if ! cmp -s "${outs[0]}" "${outs[1]}"; then
    differ=$((differ + 1))
    echo "differs: $name"
  fi
}

while IFS= read -r -d '' test; do
  while IFS= read -r args; do
    # shellcheck disable=SC2086 # ARGS are words of a RUN line
    compare "$test: tx-opt $args" %B/bin/tx-opt "$test" $args
  done < <(sed -n -E 's#^// RUN: tx-opt %s([^|]*).*#\1#p' "$test" |
           sed -E 's/2>&1//')
done < <(find test -name '*.mlir' -not -path 'test/fuzz/*' -print0 | sort -z)

for spec in test/fuzz/corpus/spec-frontend/*.tx; do
  planned="$WORK/planned.mlir"
  "$A/bin/txc" "$spec" --emit=planned -o "$planned" >/dev/null 2>&1 || continue
  compare "$spec: --emit=planned" %B/bin/txc "$spec" --emit=planned -o -
  compare "$spec: tx-lower-entries" %B/bin/tx-opt "$planned" --tx-lower-entries
  compare "$spec: --emit=llvm" %B/bin/txc "$spec" --emit=llvm -o -
done

echo "compare-builds: $compared outputs compared, $differ differ"
[ "$differ" -eq 0 ]
