"""Prints the roles in txc's metadata (txc --emit=metadata or the
executable's `info --json`, on stdin), one line per entry, for FileCheck:

    kind language_model inferred=False
    entry logits role=logits inputs=ids@tokens outputs=logits
"""
import json
import sys

meta = json.load(sys.stdin)
print("kind", meta["kind"], "inferred=%s" % meta["kind_inferred"])
for entry in meta["entries"]:
    def sigs(key):
        return ",".join(t["name"] + ("@" + t["role"] if t["role"] else "")
                        for t in entry[key])
    print("entry", entry["name"], "role=" + entry["role"],
          "inputs=" + sigs("inputs"), "outputs=" + sigs("outputs"))
