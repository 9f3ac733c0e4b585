#!/usr/bin/env python3
"""compare-params TXC_LIST TORCH_LIST: checks that `txc --list-params` and
test/golden/seed_model.py --list-params name the same parameters with the
same shapes and the same total. Prints the common total; exits 1 with the
differences otherwise."""
import re
import sys


def read(path):
    params, total = {}, None
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        m = re.match(r'total: (\d+) parameters', line)
        if m:
            total = int(m.group(1))
            continue
        m = re.match(r'(\S+)\s+(\[[^\]]*\])', line)
        if m:
            params[m.group(1)] = [int(x) for x in re.findall(r'\d+', m.group(2))]
    return params, total


def main():
    ours, our_total = read(sys.argv[1])
    ref, ref_total = read(sys.argv[2])
    errors = []
    for name in sorted(set(ref) - set(ours)):
        errors.append('missing in txc: %s %s' % (name, ref[name]))
    for name in sorted(set(ours) - set(ref)):
        errors.append('extra in txc: %s %s' % (name, ours[name]))
    for name in sorted(set(ours) & set(ref)):
        if ours[name] != ref[name]:
            errors.append('shape of %s: txc %s, torch %s' % (name, ours[name], ref[name]))
    if our_total != ref_total:
        errors.append('total: txc %s, torch %s' % (our_total, ref_total))
    if errors:
        print('\n'.join(errors))
        sys.exit(1)
    print('match: %d tensors, %d parameters' % (len(ours), our_total))


if __name__ == '__main__':
    main()
