#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (test/fuzz/corpus/TARGET/).

Run from anywhere: /usr/bin/python3 test/fuzz/make-seed-corpora.py
The seeds are committed; rerun this after changing the examples or the
tests it copies from, or the formats. It writes:

  spec-frontend/   the examples' specs, every `#--- NAME.tx` section of the
                   lit tests (split-file), valid and invalid ones, and the
                   specs under test/*/Inputs/
  safetensors/     a training checkpoint of the model SafetensorsFuzzer.cpp
                   builds (w f32[2,3], b f32[3], Adam moments, metadata with
                   a tokenizer), its parameters alone, and files with the
                   other dtypes, empty tensors and metadata only
  npy/             small arrays of every dtype the reader takes, version 1
                   and 2 headers, scalars, empty arrays, and text id files
  parallel-text/   the toy EN-ES pairs and small TSV files (CRLF, UTF-8,
                   punctuation)
  tokenizer-json/  tokenizer files as `train` writes them (pad 0 and not)
"""
import io
import json
import os
import re
import shutil
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "test", "fuzz", "corpus")


def write(target, name, data):
    path = os.path.join(OUT, target, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)


def spec_seeds():
    for example in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        folder = os.path.join(ROOT, "examples", example)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(".tx"):
                with open(os.path.join(folder, name), "rb") as f:
                    write("spec-frontend", f"examples-{example}-{name}", f.read())
    section = re.compile(r"^#--- (\S+\.tx)$")
    for folder, _, files in sorted(os.walk(os.path.join(ROOT, "test"))):
        if os.path.join("test", "fuzz") in folder:
            continue
        for name in sorted(files):
            if name.endswith(".tx") and os.path.basename(folder) == "Inputs":
                with open(os.path.join(folder, name), "rb") as f:
                    suite = os.path.basename(os.path.dirname(folder))
                    write("spec-frontend", f"{suite}-inputs-{name}", f.read())
                continue
            if not name.endswith(".test"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                lines = f.read().split("\n")
            current, body = None, []
            for line in lines + ["#--- end"]:
                m = section.match(line) or (line.startswith("#--- ") and line)
                if m:
                    if current:
                        stem = os.path.splitext(name)[0]
                        text = "\n".join(body).rstrip("\n") + "\n"
                        if len(text) <= 16384:
                            write("spec-frontend", f"{stem}-{current}", text)
                    current = m.group(1) if hasattr(m, "group") else None
                    body = []
                elif current:
                    body.append(line)


def safetensors_file(tensors, metadata=None):
    """tensors: list of (name, dtype string, shape, raw bytes)."""
    header, offset, data = {}, 0, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def tokenizer_json(source, target):
    return json.dumps({"format": "txc-tokenizer", "version": 1,
                       "lowercase": True, "min_freq": 1,
                       "source": source, "target": target},
                      separators=(",", ":"), ensure_ascii=False) + "\n"


SPECIALS = ["[PAD]", "[UNK]", "[SOS]", "[EOS]"]


def safetensors_seeds():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 3)).astype("<f4")
    b = rng.standard_normal(3).astype("<f4")
    params = [("w", "F32", w.shape, w.tobytes()), ("b", "F32", b.shape, b.tobytes())]
    moments = []
    for name, arr in (("w", w), ("b", b)):
        moments.append((name + ".exp_avg", "F32", arr.shape, (arr * 0.1).tobytes()))
        moments.append((name + ".exp_avg_sq", "F32", arr.shape, (arr * arr).tobytes()))
    metadata = {"format": "txc-checkpoint", "model": "fuzz", "step": "12",
                "seed": "1", "epoch": "1", "batch_in_epoch": "2",
                "batch_size": "4", "min_freq": "1", "data": "train.tsv",
                "data_fnv1a64": "00000000deadbeef",
                "tokenizer": tokenizer_json(SPECIALS + ["i", "you"],
                                            SPECIALS + ["te", "amo"])}
    write("safetensors", "checkpoint.safetensors",
          safetensors_file(params + moments, metadata))
    write("safetensors", "params.safetensors", safetensors_file(params))
    write("safetensors", "params-metadata.safetensors",
          safetensors_file(params, {"format": "pt"}))
    others = []
    for dtype, np_type in (("F64", "<f8"), ("F16", "<f2"), ("I64", "<i8"),
                           ("I32", "<i4"), ("I16", "<i2"), ("I8", "i1"),
                           ("U8", "u1"), ("U16", "<u2"), ("U32", "<u4"),
                           ("U64", "<u8"), ("BOOL", "u1")):
        others.append((dtype.lower(), dtype, (2,), np.arange(2).astype(np_type).tobytes()))
    others.append(("bf16", "BF16", (2,), b"\x80\x3f\x00\x40"))
    others.append(("scalar", "F32", (), np.float32(1.5).tobytes()))
    others.append(("empty", "F32", (0, 3), b""))
    write("safetensors", "dtypes.safetensors", safetensors_file(others))
    write("safetensors", "metadata-only.safetensors", safetensors_file([], {"k": "v"}))
    write("safetensors", "empty-header.safetensors", safetensors_file([]))


def npy_bytes(array, version=None):
    f = io.BytesIO()
    if version is None:
        np.save(f, array)
    else:
        np.lib.format.write_array(f, array, version=version)
    return f.getvalue()


def npy_seeds():
    for np_type in ("<f4", "<f8", "<f2", "<i4", "<i8", "<i2", "i1", "u1",
                    "<u2", "<u4", "<u8", "?"):
        name = {"?": "bool"}.get(np_type, np_type.strip("<"))
        array = (np.arange(6).reshape(2, 3) % 2).astype(np_type)
        write("npy", f"{name}-2x3.npy", npy_bytes(array))
    write("npy", "f4-scalar.npy", npy_bytes(np.array(1.5, dtype="<f4")))
    write("npy", "i4-empty.npy", npy_bytes(np.zeros((0, 4), dtype="<i4")))
    write("npy", "i4-rank1.npy", npy_bytes(np.arange(5, dtype="<i4")))
    write("npy", "f4-version2.npy", npy_bytes(np.ones((2, 2), "<f4"), (2, 0)))
    write("npy", "f4-version3.npy", npy_bytes(np.ones((2, 2), "<f4"), (3, 0)))
    write("npy", "f4-fortran.npy", npy_bytes(np.asfortranarray(np.ones((2, 3), "<f4"))))
    write("npy", "f4-big-endian.npy", npy_bytes(np.ones(3, ">f4")))
    write("npy", "ids.txt", "3 4 5 0\n6 7\n\n8 9 10 11\n")
    write("npy", "floats.txt", "1.5 -2 3e2\n0.25 nan inf\n")
    write("npy", "scalar.txt", "7\n")


def parallel_text_seeds():
    with open(os.path.join(ROOT, "examples", "translate", "data", "train.tsv"), "rb") as f:
        write("parallel-text", "translate-train.tsv", f.read())
    write("parallel-text", "crlf.tsv", "i love you\tte amo\r\nyou eat cake\ttú comes pastel\r\n")
    write("parallel-text", "punctuation.tsv",
          "Hello, world!\t¡Hola, mundo!\ndon't stop\tno pares\n\"well-known\"\t(conocido)\n")
    write("parallel-text", "long.tsv",
          " ".join(["a"] * 16) + "\t" + " ".join(["b"] * 15) + "\n" +
          " ".join(["c"] * 17) + "\td\n")
    write("parallel-text", "specials.tsv", "[UNK] [PAD]\t[SOS] [EOS]\nx y\tz\n")


def tokenizer_seeds():
    write("tokenizer-json", "pad0.json",
          tokenizer_json(SPECIALS + ["i", "love", "you"], SPECIALS + ["te", "amo"]))
    write("tokenizer-json", "pad2.json",
          tokenizer_json(["[UNK]", "[SOS]", "[PAD]", "[EOS]", "tú"],
                         ["[UNK]", "[SOS]", "[PAD]", "[EOS]", "\u00e9", "a\"b"]))
    write("tokenizer-json", "min-freq.json",
          '{"format": "txc-tokenizer", "version": 1, "lowercase": true, '
          '"min_freq": 3, "source": ["[PAD]", "[UNK]", "[SOS]", "[EOS]"], '
          '"target": ["[PAD]", "[UNK]", "[SOS]", "[EOS]", "\\u00e9\\ud83d\\ude00"]}\n')
    write("tokenizer-json", "huggingface.json", json.dumps({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False,
                          "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True}
                         for i, t in enumerate(SPECIALS)],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Split", "pattern": {"Regex": "[!-&(-,./:-@\\[-`{-~]"},
             "behavior": "Isolated", "invert": False}]},
        "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel",
                  "vocab": {w: i for i, w in enumerate(SPECIALS + ["te", "amo"])},
                  "unk_token": "[UNK]"}}, separators=(",", ":")) + "\n")


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    spec_seeds()
    safetensors_seeds()
    npy_seeds()
    parallel_text_seeds()
    tokenizer_seeds()
    for target in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, target))
        size = sum(os.path.getsize(os.path.join(OUT, target, f)) for f in files)
        print(f"{target}: {len(files)} seeds, {size} bytes")


if __name__ == "__main__":
    sys.exit(main())
