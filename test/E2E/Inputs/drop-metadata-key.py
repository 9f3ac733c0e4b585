"""Writes a copy of a safetensors file without some __metadata__ keys (and
without its checksums, which cover the metadata): an older build's file.

usage: drop-metadata-key.py IN OUT KEY...
"""
import json
import struct
import sys

source, target, *keys = sys.argv[1:]
data = open(source, "rb").read()
(length,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + length])
for key in keys + ["checksums"]:
    header["__metadata__"].pop(key, None)
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(target, "wb") as out:
    out.write(struct.pack("<Q", len(text)) + text + data[8 + length :])
