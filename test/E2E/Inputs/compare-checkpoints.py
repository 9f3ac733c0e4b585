#!/usr/bin/env python3
"""Compares two safetensors checkpoints tensor by tensor.

usage: compare-checkpoints.py A.safetensors B.safetensors --rtol R
                              [--moments-rtol M] [--exclude REGEX]

Every tensor of A (but those whose name matches --exclude) must be in B
with the same shape; f32 tensors must agree within ||a - b|| <= rtol * ||a||
per tensor (2-norms: the relative error of the tensor as a vector), Adam's
moments (names ending in .exp_avg or .exp_avg_sq) within M when given,
integer tensors exactly; a NaN or infinity in either is a mismatch.
Prints the worst tensor and exits 1 on a mismatch. Reads the format directly (8-byte header length,
JSON header, raw little-endian data) with numpy.
"""
import argparse
import json
import re
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "I64": np.int64, "I32": np.int32, "F64": np.float64,
          "BF16": np.uint16, "U8": np.uint8}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--moments-rtol", type=float, default=None)
    parser.add_argument("--exclude", default=None)
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    worst, worst_name, worst_bound, worst_ratio, count = 0.0, "", args.rtol, 0.0, 0
    for name, x in a.items():
        if args.exclude and re.search(args.exclude, name):
            continue
        if name not in b or b[name].shape != x.shape:
            print(f"mismatch: {name} missing or reshaped in {args.b}")
            return 1
        y = b[name]
        count += 1
        if x.dtype.kind != "f":
            if not np.array_equal(x, y):
                print(f"mismatch: {name} differs")
                return 1
            continue
        x64 = x.astype(np.float64)
        if not (np.isfinite(x64).all() and np.isfinite(y.astype(np.float64)).all()):
            # A NaN error compares false with every bound: say so instead.
            print(f"mismatch: {name} is not finite")
            return 1
        scale = max(float(np.linalg.norm(x64)), 1e-30)
        error = float(np.linalg.norm(x64 - y)) / scale
        moment = name.endswith((".exp_avg", ".exp_avg_sq"))
        bound = args.moments_rtol if moment and args.moments_rtol is not None else args.rtol
        ratio = error / bound if bound > 0 else (float("inf") if error > 0 else 0.0)
        if ratio > worst_ratio or (ratio == worst_ratio and error > worst):
            worst, worst_name, worst_bound, worst_ratio = error, name, bound, ratio
    if count == 0:
        print("mismatch: no tensor compared")
        return 1
    good = worst <= worst_bound
    status = "ok" if good else "mismatch"
    print(f"{status}: {count} tensors, worst relative error {worst:.3g}"
          f" ({worst_name or 'none'}), bound {worst_bound:g}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
