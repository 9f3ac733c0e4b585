#!/usr/bin/env python3
"""fusion_differential.py: txc's fusion passes never change an answer.

Generates random specs whose cases write attention, residual add + layer
norm and linear layers out from primitives the ways users do (mask kinds,
where the scale sits, the fill value, head counts with key/value heads
broadcast or grouped, rotary embeddings on Q and K (builtin or written out), pre- and post-norm with LayerNorm, RMSNorm or RMSNorm
written out, biases, activations, SwiGLU / GeGLU gates, dropout),
compiles each spec twice, with the fusion passes (the default) and with
--no-fuse, and runs both executables on the same inputs: the forward entry
and the gradients of every parameter (train_grad, dropout active: fused and
unfused draw the same masks), with ids padded on the right, on the left,
inside, a row of nothing but padding, and none. Every output and gradient
must agree within --rtol (max |fused - unfused| / max |unfused| per tensor;
a gradient relative to at least 10% of the largest gradient of its case, as
a bias sums many larger terms and carries their rounding, and a key bias,
whose exact gradient is 0 and which both runs hold as float noise, relative
to that largest gradient).

  fusion_differential.py --txc build/bin/txc --seed 1 --specs 30 --work DIR

A case is one `def case<i>(...)` of a spec; a spec packs --cases-per-spec
of them into one `fwd` entry (outputs y<i>) and one `train` entry (the sum
of sum(y<i> * r<i>)), so parameters and gradients are per case (case<i>.*).
On a mismatch it prints the seed, the spec file, the case and the input
variant, and the command that regenerates that spec alone. Exit 0 when
everything agrees, 1 otherwise.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors  # noqa: E402

PAD = 0
VOCAB = 13
B, T, S = 3, 5, 6          # runtime sizes; bounds below
VARIANTS = ["right", "left", "inside", "whole", "none"]


#===----------------------------------------------------------------------===#
# Cases
#===----------------------------------------------------------------------===#

class Case:
    """One random pattern: its def, its inputs and what it computes."""

    def __init__(self, rng, index):
        self.index = index
        self.kind = rng.choice(["attention", "attention", "attention", "ffn"])
        self.model = rng.choice([8, 16])
        self.inputs = []   # (name, type text, generator kind)
        if self.kind == "attention":
            self.choose_attention(rng)
        else:
            self.choose_ffn(rng)

    #===--- choices ------------------------------------------------------===#

    def choose_attention(self, rng):
        self.cross = rng.random() < 0.35
        self.heads = rng.choice([1, 2, 4])
        self.dk = self.model // self.heads
        kv = ["mha", "mha", "mqa"] + (["gqa"] if self.heads >= 4 else [])
        self.kv_form = rng.choice(kv)
        self.kv_heads = {"mha": self.heads, "mqa": 1, "gqa": 2}[self.kv_form]
        self.transpose = rng.choice(["transpose(K)", "transpose(K, -2, -1)"])
        self.scale = rng.choice(["div", "div", "mul", "scale", "none", "other",
                                 "left"])
        self.scale_first = rng.random() < 0.6   # scale before masked_fill
        self.fill = rng.choice([-1e9, -1e9, -1e4, -1e30, -3.0])
        parts = ["key"] * 3 + ["causal", "query", "bool", "head_bool", "none"]
        if self.cross:
            parts.remove("causal")
        self.mask_parts = sorted(set(rng.sample(parts, rng.choice([1, 1, 2, 3]))))
        if "none" in self.mask_parts:
            self.mask_parts = []
        self.key_form = rng.choice(["builtin", "ne", "eq", "eq0"])
        self.mask_write = rng.choice(["not", "eq0", "or"])
        self.dropout = rng.choice([0.0, 0.0, 0.1, 0.2])
        self.norm = rng.choice(["post", "pre", "none"])
        self.softmax_axis = rng.choice(["", "", ", axis = -1", ", axis = 3"]
                                       if self.kv_form != "gqa" else ["", ""])
        self.additive = rng.random() < 0.05
        self.bias = rng.random() < 0.7
        # Rotary embeddings on Q and K (self-attention, even head sizes):
        # the builtin, or written out as Hugging Face writes them.
        self.rotary = "none"
        if not self.cross and self.dk % 2 == 0:
            self.rotary = rng.choice(["none", "none", "builtin", "written"])
        # The causal part: the builtin, written out from arange as a keep
        # or a fill mask (fused as the causal flag), or the strict form
        # that also masks the diagonal (not causal: kept as a mask).
        self.causal_form = rng.choice(["builtin", "builtin", "ge", "le",
                                       "fill", "strict"])

    def choose_ffn(self, rng):
        self.hidden = rng.choice([16, 24])
        self.activation = rng.choice(["relu", "gelu", "none", "gelu_tanh",
                                      "silu", "swiglu", "geglu"])
        self.bias1 = rng.random() < 0.7
        self.bias2 = rng.random() < 0.7
        self.norm = rng.choice(["post", "pre", "none", "residual", "rms_pre",
                                "rms_written", "rms_post"])
        self.dropout = rng.choice([0.0, 0.1])

    def describe(self):
        keys = [k for k in sorted(vars(self)) if k not in ("inputs",)]
        return ", ".join("%s=%s" % (k, getattr(self, k)) for k in keys)

    #===--- spec text ----------------------------------------------------===#

    def add_input(self, name, type_text, kind):
        self.inputs.append(("%s%d" % (name, self.index), type_text, kind))
        return "%s%d" % (name, self.index)

    def render(self):
        """The def's text (lines) and the call in the entries."""
        self.inputs = []
        x = self.add_input("x", "[B, T, %d]" % self.model, "f32")
        if self.kind == "ffn":
            return self.render_ffn(x)
        return self.render_attention(x)

    def render_ffn(self, x):
        i = self.index
        act = {"relu": "relu(h)", "gelu": "gelu(h)", "none": "h",
               "gelu_tanh": "gelu(h, tanh = true)", "silu": "silu(h)",
               # gated: the product of an activated linear and another one
               "swiglu": "silu(h) * g", "geglu": "g * gelu(h)"}[self.activation]
        lines = ["def case%d(x: [B, T, %d]) {" % (i, self.model)]
        src = {"pre": "layer_norm(x) as pre", "rms_pre": "rms_norm(x) as pre",
               # RMSNorm written out (Hugging Face's LlamaRMSNorm)
               "rms_written": "param(%d, init = ones) as pre_w * (x * rsqrt("
                              "reduce_mean(x ** 2, -1, keepdim = true) + 1e-6))"
                              % self.model}.get(self.norm, "x")
        lines.append("  u = %s" % src)
        bias1 = "true" if self.bias1 else "false"
        lines.append("  h = linear(u, %d, bias = %s) as lin1" % (self.hidden, bias1))
        if self.activation in ("swiglu", "geglu"):
            lines.append("  g = linear(u, %d, bias = %s) as lin3" % (self.hidden, bias1))
        lines.append("  h = dropout(%s, %s)" % (act, self.dropout))
        lines.append("  y = linear(h, %d, bias = %s) as lin2" %
                     (self.model, "true" if self.bias2 else "false"))
        if self.norm == "post":
            lines.append("  return layer_norm(x + y) as post")
        elif self.norm == "rms_post":
            lines.append("  return rms_norm(x + y) as post")
        elif self.norm in ("pre", "residual", "rms_pre", "rms_written"):
            lines.append("  return y + x")
        else:
            lines.append("  return y")
        lines.append("}")
        return lines, "case%d(%s) as case%d" % (i, x, i)

    def keep_key(self, ids, length):
        """The key padding mask of `ids`, true where kept, as [B, 1, 1, L]
        or written as its fill form (second value True)."""
        if self.key_form == "builtin":
            return "padding_mask(%s, pad)" % ids, False
        if self.key_form == "ne":
            return "reshape(%s != pad, B, 1, 1, %s)" % (ids, length), False
        if self.key_form == "eq":
            return "reshape(%s == pad, B, 1, 1, %s)" % (ids, length), True
        return "(padding_mask(%s, pad) == 0)" % ids, True

    def render_attention(self, x):
        i, h, dk, kvh = self.index, self.heads, self.dk, self.kv_heads
        length = "S" if self.cross else "T"
        params = ["x: [B, T, %d]" % self.model]
        args = [x]
        if self.cross:
            kv = self.add_input("kv", "[B, S, %d]" % self.model, "f32")
            params.append("kv: [B, S, %d]" % self.model)
            args.append(kv)
        need_qids = "query" in self.mask_parts or "causal" in self.mask_parts \
            or ("key" in self.mask_parts and not self.cross)
        if need_qids:
            qids = self.add_input("qids", "i32[B, T]", "ids")
            params.append("qids: i32[B, T]")
            args.append(qids)
        if "key" in self.mask_parts and self.cross:
            kids = self.add_input("kids", "i32[B, S]", "ids")
            params.append("kids: i32[B, S]")
            args.append(kids)
        if "bool" in self.mask_parts:
            m = self.add_input("m", "bool[B, 1, T, %s]" % length, "bool")
            params.append("m: bool[B, 1, T, %s]" % length)
            args.append(m)
        if "head_bool" in self.mask_parts:
            hm = self.add_input("hm", "bool[B, %d, T, %s]" % (h, length), "bool")
            params.append("hm: bool[B, %d, T, %s]" % (h, length))
            args.append(hm)
        if self.additive:
            a = self.add_input("a", "[B, 1, 1, %s]" % length, "f32")
            params.append("a: [B, 1, 1, %s]" % length)
            args.append(a)

        lines = ["def case%d(%s) {" % (i, ", ".join(params))]
        src = "layer_norm(x) as pre" if self.norm == "pre" else "x"
        lines.append("  q_in = %s" % src)
        kv_src = "kv" if self.cross else "q_in"
        bias = "" if self.bias else ", bias = false"
        lines.append("  Q = split_heads(linear(q_in, %d%s) as W_q, %d)" % (h * dk, bias, h))
        lines.append("  K = split_heads(linear(%s, %d%s) as W_k, %d)" % (kv_src, kvh * dk, bias, kvh))
        lines.append("  V = split_heads(linear(%s, %d%s) as W_v, %d)" % (kv_src, kvh * dk, bias, kvh))
        if self.rotary == "builtin":
            lines.append("  Q = rope(Q)")
            lines.append("  K = rope(K)")
        elif self.rotary == "written":
            half = dk // 2
            lines.append("  inv_freq = 1.0 / exp(float(arange(0, %d)) * (2.0 * log(10000.0) / %d))"
                         % (half, dk))
            lines.append("  freqs = float(arange(T))[:, None] * inv_freq[None, :]")
            lines.append("  emb = concat(freqs, freqs, axis = -1)")
            for name in ("Q", "K"):
                lines.append("  %s = %s * cos(emb) + concat(-%s[..., %d:], %s[..., :%d], axis = -1) * sin(emb)"
                             % (name, name, name, half, name, half))
        grouped = self.kv_form == "gqa"
        if grouped:
            g = h // kvh
            lines.append("  Q = reshape(Q, B, %d, %d, T, %d)" % (kvh, g, dk))
            lines.append("  K = reshape(K, B, %d, 1, %s, %d)" % (kvh, length, dk))
            lines.append("  V = reshape(V, B, %d, 1, %s, %d)" % (kvh, length, dk))
        lines.append("  s = matmul(Q, %s)" % self.transpose)

        scaled = {
            "div": "s / sqrt(%d)" % dk,
            "mul": "s * (1 / sqrt(%d))" % dk,
            "scale": "scale(s, %r)" % (1.0 / dk ** 0.5),
            "none": "s",
            "other": "s / %d" % dk,
            "left": "(1 / sqrt(%d)) * s" % dk,
        }[self.scale]
        mask = self.mask_text(length, grouped)
        if self.scale_first:
            lines.append("  s = %s" % scaled)
        if mask:
            lines.append("  s = masked_fill(s, %s, %r)" % (mask, self.fill))
        if not self.scale_first:
            lines.append("  s = %s" % scaled)
        if self.additive:
            add = "reshape(a, B, 1, 1, 1, %s)" % length if grouped else "a"
            lines.append("  s = s + %s" % add)
        lines.append("  p = dropout(softmax(s%s), %s)" % (self.softmax_axis, self.dropout))
        lines.append("  o = matmul(p, V)")
        if grouped:
            lines.append("  o = reshape(o, B, %d, T, %d)" % (h, dk))
        lines.append("  y = linear(merge_heads(o), %d) as W_o" % self.model)
        if self.norm == "post":
            lines.append("  return layer_norm(x + y) as post")
        elif self.norm == "pre":
            lines.append("  return x + y")
        else:
            lines.append("  return y")
        lines.append("}")
        return lines, "case%d(%s) as case%d" % (i, ", ".join(args), i)

    def mask_text(self, length, grouped):
        """The fill mask (true where masked) the spec writes, or ''."""
        keeps, fills = [], []   # keep masks and fill masks, as written
        ids = "kids" if self.cross else "qids"
        for part in self.mask_parts:
            if part == "key":
                text, is_fill = self.keep_key(ids, length)
                (fills if is_fill else keeps).append(text)
            elif part == "causal":
                written = {
                    "builtin": "causal_mask(qids)",
                    "ge": "(arange(T)[:, None] >= arange(T)[None, :])",
                    "le": "(arange(T)[None, :] <= arange(T)[:, None])",
                    "fill": "(arange(T)[None, :] > arange(T)[:, None])",
                    "strict": "(arange(T)[:, None] > arange(T)[None, :])",
                }[self.causal_form]
                (fills if self.causal_form == "fill" else keeps).append(written)
            elif part == "query":
                keeps.append("reshape(qids != pad, B, 1, T, 1)")
            elif part == "bool":
                keeps.append("m")
            elif part == "head_bool":
                keeps.append("hm")
        if grouped:
            def five(m):
                if m == "hm":   # varies by head: declined
                    return "reshape(hm, B, %d, %d, T, %s)" % (
                        self.kv_heads, self.heads // self.kv_heads, length)
                return "reshape(%s, B, 1, 1, %s)" % (m, self.mask_dims_4(m, length))
            square = ("causal", "(arange")   # [T, T]: broadcast as is
            keeps = [k if k.startswith(square) else five(k) for k in keeps]
            fills = [f if f.startswith(square) else five(f) for f in fills]
        if not keeps and not fills:
            return ""
        if self.mask_write == "or" or not keeps:
            # The fill written as a disjunction of fills.
            terms = ["!%s" % k for k in keeps] + fills
            return " | ".join("(%s)" % t for t in terms)
        keep = " & ".join(keeps)
        fill = " | ".join(fills)
        written = ("!(%s)" % keep) if self.mask_write == "not" \
            else "((%s) == 0)" % keep
        return written + (" | (%s)" % fill if fill else "")

    def mask_dims_4(self, mask, length):
        """The last two dims of a rank-4 mask written in mask_text."""
        if "T, 1)" in mask:
            return "T, 1"
        if mask in ("m", "hm"):
            return "T, %s" % length
        return "1, %s" % length

    #===--- inputs -------------------------------------------------------===#

    def arrays(self, variant, nprng):
        """{input name: ndarray} for one padding variant."""
        out = {}
        for name, type_text, kind in self.inputs:
            dims = [int(d) if d.isdigit() else {"B": B, "T": T, "S": S}[d]
                    for d in re.findall(r"\w+", type_text.split("[")[1])]
            if kind == "f32":
                out[name] = nprng.standard_normal(dims).astype(np.float32)
            elif kind == "ids":
                out[name] = padded_ids(dims, variant, nprng)
            else:
                mask = nprng.random(dims) < 0.7
                if variant in ("whole", "inside"):
                    mask[0, ...] = False          # a batch that sees nothing
                out[name] = mask
        return out


def padded_ids(dims, variant, nprng):
    """Ids [B, L] with padding as `variant` says (pad id 0)."""
    ids = nprng.integers(1, VOCAB, size=dims).astype(np.int32)
    rows, length = dims
    for b in range(rows):
        real = max(1, length - 2 * b)
        if variant == "right":
            ids[b, real:] = PAD
        elif variant == "left":
            ids[b, :length - real] = PAD
        elif variant == "inside":
            ids[b, 1::3] = PAD
        elif variant == "whole":
            if b == 1:
                ids[b, :] = PAD
            else:
                ids[b, real:] = PAD
    return ids


#===----------------------------------------------------------------------===#
# Specs
#===----------------------------------------------------------------------===#

def build_spec(cases):
    lines = ["model differential",
             "config pad = %d" % PAD,
             "dim B <= 4, T <= 7, S <= 8",
             ""]
    case_lines = {}
    calls = []
    for case in cases:
        text, call = case.render()
        start = len(lines) + 1
        lines += text + [""]
        case_lines[case.index] = (start, len(lines))
        calls.append(call)
    inputs = [(n, t) for case in cases for n, t, _ in case.inputs]
    params = ", ".join("%s: %s" % (n, t) for n, t in inputs)
    outs = ", ".join("y%d" % c.index for c in cases)
    lines.append("entry fwd(%s) -> %s {" % (params, outs))
    for case, call in zip(cases, calls):
        lines.append("  y%d = %s" % (case.index, call))
    lines.append("}")
    lines.append("")
    rs = ", ".join("r%d: [B, T, %d]" % (c.index, c.model) for c in cases)
    lines.append("entry train(%s, %s) -> loss {" % (params, rs))
    terms = []
    for case, call in zip(cases, calls):
        lines.append("  y%d = %s" % (case.index, call))
        terms.append("reduce_sum(reduce_sum(reduce_sum(y%d * r%d, -1), -1), -1)"
                     % (case.index, case.index))
    lines.append("  loss = " + " + ".join(terms))
    lines.append("}")
    lines.append("")
    lines.append("optimizer adam(lr = 0.001)")
    return "\n".join(lines) + "\n", case_lines


#===----------------------------------------------------------------------===#
# Running
#===----------------------------------------------------------------------===#

def run(cmd, what):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s\n%s" % (
            what, result.returncode, " ".join(cmd), result.stderr.strip()))
    return result


def fusion_stats(text, case_lines):
    """{pass: (fused patterns, {case index: [decline reasons]})}."""
    stats = {}
    for line in text.splitlines():
        m = re.match(r"(tx-fuse-[\w-]+): fused (\d+), declined \d+", line)
        if m:
            stats.setdefault(m.group(1), [0, {}])[0] += int(m.group(2))
        # "declined at F:L:C (N candidates): why" counts N like ones.
        m = re.match(r"(tx-fuse-[\w-]+): declined at .*?:(\d+):\d+"
                     r"(?: \((\d+) candidates\))?: (.*)", line)
        if m:
            number = int(m.group(2))
            for index, (start, end) in case_lines.items():
                if start <= number < end:
                    stats.setdefault(m.group(1), [0, {}])[1].setdefault(
                        index, []).extend([m.group(4)] * int(m.group(3) or 1))
    return stats


def compare(name, got, want, rtol, floor):
    """max |got - want| / max(max |want|, floor), or None when it is within
    rtol."""
    if got is None:
        return "%s: missing in the fused run" % name
    if got.shape != want.shape:
        return "%s: shape %s vs %s" % (name, got.shape, want.shape)
    if not np.all(np.isfinite(got)) or not np.all(np.isfinite(want)):
        if np.array_equal(np.isnan(got), np.isnan(want)) and \
                np.allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=rtol, atol=0):
            return None
        return "%s: non-finite values differ" % name
    scale = max(float(np.abs(want).max()), floor) or 1.0
    err = float(np.abs(got.astype(np.float64) - want).max()) / scale
    return None if err <= rtol else "%s: max rel error %.3g > %g" % (name, err, rtol)


def check_spec(args, spec_index, cases, work):
    spec, case_lines = build_spec(cases)
    path = os.path.join(work, "spec%d.tx" % spec_index)
    with open(path, "w") as f:
        f.write(spec)
    exes = {}
    for build, flags in (("fused", ["--tx-fusion-stats"]), ("unfused", ["--no-fuse"])):
        exes[build] = os.path.join(work, "spec%d-%s" % (spec_index, build))
        result = run([args.txc, path, "-o", exes[build]] + flags,
                     "txc %s (%s)" % (path, build))
        if build == "fused":
            stats = fusion_stats(result.stderr, case_lines)
    failures = []
    nprng = np.random.default_rng(args.seed * 1000 + spec_index)
    for variant in VARIANTS:
        inputs = {}
        for case in cases:
            inputs.update(case.arrays(variant, nprng))
        weights = {"r%d" % c.index: nprng.standard_normal((B, T, c.model)).astype(np.float32)
                   for c in cases}
        vdir = os.path.join(work, "spec%d-%s" % (spec_index, variant))
        os.makedirs(vdir, exist_ok=True)
        for name, array in list(inputs.items()) + list(weights.items()):
            np.save(os.path.join(vdir, name + ".npy"), array)
        fwd_args = [a for n in inputs
                    for a in ("--input", "%s=%s" % (n, os.path.join(vdir, n + ".npy")))]
        train_args = fwd_args + [a for n in weights
                                 for a in ("--input", "%s=%s" % (n, os.path.join(vdir, n + ".npy")))]
        results = {}
        for build, exe in exes.items():
            out = os.path.join(vdir, build)
            os.makedirs(out, exist_ok=True)
            common = ["--init", "7", "--threads", "1", "--out-dir", out]
            run([exe, "run", "fwd"] + common + fwd_args, "%s run fwd" % exe)
            grads = os.path.join(out, "grads.safetensors")
            run([exe, "run", "train_grad", "--step", "3", "--seed", "5"] + common +
                train_args + ["--save-grads", grads], "%s run train_grad" % exe)
            tensors = {"y%d" % c.index: np.load(os.path.join(out, "y%d.npy" % c.index))
                       for c in cases}
            # (The loss, a sum of the cases' sums with random signs, is left
            # out: its relative error says nothing; its gradients are in.)
            tensors.update(read_safetensors(grads)[0])
            results[build] = tensors
        # A small gradient that sums many larger terms (a bias; a query
        # weight whose rows see one key, where dS is 0 up to the rounding of
        # rowsum(dO * O) against dO . V) carries their rounding: gradients
        # are compared relative to at least 10% of the largest gradient of
        # their case. A key bias's exact gradient is 0
        # (softmax does not change when a row's scores move together), so
        # both runs hold float noise: it is compared relative to that
        # largest gradient itself.
        largest = {}
        for name, want in results["unfused"].items():
            m = re.match(r"case(\d+)\.", name)
            if m and want.size:
                index = int(m.group(1))
                largest[index] = max(largest.get(index, 0.0), float(np.abs(want).max()))
        for name, want in results["unfused"].items():
            m = re.match(r"(?:y|case)(\d+)", name)
            index = int(m.group(1)) if m else None
            floor = 0.0
            if name.startswith("case"):
                share = 1.0 if name.endswith("W_k.bias") else 0.1
                floor = share * largest.get(index, 0.0)
            problem = compare(name, results["fused"].get(name), want, args.rtol, floor)
            if problem:
                failures.append((variant, index, problem))
    return stats, failures, path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--txc", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--specs", type=int, default=30)
    parser.add_argument("--first-spec", type=int, default=0,
                        help="regenerate from this spec on (with --specs 1: that spec alone)")
    parser.add_argument("--cases-per-spec", type=int, default=8)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--min-fused", type=float, default=0.8,
                        help="fail when the attention pass fuses fewer of its patterns "
                             "than this share (a pass that declines everything is wrong too)")
    parser.add_argument("--work", help="keep specs and inputs here (default: a temporary directory)")
    args = parser.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="fusion-differential-")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(args.seed)
    totals = {}
    cases_run, failed = 0, []
    kinds = {"attention": 0, "ffn": 0}
    for spec_index in range(args.first_spec + args.specs):
        cases = [Case(rng, spec_index * args.cases_per_spec + i)
                 for i in range(args.cases_per_spec)]
        if spec_index < args.first_spec:
            continue   # the generator's stream up to the first spec asked for
        try:
            stats, failures, path = check_spec(args, spec_index, cases, work)
        except RuntimeError as error:
            print("fusion-differential: seed %d, spec %d: %s" % (args.seed, spec_index, error))
            failed.append(spec_index)
            continue
        cases_run += len(cases)
        for case in cases:
            kinds[case.kind] += 1
        for name, (fused, declines) in stats.items():
            total = totals.setdefault(name, [0, 0, {}])
            total[0] += fused
            total[1] += sum(len(v) for v in declines.values())
            for reasons in declines.values():
                for reason in reasons:
                    total[2][reason] = total[2].get(reason, 0) + 1
        for variant, case_index, problem in failures:
            case = next((c for c in cases if c.index == case_index), None)
            print("fusion-differential: MISMATCH seed %d, spec %d (%s), input variant '%s': %s"
                  % (args.seed, spec_index, path, variant, problem))
            if case:
                print("  case %d: %s" % (case.index, case.describe()))
            print("  reproduce: %s --txc %s --seed %d --first-spec %d --specs 1 --cases-per-spec %d --work DIR"
                  % (sys.argv[0], args.txc, args.seed, spec_index, args.cases_per_spec))
        if failures:
            failed.append(spec_index)

    print("fusion-differential: seed %d: %d cases (%d attention, %d feed-forward) in %d specs, "
          "%d input variants each, forward outputs and every gradient"
          % (args.seed, cases_run, kinds["attention"], kinds["ffn"],
             cases_run // args.cases_per_spec, len(VARIANTS)))
    for name in sorted(totals):
        fused, declined, reasons = totals[name]
        print("fusion-differential: %s: fused %d, declined %d (patterns in the fwd and train entries)"
              % (name, fused, declined))
        for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print("fusion-differential:   declined %d x: %s" % (count, reason))
    fused, declined, _ = totals.get("tx-fuse-attention", [0, 0, {}])
    if fused + declined and fused < args.min_fused * (fused + declined):
        print("fusion-differential: FAILED: the attention pass fused %d of %d patterns, "
              "fewer than --min-fused %g" % (fused, fused + declined, args.min_fused))
        failed.append(-1)
    if failed:
        print("fusion-differential: FAILED in specs %s (specs and inputs in %s)"
              % (sorted(set(i for i in failed if i >= 0)), work))
        return 1
    print("fusion-differential: fused and unfused agree within %g" % args.rtol)
    return 0


if __name__ == "__main__":
    sys.exit(main())
