# Usage: check-trace.py TRACE.json
# Checks a Chrome trace-event JSON as `run --profile-trace` writes it: a
# "traceEvents" array whose events have the fields the format requires
# (name, ph, pid, tid; complete events "X" also ts and dur, in microseconds,
# dur >= 0), runtime calls nested inside their entry call, and prints the
# number of entry calls and runtime calls and the mean entry call in ms.
import json
import sys

trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
assert isinstance(events, list) and events, "no traceEvents"
entries, calls = [], []
for e in events:
    for key in ("name", "ph", "pid", "tid"):
        assert key in e, f"{key} missing in {e}"
    if e["ph"] == "X":
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)), e
        assert e["dur"] >= 0, e
        (entries if e.get("cat") == "entry" else calls).append(e)
for c in calls:
    assert any(p["ts"] <= c["ts"] and c["ts"] + c["dur"] <= p["ts"] + p["dur"] + 1e-3
               for p in entries), f"runtime call outside every entry call: {c}"
mean = sum(e["dur"] for e in entries) / len(entries) / 1000.0
print(f"trace: {len(entries)} entry calls, {len(calls)} runtime calls, "
      f"mean entry call {mean:.3f} ms")
# A forward call labelled with its backward's op (dropout and attention
# share a site, their random stream, with the backward), or the reverse.
def backward(name):
    return "_bwd" in name or "_grad" in name
mislabelled = [c for c in calls if "op" in c.get("args", {})
               and backward(c["name"]) != c["args"]["op"].endswith("_grad")]
ops = sorted({(c["name"], c["args"]["op"]) for c in calls
              if "op" in c.get("args", {}) and ("dropout" in c["name"]
                                                 or "attention" in c["name"])})
print(f"labels: {len(mislabelled)} calls labelled with another direction's op; "
      + ", ".join(f"{k} as {o}" for k, o in ops))
