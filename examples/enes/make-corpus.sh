#!/usr/bin/env bash
#===- make-corpus.sh - an English->Spanish corpus from Debian packages ------===#
#
# English sentences from WordNet 3.0 (wordnet-base: the glosses of
# /usr/share/wordnet/data.{noun,verb,adj,adv} and the quoted examples in
# them), translated to Spanish by Apertium (apertium-eng-spa). Deterministic:
# the same packages give byte-identical files.
#
#   examples/enes/make-corpus.sh [--out DIR] [--small N] [--valid N] [--test N]
#                                [--seed N] [--jobs N]
#
# writes DIR/{train,valid,test}.tsv (source<TAB>target, UTF-8, one pair a
# line; DIR defaults to examples/enes/data). --small N keeps the first N
# sentences (after a seeded shuffle) before translating, for tests.
#
# Steps: extract sentences (3..40 words, ASCII, no '\t'), deduplicate,
# shuffle with --seed, translate in chunks with `apertium -f line` (one
# sentence a line; a chunk whose output has a different number of lines is
# dropped whole, so a merged or split line can never misalign pairs), drop
# pairs whose translation holds Apertium's unknown-word marks (* # @),
# deduplicate the pairs and split off --valid and --test pairs.
#
#===------------------------------------------------------------------------===#
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="$here/data"
small=0
valid=3000
test=3000
seed=1
jobs=$(nproc 2>/dev/null || echo 2)
chunk=2000

usage() {
  sed -n '/^#   examples/,/^# line/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
number() { [[ "$2" =~ ^[0-9]+$ ]] || { echo "make-corpus: error: $1 needs a number, got '$2'" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?}"; shift 2 ;;
    --small) number "$1" "${2:-}"; small="$2"; shift 2 ;;
    --valid) number "$1" "${2:-}"; valid="$2"; shift 2 ;;
    --test) number "$1" "${2:-}"; test="$2"; shift 2 ;;
    --seed) number "$1" "${2:-}"; seed="$2"; shift 2 ;;
    --jobs) number "$1" "${2:-}"; jobs="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "make-corpus: error: unknown option '$1'" >&2; usage ;;
  esac
done

for need in /usr/share/wordnet/data.noun; do
  [ -r "$need" ] || { echo "make-corpus: error: $need not found (apt-get install wordnet-base)" >&2; exit 1; }
done
command -v apertium >/dev/null ||
  { echo "make-corpus: error: apertium not found (apt-get install apertium-eng-spa)" >&2; exit 1; }
pairs=$(apertium -l 2>/dev/null || true)
grep -qE '^\s*eng-spa\s*$' <<<"$pairs" ||
  { echo "make-corpus: error: apertium has no eng-spa pair (apt-get install apertium-eng-spa)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# 1. English sentences, deduplicated and shuffled.
python3 - "$work/english.txt" "$seed" "$small" <<'EOF'
import random, re, sys
out, seed, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sentences, seen = [], set()
def add(text):
    text = re.sub(r"\s+", " ", text).strip().strip(";").strip()
    if not text or not text.isascii() or "\t" in text:
        return
    words = len(text.split())
    if words < 3 or words > 40 or text in seen:
        return
    seen.add(text)
    sentences.append(text)
for part in ("noun", "verb", "adj", "adv"):
    for line in open(f"/usr/share/wordnet/data.{part}", encoding="latin-1"):
        if line.startswith("  ") or "|" not in line:
            continue  # the license header
        gloss = line.split("|", 1)[1]
        # Quoted examples first, then the definitions around them.
        for example in re.findall(r'"([^"]+)"', gloss):
            add(example)
        for definition in re.sub(r'"[^"]*"', "", gloss).split(";"):
            add(definition)
random.Random(seed).shuffle(sentences)
if small:
    sentences = sentences[:small]
open(out, "w").write("".join(s + "\n" for s in sentences))
EOF
total=$(wc -l < "$work/english.txt")
echo "make-corpus: $total English sentences from WordNet" >&2

# 2. Translate in chunks, $jobs at a time; a chunk is kept only when its
# line count survives.
split -l "$chunk" -d -a 4 "$work/english.txt" "$work/chunk."
ls "$work"/chunk.* | xargs -P "$jobs" -I{} sh -c 'apertium -f line eng-spa < "$1" > "$1.es"' _ {}

# 3. Pair, filter, deduplicate, split.
mkdir -p "$out"
python3 - "$work" "$out" "$seed" "$valid" "$test" <<'EOF'
import glob, os, random, sys
work, out, seed, n_valid, n_test = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
pairs, seen, dropped_chunks, unknown = [], set(), 0, 0
for path in sorted(p for p in glob.glob(os.path.join(work, "chunk.*")) if not p.endswith(".es")):
    english = open(path, encoding="utf-8").read().splitlines()
    spanish = open(path + ".es", encoding="utf-8").read().splitlines()
    if len(english) != len(spanish):
        dropped_chunks += 1
        continue
    for en, es in zip(english, spanish):
        es = " ".join(es.split())
        if not es or "\t" in es:
            continue
        if any(mark in es for mark in "*#@"):
            unknown += 1
            continue
        if (en, es) in seen:
            continue
        seen.add((en, es))
        pairs.append((en, es))
random.Random(seed + 1).shuffle(pairs)
if n_valid + n_test >= len(pairs):
    sys.exit(f"make-corpus: error: {len(pairs)} pairs cannot hold --valid {n_valid} and --test {n_test} and a training set")
splits = {"valid": pairs[:n_valid], "test": pairs[n_valid:n_valid + n_test],
          "train": pairs[n_valid + n_test:]}
for name, rows in splits.items():
    path = os.path.join(out, name + ".tsv")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("".join(f"{en}\t{es}\n" for en, es in rows))
    os.replace(path + ".tmp", path)
print(f"make-corpus: {len(pairs)} pairs ({unknown} dropped for unknown words, "
      f"{dropped_chunks} chunks dropped for misaligned lines): "
      + ", ".join(f"{name} {len(rows)}" for name, rows in splits.items()),
      file=sys.stderr)
EOF
echo "make-corpus: wrote $out/{train,valid,test}.tsv in $(( $(date +%s) - start )) s" >&2
