#!/usr/bin/env bash
#===- check-sanitize.sh - every test under AddressSanitizer + UBSan ---------===#
#
# Usage: scripts/check-sanitize.sh [BUILD_DIR]     (default build-sanitize)
#        (`make check-sanitize` runs it)
#
# Configures BUILD_DIR with clang-19 and -DTXC_SANITIZE=address,undefined
# (compiler, runtime, driver, tests and the executables txc links, all
# instrumented, assertions on; the fuzz targets built with libFuzzer),
# builds it, and runs the whole suite (scripts/check.sh: lit + CTest, which
# includes the fuzz targets' replay and 5-second smoke runs) with the
# options below. Every sanitizer report goes to a file under
# BUILD_DIR/sanitizer-logs/ as well as ending its process, so a report in a
# process whose failure a test expected (exit code 1 or 2) is still caught:
# the run passes only if check.sh passes and no report was written. Ends with
#   check: N passed, M failed
#   sanitizers: no reports            (or: sanitizers: K reports, listed)
#
# Options (docs/testing.md says why each one is needed):
#   ASan  halt_on_error=1 abort_on_error=1 (a report ends the process with
#         SIGABRT, which no test expects), detect_leaks=1,
#         detect_stack_use_after_return=1, check_initialization_order=1,
#         strict_init_order=1, allocator_may_return_null=1
#   UBSan halt_on_error=1 abort_on_error=1 print_stacktrace=1 (the build
#         also uses -fno-sanitize-recover=all)
#   LSan  the suppressions in test/sanitizers/lsan.supp (third-party only)
#
#===------------------------------------------------------------------------===#
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build-sanitize}
JOBS=${JOBS:-$(nproc)}
cd "$ROOT"

bash scripts/install-deps.sh || exit 1
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DTXC_SANITIZE=address,undefined || exit 1
fi
if ! grep -q '^TXC_SANITIZE:STRING=.\+' "$BUILD/CMakeCache.txt"; then
  echo "check-sanitize: error: $BUILD is not a sanitizer build" \
       "(configured without -DTXC_SANITIZE); use another directory" >&2
  exit 2
fi
cmake --build "$BUILD" -j "$JOBS" || exit 1

LOGS="$ROOT/$BUILD/sanitizer-logs"
case "$BUILD" in /*) LOGS="$BUILD/sanitizer-logs" ;; esac
rm -rf "$LOGS" && mkdir -p "$LOGS"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:allocator_may_return_null=1:log_path=$LOGS/report"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$LOGS/report"
export LSAN_OPTIONS="suppressions=$ROOT/test/sanitizers/lsan.supp:print_suppressions=0"

bash scripts/check.sh "$BUILD"
rc=$?
# Open MPI's ranks use makecontext/swapcontext, and ASan writes a warning
# that it does not fully support them to each rank's log: a note about
# third-party code, no report. Counted apart; any other content counts.
notes=0
for log in $(find "$LOGS" -type f); do
  if ! grep -qv -e '^$' -e "WARNING: ASan doesn't fully support makecontext/swapcontext" "$log"; then
    rm -f "$log"
    notes=$((notes + 1))
  fi
done
[ "$notes" -gt 0 ] && echo "sanitizers: $notes logs held only ASan's makecontext/swapcontext warning (Open MPI's ranks); not reports"
reports=$(find "$LOGS" -type f | sort)
if [ -z "$reports" ]; then
  echo "sanitizers: no reports"
else
  for report in $reports; do
    echo "== $report"
    cat "$report"
  done
  echo "sanitizers: $(echo "$reports" | wc -l) reports (in $LOGS)"
  rc=1
fi
exit $rc
