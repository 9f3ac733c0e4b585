#!/usr/bin/env bash
#===- bench-mpi.sh - base.tx data-parallel: ranks vs threads, allreduce ---===#
#
# Usage: scripts/bench-mpi.sh [BUILD_DIR] [STEPS]
# Compiles examples/transformer/base.tx as it is (dropout 0.1) and trains it
# on 512 synthetic pairs of 20-30 words (3000-word vocabulary), global batch
# 8, STEPS updates (default 4; the first creates the primitives), in one run
# on this machine, `nice`, Open MPI over shared memory:
#   1 rank x 1 thread, 1 rank x 2 threads, 2 ranks x 1 thread with the
#   allreduce overlapped with the backward pass, and without
#   (TXRT_ALLREDUCE_OVERLAP=0);
# prints per run the time of the updates, per update, samples/s and the
# time rank 0 waited for the allreduce; then the cost model of
# docs/distributed.md: T_allreduce = 2 (N - 1) / N * 4P / B for N = 8 and 64
# at 25 and 100 Gb/s, and the predicted step time, efficiency and samples/s
# without and with overlap, from the measured compute per sample. The load
# average before and after says how busy the machine was.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-4}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-mpi"
mkdir -p "$OUT"
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --mca btl self,vader --mca pml ob1)
BATCH=8

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== compile"
nice "$BUILD/bin/txc" examples/transformer/base.tx -o "$OUT/base"
params=$("$OUT/base" info | sed -nE 's/^parameters: ([0-9]+) values.*/\1/p')
echo "base.tx: $params parameters"

/usr/bin/python3 - "$OUT/pairs.tsv" <<'PYEOF'
import random, sys
r = random.Random(0)
words = ["w%d" % i for i in range(3000)]
with open(sys.argv[1], "w") as f:
    for _ in range(512):
        src = " ".join(r.choice(words) for _ in range(r.randint(20, 30)))
        tgt = " ".join(r.choice(words) for _ in range(r.randint(20, 30)))
        f.write(src + "\t" + tgt + "\n")
PYEOF

# run NAME ENV... -- COMMAND...: trains, prints the seconds of the updates
# and rank 0's allreduce wait.
run() {
  local name=$1
  shift
  local log="$OUT/$name.log"
  nice env "$@" --data "$OUT/pairs.tsv" --steps "$STEPS" --batch "$BATCH" \
    --seed 1 --quiet > "$log" 2>&1
  local seconds wait
  seconds=$(sed -nE 's/^trained steps [0-9.]+ in ([0-9.]+) s.*/\1/p' "$log")
  wait=$(sed -nE 's/^allreduce: .* ([0-9.]+) s waiting \(([0-9.]+) ms per update\).*/\1 s in all, \2 ms per update/p' "$log")
  awk -v n="$name" -v s="$seconds" -v k="$STEPS" -v b="$BATCH" -v w="${wait:--}" \
    'BEGIN { printf "%-34s %8.2f s %8.3f s %8.2f   %s\n", n, s, s / k, k * b / s, w }'
  echo "$seconds" > "$OUT/$name.seconds"
}

echo "== $STEPS updates of $BATCH samples"
printf "%-34s %10s %10s %8s   %s\n" "run" "updates" "per update" "samples/s" "waiting in allreduce"
run "1 rank x 1 thread" TXRT_NUM_THREADS=1 "$OUT/base" train
run "1 rank x 2 threads" TXRT_NUM_THREADS=2 "$OUT/base" train
run "2 ranks x 1 thread, overlap" "${MPIRUN[@]}" -np 2 -x TXRT_NUM_THREADS=1 \
  "$OUT/base" train
run "2 ranks x 1 thread, no overlap" "${MPIRUN[@]}" -np 2 -x TXRT_NUM_THREADS=1 \
  -x TXRT_ALLREDUCE_OVERLAP=0 "$OUT/base" train
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The cost model, from the measured compute per sample of one thread: a
# rank is a 16-core socket at 12 x one core (an assumption), 32 samples per
# rank, the forward a third of the compute.
one=$(cat "$OUT/1 rank x 1 thread.seconds")
echo "== cost model (P = $params, 4P = $(awk -v p="$params" 'BEGIN { printf "%.1f", 4 * p / 1e6 }') MB per allreduce)"
awk -v p="$params" -v one="$one" -v k="$STEPS" -v b="$BATCH" 'BEGIN {
  perSample = one / (k * b);
  compute = 32 * perSample / 12;
  forward = compute / 3;
  printf "compute per sample (1 thread, this run): %.3f s; T_compute (32 samples, 12 cores): %.3f s\n", perSample, compute;
  printf "%-14s %12s   %-32s %-32s\n", "link, N", "T_allreduce", "no overlap: T, eff, samples/s", "overlap: T, eff, samples/s";
  split("25 100", gbits, " ");
  split("8 64", ranks, " ");
  for (g = 1; g <= 2; ++g)
    for (r = 1; r <= 2; ++r) {
      n = ranks[r];
      bandwidth = gbits[g] * 1e9 / 8;
      allreduce = 2 * (n - 1) / n * 4 * p / bandwidth;
      plain = compute + allreduce;
      overlapped = compute > forward + allreduce ? compute : forward + allreduce;
      printf "%3d Gb/s, %3d %10.0f ms   %.3f s, %3.0f %%, %6.0f          %.3f s, %3.0f %%, %6.0f\n",
        gbits[g], n, 1e3 * allreduce, plain, 100 * compute / plain, 32 * n / plain,
        overlapped, 100 * compute / overlapped, 32 * n / overlapped;
    }
}'
