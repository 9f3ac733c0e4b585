#!/usr/bin/env python3
"""gpu_kernel_times.py NCU_CSV [ROWS]: the kernels of an Nsight Compute run
(`ncu --metrics gpu__time_duration.sum --csv ...`, scripts/bench-gpu.sh)
summed by name: total time, launches, and the ROWS (default 25) slowest
names with their time and launches. Exits 1 when the file has no kernel."""
import collections
import csv
import sys

SCALE = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def main():
    path = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    table = [r for r in csv.reader(open(path, errors="replace")) if len(r) > 10]
    if not table or "Kernel Name" not in table[0]:
        print("%s: no kernels (ncu failed?)" % path)
        return 1
    head = table[0]
    name_at, value_at = head.index("Kernel Name"), head.index("Metric Value")
    unit_at = head.index("Metric Unit")
    total, launches = collections.Counter(), collections.Counter()
    for row in table[1:]:
        try:
            ns = float(row[value_at].replace(",", "")) * SCALE.get(row[unit_at], 1.0)
        except ValueError:
            continue
        name = row[name_at][:80]
        total[name] += ns
        launches[name] += 1
    print("kernel time %.1f ms over %d launches" % (sum(total.values()) / 1e6,
                                                   sum(launches.values())))
    for name, ns in total.most_common(rows):
        print("%9.2f ms %5d  %s" % (ns / 1e6, launches[name], name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
