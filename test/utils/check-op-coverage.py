#!/usr/bin/env python3
"""check-op-coverage TXOPS_TD DIALECT_DOC ROUNDTRIP_MLIR: every op declared
in TxOps.td (directly or through a class such as Tx_BinaryOp<"add", ...>)
has a section with an MLIR example in the generated dialect reference and
appears in the round-trip test. Prints the op count, or what is missing."""
import re
import sys


def declared_ops(td_text):
    ops = set()
    for m in re.finditer(r'^def Tx_\w+Op\s*:\s*Tx_\w+<"(\w+)"', td_text, re.M):
        ops.add(m.group(1))
    return ops


def main():
    td, doc, roundtrip = (open(p).read() for p in sys.argv[1:4])
    ops = declared_ops(td)
    missing = []
    sections = re.split(r'^### ', doc, flags=re.M)
    documented = {}
    for section in sections:
        m = re.match(r'`tx\.(\w+)`', section)
        if m:
            documented[m.group(1)] = section
    for op in sorted(ops):
        if op not in documented:
            missing.append('not in the dialect reference: tx.%s' % op)
        elif '```mlir' not in documented[op]:
            missing.append('no MLIR example in the reference of tx.%s' % op)
        if not re.search(r'\btx\.%s\b' % op, roundtrip):
            missing.append('not in the round-trip test: tx.%s' % op)
    if missing:
        print('\n'.join(missing))
        sys.exit(1)
    print('%d ops: documented with examples and round-tripped' % len(ops))


if __name__ == '__main__':
    main()
