#!/usr/bin/env python3
"""Checks the compiler's runtime registry (compiler/lib/Conversion/
RuntimeAPI.cpp) against the C header (runtime/include/txrt/txrt.h): every
registered symbol is declared there, returns txrt_status, and takes the same
number of arguments of the same kinds (pointer, i64, i32, f32).

  check-runtime-api.py RuntimeAPI.cpp txrt.h
  check-runtime-api.py RuntimeAPI.cpp txrt_cuda.h --cuda
(the second form checks each function's CUDA symbol, skipping those the
registry gives none) prints one line per mismatch and `N functions match` when there are none."""
import re
import sys


def header_kind(param):
    param = param.strip()
    if "*" in param:
        return "Ptr"
    for ctype, kind in (("uint64_t", "I64"), ("int64_t", "I64"),
                        ("int32_t", "I32"), ("float", "F32")):
        if param.startswith(ctype + " ") or param.startswith("const " + ctype + " "):
            return kind
    return "?" + param


def main():
    registry = open(sys.argv[1]).read()
    header = open(sys.argv[2]).read()
    rows = re.findall(
        r'\{RuntimeFn::\w+,\s*"(\w+)",\s*(?:"(\w+)"|nullptr),\s*\{([^}]*)\}\}',
        registry)
    cuda = "--cuda" in sys.argv[3:]
    entries = [(c if cuda else s, a) for s, c, a in rows if c or not cuda]
    problems = []
    for symbol, args in entries:
        kinds = [a.strip().replace("A::", "") for a in args.split(",") if a.strip()]
        match = re.search(r"(\w+)\s+" + symbol + r"\(([^;]*)\);", header)
        if not match:
            problems.append("%s: not declared in the header" % symbol)
            continue
        if match.group(1) != "txrt_status":
            problems.append("%s: returns %s, not txrt_status" % (symbol, match.group(1)))
        declared = [header_kind(p) for p in match.group(2).split(",")]
        if declared != kinds:
            problems.append("%s: registry %s, header %s" % (symbol, kinds, declared))
    for problem in problems:
        print(problem)
    if not problems:
        print("%d functions match" % len(entries))
    return 1 if problems or not entries else 0


if __name__ == "__main__":
    sys.exit(main())
