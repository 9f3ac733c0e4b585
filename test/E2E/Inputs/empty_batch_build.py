# Usage: empty_batch_build.py SRC OBJ CXX SPEC DIR [txc flags...]
# For empty-batch-gradients.test: compiles SPEC to DIR/model.o and
# DIR/meta.json, builds DIR/harness from empty_batch_harness.c, and writes
# DIR/entries (the entry names in txc_entry_table's order).
import json
import os
import shlex
import subprocess
import sys

src, obj, cxx, spec, out = sys.argv[1:6]
flags = sys.argv[6:]
os.makedirs(out, exist_ok=True)
txc = os.path.join(obj, "bin", "txc")
subprocess.run([txc, spec, "--emit=obj", "-o", out + "/model.o"] + flags,
               check=True, stderr=subprocess.DEVNULL)
meta = subprocess.run([txc, spec, "--emit=metadata"] + flags, check=True,
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
open(out + "/meta.json", "wb").write(meta)
names = [e["name"] for e in json.loads(meta)["entries"]]
open(out + "/entries", "w").write("\n".join(names) + "\n")
cc = shlex.split(cxx)
harness = os.path.join(src, "test/E2E/Inputs/empty_batch_harness.c")
subprocess.run(cc + ["-x", "c", "-std=c11", "-c", "-I", out, "-I",
                     os.path.join(src, "runtime/include"),
                     "-DENTRY_NAMES=" + json.dumps(",".join(names)),
                     harness, "-o", out + "/harness.o"], check=True)
subprocess.run(cc + [out + "/harness.o", out + "/model.o",
                     os.path.join(obj, "lib/libtxrt.a"), "-ldnnl", "-fopenmp",
                     "-o", out + "/harness"], check=True)
