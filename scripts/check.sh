#!/usr/bin/env bash
#===- check.sh - run every test: lit suites and GoogleTest units -----------===#
#
# Usage: scripts/check.sh [BUILD_DIR]   (what `make check` runs after building)
# Runs the lit suites (test/Dialect, test/Frontend, test/Transforms, ...) and
# every GoogleTest unit through CTest, then prints one summary line:
#   check: N passed, M failed
# and exits non-zero if anything failed.
#
#===------------------------------------------------------------------------===#
set -uo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LIT=/usr/lib/llvm-19/build/utils/lit/lit.py
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

echo "== lit: $BUILD/test"
lit_out=$(mktemp)
"$PY" "$LIT" -sv "$BUILD/test" 2>&1 | tee "$lit_out"
lit_rc=${PIPESTATUS[0]}
lit_pass=$(grep -E '^ *Passed *:' "$lit_out" | awk -F: '{print $2}' | awk '{print $1}')
lit_unsup=$(grep -E '^ *Unsupported *:' "$lit_out" | awk -F: '{print $2}' | awk '{print $1}')
lit_fail=$(grep -E '^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:' "$lit_out" |
  awk -F: '{s += $2} END {print s + 0}')
rm -f "$lit_out"

echo "== unit tests (ctest)"
ctest_out=$(mktemp)
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" 2>&1 | tee "$ctest_out"
ctest_rc=${PIPESTATUS[0]}
unit_total=$(grep -E 'tests passed, [0-9]+ tests failed out of' "$ctest_out" | sed -E 's/.*out of ([0-9]+).*/\1/')
unit_fail=$(grep -E 'tests passed, [0-9]+ tests failed out of' "$ctest_out" | sed -E 's/.* ([0-9]+) tests failed.*/\1/')
rm -f "$ctest_out"

lit_pass=${lit_pass:-0}; lit_fail=${lit_fail:-0}; lit_unsup=${lit_unsup:-0}
unit_total=${unit_total:-0}; unit_fail=${unit_fail:-0}
unit_pass=$((unit_total - unit_fail))
if [ "$lit_rc" -ne 0 ] && [ "$lit_fail" -eq 0 ]; then lit_fail=1; fi
if [ "$ctest_rc" -ne 0 ] && [ "$unit_fail" -eq 0 ]; then unit_fail=1; fi

echo "== summary: lit $lit_pass passed, $lit_fail failed, $lit_unsup unsupported;" \
     "unit $unit_pass passed, $unit_fail failed"
echo "check: $((lit_pass + unit_pass)) passed, $((lit_fail + unit_fail)) failed"
[ "$lit_fail" -eq 0 ] && [ "$unit_fail" -eq 0 ]
