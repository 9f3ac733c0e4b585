#!/usr/bin/env bash
#===- bench-compile.sh - txc's time and memory against model depth --------===#
#
# Usage: scripts/bench-compile.sh [BUILD_DIR] [DEPTHS...]
# Compiles examples/transformer/base.tx (all entries, to an executable) and
# examples/copy/model.tx at each depth (-D layers=N; default 6 24 96 128),
# each to an executable, under /usr/bin/time -v, and prints the wall time,
# peak resident memory (RSS) and txc's own stage times (--time-stages) per
# run, then the time and memory per layer between the smallest and largest
# depth next to their values at the smallest, and the time per layer
# between each two consecutive depths: linear growth keeps the per-layer
# figures flat; then the FIGURE lines for scripts/bench_summary.py.
# BENCH_RT=1 runs txc under chrt -f 10 (root) on a busy machine.
# BASELINE=DIR (a build directory, or one with bin/txc and a lib/ link to
# the runtime libraries) compiles each spec with DIR's txc first, then with
# BUILD's, and prints both: before/after in one run.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
shift || true
DEPTHS=("$@")
[ ${#DEPTHS[@]} -gt 0 ] || DEPTHS=(6 24 96 128)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-compile"
mkdir -p "$OUT"
RT=()
[ "${BENCH_RT:-0}" = 1 ] && RT=(chrt -f 10)
[ -x /usr/bin/time ] || { echo "bench-compile.sh: needs /usr/bin/time (Debian: time)" >&2; exit 2; }

# One compile with BUILD_DIR's txc: prints "label  wall s  peak MB  stages".
compile_with() {
  local build=$1 label=$2 spec=$3
  shift 3
  local log="$OUT/$label.log"
  "${RT[@]}" /usr/bin/time -v "$build/bin/txc" "$spec" "$@" -o "$OUT/$label" \
    --time-stages 2>"$log" >/dev/null || { cat "$log" >&2; exit 1; }
  local wall rss stages
  wall=$(sed -nE 's/.*Elapsed \(wall clock\) time.*: ([0-9:.]+)$/\1/p' "$log" |
         awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; printf "%.2f", s }')
  rss=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$log")
  stages=$(sed -nE 's/^txc: (.*): ([0-9]+) ms$/\1 \2/p' "$log" |
           awk '{ n = $NF; $NF = ""; sub(/ $/, ""); printf "%s%s %s ms", sep, $0, n; sep = ", " }')
  printf '%-31s %7s s %8.1f MB   %s\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" "$stages"
  echo "$label $wall $rss" >> "$OUT/results.txt"
}

# One spec: with BASELINE's txc first (label "... (baseline)"), then BUILD's.
compile() {
  local label=$1
  shift
  [ -z "${BASELINE:-}" ] || compile_with "$BASELINE" "$label-baseline" "$@"
  compile_with "$BUILD" "$label" "$@"
}

: > "$OUT/results.txt"
echo "txc on $(hostname): $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -Is)"
[ -z "${BASELINE:-}" ] || echo "baseline: $BASELINE/bin/txc (rows *-baseline), then $BUILD/bin/txc"
printf '%-31s %9s %11s   %s\n' "spec" "wall" "peak RSS" "stages (txc --time-stages)"
compile base examples/transformer/base.tx
for depth in "${DEPTHS[@]}"; do
  compile "copy-$depth-layers" examples/copy/model.tx -D layers="$depth"
done

# Growth per layer between the smallest and the largest depth.
per_layer() {
  local suffix=$1
  awk -v first="copy-${DEPTHS[0]}-layers$suffix" -v last="copy-${DEPTHS[-1]}-layers$suffix" \
      -v d0="${DEPTHS[0]}" -v d1="${DEPTHS[-1]}" -v name="${suffix:+ (baseline)}" '
    $1 == first { t0 = $2; m0 = $3 }
    $1 == last { t1 = $2; m1 = $3 }
    END {
      if (d1 == d0) exit
      printf "per layer from %d to %d layers%s: %.1f ms, %.2f MB (at %d layers: %.1f ms, %.2f MB a layer)\n",
        d0, d1, name, 1000 * (t1 - t0) / (d1 - d0), (m1 - m0) / 1024 / (d1 - d0),
        d0, 1000 * t0 / d0, m0 / 1024 / d0
    }' "$OUT/results.txt"
}
# Time a layer between each two consecutive depths: flat when linear.
per_interval() {
  local suffix=$1
  awk -v d="${DEPTHS[*]}" -v suffix="$suffix" -v name="${suffix:+ (baseline)}" '
    { wall[$1] = $2 }
    END {
      n = split(d, depth, " ")
      if (n < 3) exit
      line = "ms a layer between depths" name ":"
      for (i = 2; i <= n; ++i) {
        a = "copy-" depth[i - 1] "-layers" suffix; b = "copy-" depth[i] "-layers" suffix
        if (depth[i] == depth[i - 1]) continue
        ms = 1000 * (wall[b] - wall[a]) / (depth[i] - depth[i - 1])
        if (i == 2) first = ms
        line = line sprintf(" %d->%d %.1f,", depth[i - 1], depth[i], ms)
      }
      sub(/,$/, "", line)
      if (first > 0) line = line sprintf(" (last / first %.2fx)", ms / first)
      print line
    }' "$OUT/results.txt"
}
[ -z "${BASELINE:-}" ] || per_layer -baseline
per_layer ""
[ -z "${BASELINE:-}" ] || per_interval -baseline
per_interval ""

# One FIGURE line per figure (scripts/bench_summary.py reads them), from
# BUILD's rows: base.tx's compile, the time and memory per layer from the
# smallest to the largest depth, the growth of the time per layer (from
# the second to the largest depth over from the smallest to the second:
# 1 when linear; with three depths or more) and the peak memory at the
# largest depth (target under 1 GiB at 128 layers: no gigabytes).
awk -v d="${DEPTHS[*]}" '
  { wall[$1] = $2; rss[$1] = $3 }
  END {
    n = split(d, depth, " ")
    printf "FIGURE compile.base %.2f s target=<=1\n", wall["base"]
    printf "FIGURE compile.base_peak_rss %.1f MB\n", rss["base"] / 1024
    first = "copy-" depth[1] "-layers"; last = "copy-" depth[n] "-layers"
    if (n >= 2 && depth[n] != depth[1]) {
      printf "FIGURE compile.per_layer %.1f ms/layer\n", 1000 * (wall[last] - wall[first]) / (depth[n] - depth[1])
      printf "FIGURE compile.per_layer_memory %.2f MB/layer\n", (rss[last] - rss[first]) / 1024 / (depth[n] - depth[1])
    }
    if (n >= 3 && depth[2] != depth[1] && depth[n] != depth[2]) {
      second = "copy-" depth[2] "-layers"
      early = (wall[second] - wall[first]) / (depth[2] - depth[1])
      late = (wall[last] - wall[second]) / (depth[n] - depth[2])
      if (early > 0)
        printf "FIGURE compile.per_layer_growth %.3f x vs=%d_to_%d_layers\n", late / early, depth[1], depth[2]
    }
    printf "FIGURE compile.peak_rss.copy%d %.1f MB%s\n", depth[n], rss[last] / 1024,
      depth[n] >= 128 ? " target=<1024" : ""
  }' "$OUT/results.txt"
