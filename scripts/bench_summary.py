#!/usr/bin/env python3
#===- bench_summary.py - one table of the FIGURE lines of benchmark logs ---===#
#
# Usage: scripts/bench_summary.py LOG...
# Reads the logs of the bench-*.sh scripts (scripts/bench-all.sh writes one
# per script and one of its own), collects their FIGURE lines and prints one
# table: figure, value, ratio / baseline, target, and whether the target is
# met. A FIGURE line is
#
#   FIGURE <key> <value> <unit> [ratio=<r>] [vs=<baseline>] [target=<op><t>] [floor=<f>]
#
# key: letters, digits and . _ - ; value, r, t, f: numbers; op: >= <= > <;
# unit and baseline: one word each. The target is checked against the ratio
# when the line has one, else against the value. Also printed: the machine
# lines the scripts print (`cpu: ...`, bench-prologue.sh), every load
# average a log names (the first and the last of each log), bench-all.sh's
# `NOTE <text>` lines (in the header) and its `PART <name> <ok|FAILED|skipped>
# [text]` lines (a FAILED or skipped part gets a row; a part that ran but
# whose log <name>.log has no FIGURE line is named below the table).
# A malformed FIGURE line is reported as `error: FILE:LINE: ...` and left out
# of the table. Exit 0, or 2 (one error line naming the file) when a log
# cannot be read.
#
#===------------------------------------------------------------------------===#
import os
import re
import sys

KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
NUMBER = re.compile(r"^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$")
TARGET = re.compile(r"^(>=|<=|>|<)(.+)$")
WORD = re.compile(r"^[^\s=]+$")
LOAD = re.compile(r"load average[a-z ]*:? ([0-9.]+),? ([0-9.]+),? ([0-9.]+)")
USAGE = ("expected FIGURE <key> <value> <unit> [ratio=<r>] [vs=<baseline>] "
         "[target=<op><t>] [floor=<f>]")


class Malformed(Exception):
    pass


def parse_figure(fields):
    """The fields of a FIGURE line (without the word FIGURE) as a dict."""
    if len(fields) < 3:
        raise Malformed("too few fields")
    key, value, unit = fields[:3]
    if not KEY.match(key):
        raise Malformed("bad key '%s'" % key)
    if not NUMBER.match(value):
        raise Malformed("value '%s' is not a number" % value)
    if not WORD.match(unit):
        raise Malformed("bad unit '%s'" % unit)
    fig = {"key": key, "value": value, "unit": unit}
    for attr in fields[3:]:
        name, eq, text = attr.partition("=")
        if not eq or not text:
            raise Malformed("'%s' is not name=value" % attr)
        if name in fig:
            raise Malformed("'%s' given twice" % name)
        if name in ("ratio", "floor"):
            if not NUMBER.match(text):
                raise Malformed("%s '%s' is not a number" % (name, text))
        elif name == "vs":
            if not WORD.match(text):
                raise Malformed("bad baseline '%s'" % text)
        elif name == "target":
            m = TARGET.match(text)
            if not m or not NUMBER.match(m.group(2)):
                raise Malformed("target '%s' is not <op><number> (op: >= <= > <)" % text)
        else:
            raise Malformed("unknown attribute '%s'" % name)
        fig[name] = text
    return fig


def verdict(fig):
    if "target" not in fig:
        return "no target"
    op, bound = TARGET.match(fig["target"]).groups()
    x, t = float(fig.get("ratio", fig["value"])), float(bound)
    ok = {">=": x >= t, "<=": x <= t, ">": x > t, "<": x < t}[op]
    return "met" if ok else "NOT met"


def read_logs(paths):
    texts = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append((path, f.read().splitlines()))
        except OSError as e:
            print("error: cannot read log %s: %s" % (path, e.strerror or e), file=sys.stderr)
            sys.exit(2)
    return texts


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: bench_summary.py LOG...", file=sys.stderr)
        return 2 if not argv else 0
    logs = read_logs(argv)
    rows, cpus, loads, notes, parts, errors = [], [], [], [], [], []
    figures_in = {}
    for path, lines in logs:
        name = os.path.basename(path)
        figures_in[name] = 0
        seen = []
        for number, line in enumerate(lines, 1):
            if line.startswith("FIGURE ") or line == "FIGURE":
                try:
                    fig = parse_figure(line.split()[1:])
                except Malformed as e:
                    errors.append("error: %s:%d: malformed FIGURE line (%s; %s): %s"
                                  % (path, number, e, USAGE, line))
                    continue
                rows.append(fig)
                figures_in[name] += 1
            elif line.startswith("cpu: "):
                cpu = line[len("cpu: "):].split(", threads")[0].split(", load average")[0]
                if cpu not in cpus:
                    cpus.append(cpu)
            elif line.startswith("NOTE "):
                notes.append(line[len("NOTE "):])
            elif line.startswith("PART "):
                f = line.split(None, 3)
                if len(f) >= 3:
                    parts.append((f[1], f[2], f[3] if len(f) > 3 else ""))
            m = LOAD.search(line)
            if m:
                seen.append(" ".join(m.groups()))
        if seen:
            loads.append("%s: %s" % (name, seen[0] if len(seen) == 1
                                     else "%s at first, %s at last" % (seen[0], seen[-1])))

    print("benchmark figures%s" % "".join("; " + n for n in notes))
    for cpu in cpus:
        print("cpu: %s" % cpu)
    for load in loads:
        print("load average, %s" % load)
    table = [("figure", "value", "ratio / baseline", "target", "result")]
    for fig in rows:
        value = "%s %s" % (fig["value"], fig["unit"])
        against = []
        if "ratio" in fig:
            against.append("%sx" % fig["ratio"])
        if "vs" in fig:
            against.append("vs %s" % fig["vs"])
        if "floor" in fig:
            against.append("floor %s %s" % (fig["floor"], fig["unit"]))
        table.append((fig["key"], value, " ".join(against), fig.get("target", ""), verdict(fig)))
    for part, status, text in parts:
        if status == "FAILED":
            table.append((part, "FAILED", "", "", text))
        elif status == "skipped":
            table.append((part, "skipped", "", "", text))
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for i, r in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for part, status, _ in parts:
        if status == "ok" and figures_in.get(part + ".log", 0) == 0:
            print("part %s ran but printed no FIGURE line (see %s.log)" % (part, part))
    met = sum(1 for f in rows if verdict(f) == "met")
    missed = [f["key"] for f in rows if verdict(f) == "NOT met"]
    print("%d figures, %d with a target: %d met, %d NOT met%s"
          % (len(rows), met + len(missed), met, len(missed),
             (" (" + ", ".join(missed) + ")") if missed else ""))
    failed = [p for p, s, _ in parts if s == "FAILED"]
    if failed:
        print("FAILED parts: %s" % ", ".join(failed))
    sys.stdout.flush()
    for e in errors:
        print(e, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
