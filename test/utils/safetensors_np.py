"""safetensors read/write with numpy alone (no torch, no `safetensors`
package), for the test scripts beside it: F32 / F64 / I32 / I64 tensors,
little-endian, `__metadata__` a dict of strings.

  from safetensors_np import read_safetensors, write_safetensors
  tensors, metadata = read_safetensors("w.safetensors")   # {name: ndarray}
  write_safetensors("w.safetensors", tensors, {"format": "pt"})

Tensors keep the file's order (dicts are ordered); writing goes through
PATH.tmp and a rename.
"""
import json
import os

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}
NAMES = {np.dtype(v).str: k for k, v in DTYPES.items()}


def read_safetensors(path):
    """Returns ({name: ndarray} in file order, {metadata key: value})."""
    with open(path, "rb") as f:
        blob = f.read()
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + size].decode("utf-8"))
    metadata = header.pop("__metadata__", {}) or {}
    data = blob[8 + size:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).copy()
    return tensors, metadata


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: ndarray} (float32 unless the array is f64/i32/i64) in
    the dict's order: 8-byte header length, JSON header padded with spaces
    to 8 bytes, the data."""
    header = {"__metadata__": dict(metadata or {})}
    blobs, offset = [], 0
    for name, array in tensors.items():
        array = np.asarray(array)
        if array.dtype.str not in NAMES:
            array = array.astype("<f4")
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": NAMES[array.dtype.str],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for blob in blobs:
            f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
