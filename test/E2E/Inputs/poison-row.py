"""Writes a copy of a txc checkpoint with one row of a parameter set to a
value (and without its checksums, which cover the data): weights that give
non-finite outputs only where that row is read.

usage: poison-row.py IN OUT TENSOR WORD VALUE
WORD is looked up in the checkpoint's tokenizer (its source vocabulary); a
number is taken as the row itself.
"""
import json
import struct
import sys

source, target, tensor, word, value = sys.argv[1:]
data = bytearray(open(source, "rb").read())
(length,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + length])
metadata = header["__metadata__"]
if word.isdigit():
    row = int(word)
else:
    row = json.loads(metadata["tokenizer"])["source"].index(word)
entry = header[tensor]
assert entry["dtype"] == "F32", entry
width = 1
for size in entry["shape"][1:]:
    width *= size
begin = 8 + length + entry["data_offsets"][0] + row * width * 4
data[begin : begin + width * 4] = struct.pack("<f", float(value)) * width
metadata.pop("checksums", None)
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(target, "wb") as out:
    out.write(struct.pack("<Q", len(text)) + text + data[8 + length :])
