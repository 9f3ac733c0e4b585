#!/usr/bin/env python3
"""Generates the synthetic copy / reverse task as TSV (source<TAB>target).

Each line is a random sequence of the symbols 0..9 (space-separated words)
and, after a tab, the same sequence (copy) or its reverse (--reverse).
Deterministic for a given --seed.

  python3 examples/copy/generate.py --count 2000 --seed 1 > train.tsv
  python3 examples/copy/generate.py --count 200 --seed 2 --reverse > dev.tsv
"""
import argparse
import random
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="lines to write")
    parser.add_argument("--min-len", type=int, default=3, help="shortest sequence")
    parser.add_argument("--max-len", type=int, default=10, help="longest sequence")
    parser.add_argument("--symbols", type=int, default=10, help="alphabet size (<= 10)")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--reverse", action="store_true", help="target is the reverse")
    args = parser.parse_args(argv)
    if not 1 <= args.min_len <= args.max_len:
        parser.error("need 1 <= --min-len <= --max-len")
    if not 1 <= args.symbols <= 10:
        parser.error("--symbols must be in 1..10")
    if args.count < 0:
        parser.error("--count must be >= 0")
    rng = random.Random(args.seed)
    out = sys.stdout
    for _ in range(args.count):
        length = rng.randint(args.min_len, args.max_len)
        seq = [str(rng.randrange(args.symbols)) for _ in range(length)]
        target = list(reversed(seq)) if args.reverse else seq
        out.write(" ".join(seq) + "\t" + " ".join(target) + "\n")


if __name__ == "__main__":
    main()
