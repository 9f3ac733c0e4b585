#!/usr/bin/env bash
#===- fuzz.sh - run a libFuzzer target of test/fuzz for a while ------------===#
#
# Usage: scripts/fuzz.sh [--build DIR] [--work DIR] [--fresh] TARGET|all [SECONDS]
#                       [-- LIBFUZZER-FLAGS]
#   TARGET   spec-frontend, safetensors, npy, parallel-text, tokenizer-json
#            (all: each in turn, SECONDS each)
#   SECONDS  how long to fuzz (default 60)
#   --build  the sanitizer build (default build-sanitize, as made by
#            scripts/check-sanitize.sh; it must be configured with
#            -DTXC_SANITIZE=..., which builds the targets with libFuzzer)
#   --work   where the corpus, artifacts and log go (default
#            BUILD/fuzz/TARGET; with `all`, DIR/TARGET)
#   --fresh  empty the work corpus first: fuzz from the seeds and
#            regression inputs alone (the CTest smoke runs do, so their
#            time does not grow with earlier campaigns)
#
# Fuzzes BUILD/bin/fuzz-TARGET from the committed seeds
# (test/fuzz/corpus/TARGET) and regression inputs (test/fuzz/regressions/
# TARGET), with the dictionary test/fuzz/TARGET.dict if there is one; the
# inputs it finds interesting accumulate in
# BUILD/fuzz/TARGET/corpus across runs, a crash, leak, timeout or
# out-of-memory input is saved in BUILD/fuzz/TARGET/artifacts/. The full
# libFuzzer log is BUILD/fuzz/TARGET/fuzz.log; this prints one line:
#   fuzz: TARGET: N executions in S s (E exec/s), corpus C inputs, ok
# and exits non-zero if libFuzzer found anything (the log's tail is shown).
# A finding becomes a regression input: copy the artifact to
# test/fuzz/regressions/TARGET/ with a name saying what it was, fix the
# bug, and `make check` replays it from then on (docs/testing.md).
#
#===------------------------------------------------------------------------===#
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build-sanitize
WORK_DIR=
FRESH=0
TARGETS=(spec-frontend safetensors npy parallel-text tokenizer-json)

usage() {
  sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
  --build) BUILD=$2; shift 2 ;;
  --build=*) BUILD=${1#--build=}; shift ;;
  --work) WORK_DIR=$2; shift 2 ;;
  --work=*) WORK_DIR=${1#--work=}; shift ;;
  --fresh) FRESH=1; shift ;;
  -h|--help) usage ;;
  *) break ;;
  esac
done
[ $# -ge 1 ] || usage
TARGET=$1; shift
SECONDS_TO_RUN=60
if [ $# -gt 0 ] && [ "$1" != "--" ]; then SECONDS_TO_RUN=$1; shift; fi
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac

if [ "$TARGET" = all ]; then
  status=0
  for t in "${TARGETS[@]}"; do
    opts=(--build "$BUILD")
    [ -n "$WORK_DIR" ] && opts+=(--work "$WORK_DIR/$t")
    [ $FRESH -eq 1 ] && opts+=(--fresh)
    bash "$0" "${opts[@]}" "$t" "$SECONDS_TO_RUN" -- "${EXTRA[@]}" || status=1
  done
  exit $status
fi
known=0
for t in "${TARGETS[@]}"; do [ "$t" = "$TARGET" ] && known=1; done
if [ $known -eq 0 ]; then
  echo "fuzz: error: unknown target '$TARGET' (${TARGETS[*]}, all)" >&2
  exit 2
fi
if ! grep -q '^TXC_LIBFUZZER:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz: error: $BUILD is not a libFuzzer build; make one with" \
       "scripts/check-sanitize.sh (or cmake -DTXC_SANITIZE=address,undefined)" >&2
  exit 2
fi
FUZZER="$BUILD/bin/fuzz-$TARGET"
if [ ! -x "$FUZZER" ]; then
  echo "fuzz: error: $FUZZER is not built (cmake --build $BUILD --target fuzz-$TARGET)" >&2
  exit 2
fi

WORK=${WORK_DIR:-$BUILD/fuzz/$TARGET}
[ $FRESH -eq 1 ] && rm -rf "$WORK/corpus"
mkdir -p "$WORK/corpus" "$WORK/artifacts"
# A spec can take seconds through every pass under ASan; the loaders
# milliseconds. Anything slower than this is reported as a timeout.
TIMEOUT=10
[ "$TARGET" = spec-frontend ] && TIMEOUT=60

# A dictionary of the format's words (test/fuzz/TARGET.dict), where there is one.
DICT=()
[ -f "$ROOT/test/fuzz/$TARGET.dict" ] && DICT=(-dict="$ROOT/test/fuzz/$TARGET.dict")

LOG="$WORK/fuzz.log"
start=$(date +%s.%N)
"$FUZZER" -max_total_time="$SECONDS_TO_RUN" -timeout="$TIMEOUT" \
  -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" "${DICT[@]}" "${EXTRA[@]}" \
  "$WORK/corpus" "$ROOT/test/fuzz/corpus/$TARGET" \
  "$ROOT/test/fuzz/regressions/$TARGET" >"$LOG" 2>&1
rc=$?
end=$(date +%s.%N)

stat() { grep -E "^stat::$1:" "$LOG" | tail -1 | awk '{print $2}'; }
runs=$(stat number_of_executed_units); runs=${runs:-0}
rate=$(stat average_exec_per_sec); rate=${rate:-0}
corpus=$(ls "$WORK/corpus" | wc -l)
wall=$(echo "$end - $start" | bc)
result=ok
if [ $rc -ne 0 ]; then
  result="FAILED (libFuzzer exit $rc; artifacts in $WORK/artifacts, log $LOG)"
fi
printf 'fuzz: %s: %s executions in %.0f s (%s exec/s), corpus %s inputs, %s\n' \
  "$TARGET" "$runs" "$wall" "$rate" "$corpus" "$result"
if [ $rc -ne 0 ]; then
  tail -n 60 "$LOG" >&2
fi
exit $rc
