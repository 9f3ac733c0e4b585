#!/usr/bin/env python3
"""check-op-coverage TXOPS_TD DIALECT_DOC ROUNDTRIP_MLIR...: every op declared
in TxOps.td or a tx .td file it includes (directly or through a class such as
Tx_BinaryOp<"add", ...>) has a section with an MLIR example in the generated
dialect reference and appears in one of the round-trip tests. Prints the op
count, or what is missing."""
import os
import re
import sys


def declared_ops(td_text):
    ops = set()
    for m in re.finditer(r'^def Tx_\w+Op\s*:\s*Tx_\w+<"(\w+)"', td_text, re.M):
        ops.add(m.group(1))
    return ops


def td_with_includes(path):
    """The text of `path` and of the tx/Dialect files it includes."""
    text = open(path).read()
    folder = os.path.dirname(path)
    for name in re.findall(r'^include "tx/Dialect/(\w+\.td)"', text, re.M):
        included = os.path.join(folder, name)
        if os.path.exists(included) and name != os.path.basename(path):
            text += "\n" + td_with_includes(included)
    return text


def main():
    td = td_with_includes(sys.argv[1])
    doc = open(sys.argv[2]).read()
    roundtrip = "\n".join(open(p).read() for p in sys.argv[3:])
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
