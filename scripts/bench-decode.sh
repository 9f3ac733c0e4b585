#!/usr/bin/env bash
#===- bench-decode.sh - base.tx greedy decoding: txc vs PyTorch, KV caches -===#
#
# Usage: scripts/bench-decode.sh [BUILD_DIR] [ROUNDS] [TGT_LEN]
# The PyTorch twin of base.tx (test/golden/seed_model.py, base config,
# vocabulary 8000, seeded weights) writes its weights and 32 source rows of
# 64 ids, right-padded to different lengths (scripts/bench_torch.py
# weights). For batch 1, 8 and 32 (the first rows), greedy decoding of
# TGT_LEN (default 64) tokens per row, no early stop, same weights, same
# sources, THREADS threads (TXRT_NUM_THREADS, default 2):
#   - txc: `bench --load W --sources F --decode-only --decode-out T` (the
#     compiled decode_step with its KV cache; median of 3 after a warm-up);
#   - PyTorch: `bench_torch.py greedy-cache` (per-layer self-attention K/V
#     caches appended each step, cross-attention K/V computed once; median
#     of 3 after a warm-up).
# and beam search with BEAM hypotheses (default 4; BEAM=0: none), one
# sentence at a time, no end token, once per round: txc's `bench --beam`,
# PyTorch the same search over its cache (`greedy-cache --beam`).
# ROUNDS (default 2) alternating rounds; prints tokens/s of both (median of
# the rounds), the ratio, and whether the tokens are identical (else how
# many rows agree and where the first difference is), then one FIGURE line
# per search and batch for scripts/bench_summary.py. BENCH_RT=1 runs
# both under SCHED_RR (chrt -r 10, root) on a shared machine.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-2}
TGT_LEN=${3:-64}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-decode"
mkdir -p "$OUT"
PY=/usr/bin/python3
THREADS=${TXRT_NUM_THREADS:-2}
BEAM=${BEAM:-4}
. scripts/bench-prologue.sh

"$PY" scripts/bench_torch.py weights --out "$OUT" --batch 32 --src_len 64 --tgt_len "$TGT_LEN"
"$BUILD/bin/txc" examples/transformer/base.tx -D batch=32 -D max_len=64 -o "$OUT/base"

: > "$OUT/rounds.txt"
for round in $(seq "$ROUNDS"); do
  for b in 1 8 32; do
    "$PY" -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:int(sys.argv[3])])" \
      "$OUT/src.npy" "$OUT/src$b.npy" "$b"
    beam_txc=() beam_torch=()
    if [ "$BEAM" -gt 0 ]; then
      beam_txc=(--beam "$BEAM" --beam-out "$OUT/txc-beam$b.npy")
      beam_torch=(--beam "$BEAM" --beam-out "$OUT/torch-beam$b.npy")
    fi
    TXRT_NUM_THREADS=$THREADS "${RT[@]}" "$OUT/base" bench --load "$OUT/weights.safetensors" \
      --sources "$OUT/src$b.npy" --tgt-len "$TGT_LEN" --decode-only --decode-out "$OUT/txc$b.npy" \
      "${beam_txc[@]}" > "$OUT/txc.txt"
    "${RT[@]}" "$PY" scripts/bench_torch.py greedy-cache --threads "$THREADS" --load "$OUT/weights.safetensors" \
      --sources "$OUT/src$b.npy" --tgt_len "$TGT_LEN" --repeat 3 --tokens-out "$OUT/torch$b.npy" \
      "${beam_torch[@]}" > "$OUT/torch.txt"
    t=$(sed -nE 's/^greedy .* ([0-9]+) tokens\/s$/\1/p' "$OUT/txc.txt")
    p=$(sed -nE 's/^torch_greedy_cache_tokens_per_s ([0-9.]+)$/\1/p' "$OUT/torch.txt")
    echo "round $round batch $b: txc $t tokens/s, PyTorch $p tokens/s" | tee -a "$OUT/rounds.txt"
    if [ "$BEAM" -gt 0 ]; then
      t=$(sed -nE 's/^beam .* ([0-9]+) tokens\/s$/\1/p' "$OUT/txc.txt")
      p=$(sed -nE 's/^torch_beam_cache_tokens_per_s ([0-9.]+)$/\1/p' "$OUT/torch.txt")
      echo "round $round beam $BEAM batch $b: txc $t tokens/s, PyTorch $p tokens/s" | tee -a "$OUT/rounds.txt"
    fi
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$PY" - "$OUT" "$TGT_LEN" <<'PYEOF'
import re
import statistics
import sys
import numpy as np
out, length = sys.argv[1], sys.argv[2]
rates = {}
for line in open(out + "/rounds.txt"):
    m = re.match(r"round \d+ (beam \d+ )?batch (\d+): txc ([0-9.]+) tokens/s, PyTorch ([0-9.]+) tokens/s", line)
    key = ((m.group(1) or "greedy").strip(), int(m.group(2)))
    rates.setdefault(key, []).append((float(m.group(3)), float(m.group(4))))
print("decoding, %s tokens per row, KV cache on both sides (median of the rounds)" % length)
print("| search | batch | txc tokens/s | PyTorch tokens/s | ratio | tokens |")
print("|---|---|---|---|---|---|")
figures = []
for (search, b), pairs in sorted(rates.items(), key=lambda kv: (kv[0][0] != "greedy", kv[0])):
    txc = statistics.median(p[0] for p in pairs)
    torch = statistics.median(p[1] for p in pairs)
    infix = "" if search == "greedy" else "-beam"
    a = np.load("%s/txc%s%d.npy" % (out, infix, b))
    t = np.load("%s/torch%s%d.npy" % (out, infix, b))
    if a.shape == t.shape and (a == t).all():
        same = "identical"
    else:
        rows = [r for r in range(len(a)) if not (a[r] == t[r]).all()]
        first = min(int(np.argmax(a[r] != t[r])) for r in rows)
        same = "%d of %d rows differ (first at position %d)" % (len(rows), len(a), first)
    # PyTorch's rate below 0.05 tokens/s prints as 0: no finite ratio.
    ratio = txc / torch if torch > 0 else float("inf")
    print("| %s | %d | %.0f | %.1f | %.2fx | %s |" % (search, b, txc, torch, ratio, same))
    # Without a PyTorch rate the line has no ratio (no number to print).
    figures.append("FIGURE decode.%s.batch%d %.0f tokens/s%s vs=pytorch_kv_cache"
                   % (search.replace(" ", ""), b, txc,
                      " ratio=%.3f" % ratio if torch > 0 else ""))
# One FIGURE line per figure (scripts/bench_summary.py reads them).
print("\n".join(figures))
PYEOF
