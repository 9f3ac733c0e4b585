#!/usr/bin/env python3
"""count-patterns: reads tx IR (txc --emit=tx) on stdin and prints, per
function, how many scaled dot-product attention patterns and residual
add + layer_norm patterns it holds, found by def-use chains:

  attention:      softmax(S) whose S comes from matmul through any of
                  div / mul / scale / masked_fill, and whose result feeds
                  a matmul (possibly through dropout)
  add_layer_norm: layer_norm whose input is the result of tx.add

Output lines: `@func attention=N add_layer_norm=M`. lit tests FileCheck it
to show what the fusion passes will find in a spec written plainly.
"""
import re
import sys

DEF = re.compile(r'^\s*(%[\w#:]+)(?::\d+)? = (tx\.\w+|[\w.]+) (.*)$')
FUNC = re.compile(r'^\s*func\.func @(\w+)')


def operands(rest):
    return re.findall(r'%[\w#]+', rest.split(' : ')[0])


def main():
    funcs = []
    for line in sys.stdin:
        m = FUNC.match(line)
        if m:
            funcs.append((m.group(1), {}, []))
            continue
        m = DEF.match(line)
        if m and funcs:
            name, op, rest = m.groups()
            ops = operands(rest)
            funcs[-1][1][name] = (op, ops)
            funcs[-1][2].append((name, op, ops))
    for fname, defs, order in funcs:
        users = {}
        for name, op, ops in order:
            for o in ops:
                users.setdefault(o, []).append(op)
        attention = 0
        add_norm = 0
        for name, op, ops in order:
            if op == 'tx.layer_norm' and ops and defs.get(ops[0], ('',))[0] == 'tx.add':
                add_norm += 1
            if op != 'tx.softmax' or not ops:
                continue
            # Walk back through the score chain to a matmul.
            cur, seen_matmul = ops[0], False
            for _ in range(8):
                d = defs.get(cur)
                if not d:
                    break
                if d[0] == 'tx.matmul':
                    seen_matmul = True
                    break
                if d[0] not in ('tx.div', 'tx.mul', 'tx.scale', 'tx.masked_fill'):
                    break
                cur = d[1][0]
            # Forward: softmax (-> dropout) -> matmul.
            fwd = users.get(name, [])
            if 'tx.dropout' in fwd:
                drop = [n for n, o, a in order if o == 'tx.dropout' and name in a]
                fwd = [u for d in drop for u in users.get(d, [])]
            if seen_matmul and 'tx.matmul' in fwd:
                attention += 1
        print('@%s attention=%d add_layer_norm=%d' % (fname, attention, add_norm))


if __name__ == '__main__':
    main()
