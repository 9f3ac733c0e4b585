#!/usr/bin/env python3
"""Checks the structure of txc --emit=dot output and prints a summary.

For every `digraph`: braces balance, every edge's ends are declared nodes,
every solid edge carries a shape label ("[B, T, 512]", "i32[B, S]", "[]"),
every cluster has a label that is a dotted scope path nested in its parent's,
and fused nodes (gold) name what they absorbed. Prints, per graph:
  graph NAME: N nodes, E edges, C clusters, F fused
  cluster PATH            (one line each, in order)
  fused OP: a, b, c       (one line each, in order)
  folded: LABEL           (the backward/optimizer node, when present)
Exits 1 with a message on the first violation.
"""
import re
import sys

SHAPE = re.compile(r'^(?:[a-z0-9]+)?\[[^\]]*\]$')


def fail(msg):
    sys.exit("check-dot: " + msg)


def main(path):
    text = open(path).read() if path != "-" else sys.stdin.read()
    graphs = re.split(r'(?m)^(?=digraph )', text)
    graphs = [g for g in graphs if g.strip()]
    if not graphs:
        fail("no digraph")
    for g in graphs:
        m = re.match(r'digraph "([^"]+)" \{', g)
        if not m:
            fail("a graph does not start with digraph \"NAME\" {")
        name = m.group(1)
        if g.count("{") != g.count("}"):
            fail(f"{name}: unbalanced braces")
        nodes = {}
        for nm in re.finditer(r'(?m)^\s*(n\d+) \[(.*)\];$', g):
            nodes[nm.group(1)] = nm.group(2)
        edges = re.findall(r'(?m)^\s*(n\d+) -> (n\d+) \[(.*)\];$', g)
        for a, b, attrs in edges:
            if a not in nodes or b not in nodes:
                fail(f"{name}: edge {a} -> {b} to an undeclared node")
            if "style=dashed" in attrs:
                continue
            lm = re.search(r'label="([^"]*)"', attrs)
            if not lm or not SHAPE.match(lm.group(1)):
                fail(f"{name}: edge {a} -> {b} has no shape label: {attrs}")
        # Clusters: nesting by indentation of their `subgraph` lines.
        stack, clusters = [], []
        for line in g.splitlines():
            sm = re.match(r'^(\s*)subgraph cluster_\d+ \{$', line)
            if sm:
                stack.append(len(sm.group(1)))
                clusters.append([len(stack), None])
                continue
            lm = re.match(r'^\s*label="([^"]*)";$', line)
            if lm and clusters and clusters[-1][1] is None:
                clusters[-1][1] = lm.group(1)
            if re.match(r'^\s*\}$', line) and stack:
                stack.pop()
        parents = {}
        for depth, label in clusters:
            if not label or not re.match(r'^[A-Za-z_][\w]*(\.[\w]+)*$', label):
                fail(f"{name}: cluster label {label!r} is not a scope path")
            parent = parents.get(depth - 1)
            if depth > 1 and parent and not label.startswith(parent + "."):
                fail(f"{name}: cluster {label} is not inside {parent}")
            parents[depth] = label
        fused = [(v.split('\\n')[0].split('"')[-1], v)
                 for v in nodes.values() if "fused: " in v]
        for op, v in fused:
            if "#ffe08a" not in v:
                fail(f"{name}: fused {op} is not highlighted")
        print(f"graph {name}: {len(nodes)} nodes, {len(edges)} edges, "
              f"{len(clusters)} clusters, {len(fused)} fused")
        for _, label in clusters:
            print(f"cluster {label}")
        for op, v in fused:
            what = re.search(r'fused: ([^\\"]*)', v).group(1)
            print(f"fused {op}: {what}")
        for v in nodes.values():
            if "shape=note" in v:
                print("folded: " + re.search(r'label="([^"]*)"', v).group(1)
                      .replace("\\n", " / "))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "-")
