#!/usr/bin/env python3
"""PyTorch eager reference for scripts/bench-forward.sh and bench-train.sh:
the seeds' post-norm Transformer (test/golden/seed_model.py) at base.tx's
config.

  forward eval mode, one forward (encode + decode, as txc's `encode` and
          `decode` entries) without gradients; prints `torch_forward_ms
          MEDIAN MIN`.
  train   one training step as the seeds write it: model.train() (dropout
          0.1), forward, CrossEntropyLoss(ignore_index=0, label_smoothing=0.1),
          backward, Adam(0.9, 0.98, 1e-9) with the noam schedule (LambdaLR),
          zero_grad; prints `torch_train_ms MEDIAN MIN`.
  greedy  the seeds' (004) greedy decoding: encode once, then re-run the
          decoder on the whole prefix for every new token, eval mode;
          prints `torch_greedy_ms_per_token MEDIAN MIN`.
  greedy-cache
          greedy decoding with a KV cache written the usual way: encode
          once, the cross-attention keys and values of every decoder layer
          computed once from the memory, then one token per step through
          the decoder with each layer's self-attention keys and values
          appended to its cache; eval mode, no early stop (as txc's
          `bench`). With --load W.safetensors and --sources F.npy (int32
          [B, S], right-padded with 0) it decodes those with those weights;
          --tokens-out F.npy writes the tokens (int32 [B, tgt_len]);
          --check-rerun also decodes by re-running the prefix and fails
          unless the tokens agree. Prints `torch_greedy_cache_ms_per_token
          MEDIAN MIN` and `torch_greedy_cache_tokens_per_s MEDIAN`. --beam N
          also runs txc's beam search (no end token, one sentence at a time,
          N hypotheses as the rows of the cache) once over the sources and
          prints `torch_beam_cache_tokens_per_s`; --beam-out F.npy writes
          its tokens.
  onnx    exports the eval-mode model (encode + teacher-forced decode:
          (src, tgt) -> logits) with torch.onnx.export into --out DIR as
          model.onnx, with its weights as weights.safetensors (the names txc
          gives base.tx's parameters), src.npy / tgt.npy (int32, rows
          right-padded with 0 to different lengths) and PyTorch's logits.npy.
  weights the same weights.safetensors, src.npy and tgt.npy without the
          export.
  attention
          torch.nn.functional.scaled_dot_product_attention, causal, fp32,
          [batch, heads, src_len, 64]: prints `torch_sdpa_fwd_ms MEDIAN` and
          `torch_sdpa_bwd_ms MEDIAN` (the backward alone) and which SDPA
          backend ran (scripts/bench-gpu.sh, beside txrt-cuda-bench).

--device cuda runs forward, train, greedy-cache and attention on the GPU
(timings end with torch.cuda.synchronize()); --compile wraps the model in
torch.compile (forward, train); --tf32 lets matmuls use TF32 (default: strict
fp32, as txc without its TF32 flag).
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "test", "golden"), os.path.join(HERE, "..", "test", "utils")]
from seed_model import Transformer, positional_encoding  # noqa: E402


def synchronize():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def timed(fn, repeat, warmup=2):
    times = []
    for i in range(repeat + warmup):
        synchronize()
        start = time.perf_counter()
        fn()
        synchronize()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


def padded(ids, lengths):
    """Right-pads row b of ids with 0 from lengths[b] on."""
    for b, n in enumerate(lengths):
        ids[b, n:] = 0
    return ids


def attend(attn, q, k, v, keep):
    """attn's scaled dot-product attention of split heads q over k, v
    ([B, h, len, d_k]) with a [B, 1, 1 or T, len] keep mask, through W_o."""
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(attn.d_k)
    scores = scores.masked_fill(keep == 0, -1e9)
    out = torch.matmul(torch.softmax(scores, dim=-1), v)
    b, _, t, _ = out.size()
    return attn.W_o(out.transpose(1, 2).contiguous().view(b, t, -1))


class CachedDecoder:
    """The decoder one token at a time: per-layer self-attention K/V caches
    appended each step, cross-attention K/V computed once (eval mode)."""

    def __init__(self, model, src):
        self.model, self.decoder = model, model.decoder
        self.src_keep = (src != model.pad).unsqueeze(1).unsqueeze(2)
        memory = model.encoder(src, self.src_keep)
        self.cross = [(layer.cross_attn.split_heads(layer.cross_attn.W_k(memory)),
                       layer.cross_attn.split_heads(layer.cross_attn.W_v(memory)))
                      for layer in self.decoder.layers]
        self.cache = [None] * len(self.decoder.layers)
        self.keep = None
        self.pos = 0

    def step(self, token):
        """Logits [rows, vocab] of the next token after `token` [rows]."""
        decoder = self.decoder
        pe = positional_encoding(self.pos + 1, decoder.d_model, token.device)[self.pos]
        self.pos += 1
        x = decoder.embedding(token[:, None]) * math.sqrt(decoder.d_model) + pe
        # The re-run's target mask: earlier tokens that are the pad id are
        # not attended to (a greedy step may pick it).
        step_keep = (token != self.model.pad)[:, None, None, None]
        self.keep = step_keep if self.keep is None else torch.cat([self.keep, step_keep], -1)
        for i, layer in enumerate(decoder.layers):
            attn = layer.self_attn
            q, k, v = (attn.split_heads(w(x)) for w in (attn.W_q, attn.W_k, attn.W_v))
            if self.cache[i] is not None:
                k = torch.cat([self.cache[i][0], k], dim=2)
                v = torch.cat([self.cache[i][1], v], dim=2)
            self.cache[i] = (k, v)
            x = layer.norm1(x + attend(attn, q, k, v, self.keep))
            cross_attn = layer.cross_attn
            q = cross_attn.split_heads(cross_attn.W_q(x))
            x = layer.norm2(x + attend(cross_attn, q, self.cross[i][0], self.cross[i][1],
                                       self.src_keep))
            x = layer.norm3(x + layer.feed_forward(x))
        return self.model.final_linear(x[:, 0])

    def reorder(self, rows):
        """Row r of every cache becomes the old row rows[r] (beam search)."""
        index = torch.tensor(rows, dtype=torch.long, device=self.keep.device)
        self.cache = [(k.index_select(0, index), v.index_select(0, index))
                      for k, v in self.cache]
        self.keep = self.keep.index_select(0, index)


def cached_greedy(model, src, length, sos=2):
    """Greedy tokens [B, length] through CachedDecoder."""
    decoder = CachedDecoder(model, src)
    token = torch.full((src.size(0),), sos, dtype=torch.long, device=src.device)
    out = []
    for _ in range(length):
        token = decoder.step(token).argmax(-1)
        out.append(token)
    return torch.stack(out, dim=1)


def cached_beam(model, source, beam, length, sos=2):
    """txc's beam search (runtime/driver/decoding/Decoding.cpp) without an
    end token: `beam` rows of one source, each hypothesis extended by its
    best `beam` tokens (log-softmax in float64, ties to the lower id), the
    best `beam` kept (stable order), `length` steps; returns the best
    hypothesis' tokens."""
    decoder = CachedDecoder(model, source.expand(beam, -1))
    alive = [([sos], 0.0)]
    for _ in range(length):
        rows = [alive[i if i < len(alive) else 0] for i in range(beam)]
        logits = decoder.step(torch.tensor([h[0][-1] for h in rows], dtype=torch.long,
                                           device=source.device))
        log_probs = torch.log_softmax(logits.double(), dim=-1).cpu().numpy()
        candidates = []
        for h, (tokens, score) in enumerate(alive):
            row = log_probs[h]
            order = sorted(range(len(row)), key=lambda t: (-row[t], t))[:beam] \
                if len(row) <= 64 else _top(row, beam)
            candidates += [(score + row[t], h, int(t)) for t in order]
        candidates.sort(key=lambda c: -c[0])  # stable
        kept = candidates[:beam]
        alive = [(alive[h][0] + [t], score) for score, h, t in kept]
        decoder.reorder([h for _, h, _ in kept] + [kept[0][1]] * (beam - len(kept)))
    best = max(range(len(alive)), key=lambda i: (alive[i][1], -i))
    return alive[best][0][1:]


def _top(row, k):
    """The k largest entries' ids, by value then lower id."""
    import numpy as np
    part = np.argpartition(-row, k)[:k + 8]
    threshold = row[part].min()
    ids = np.nonzero(row >= threshold)[0]
    return sorted(ids.tolist(), key=lambda t: (-row[t], t))[:k]


def rerun_greedy(model, src, length, sos=2):
    src_mask, _ = model.masks(src, src[:, :1])
    memory = model.encoder(src, src_mask)
    ys = torch.full((src.size(0), 1), sos, dtype=torch.long)
    for _ in range(length):
        _, tgt_mask = model.masks(src, ys)
        logits = model.final_linear(model.decoder(ys, memory, src_mask, tgt_mask))
        ys = torch.cat([ys, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return ys[:, 1:]


def greedy_cache(model, src, args):
    import numpy as np
    if args.load:
        from safetensors_np import read_safetensors
        tensors, _ = read_safetensors(args.load)
        model.load_state_dict({name: torch.from_numpy(array.copy())
                               for name, array in tensors.items()}, strict=True)
    if args.sources:
        src = torch.from_numpy(np.load(args.sources).astype(np.int64)).to(args.device)
    model.eval()
    result = {}

    def decode():
        with torch.no_grad():
            result["tokens"] = cached_greedy(model, src, args.tgt_len)
    median, fastest = timed(decode, args.repeat, warmup=1)
    tokens = result["tokens"]
    if args.check_rerun:
        with torch.no_grad():
            rerun = rerun_greedy(model, src, args.tgt_len)
        if not torch.equal(rerun, tokens):
            sys.exit("error: KV-cache greedy tokens differ from the prefix re-run's")
        print("torch_greedy_cache_vs_rerun identical")
    if args.tokens_out:
        np.save(args.tokens_out, tokens.cpu().numpy().astype(np.int32))
    generated = tokens.numel()
    print("torch_greedy_cache_ms_per_token %.3f %.3f" % (median / generated, fastest / generated))
    print("torch_greedy_cache_tokens_per_s %.1f" % (generated / median * 1000))
    if args.beam:
        with torch.no_grad():
            cached_beam(model, src[:1], args.beam, args.tgt_len)  # warm-up
            start = time.perf_counter()
            best = [cached_beam(model, src[i:i + 1], args.beam, args.tgt_len)
                    for i in range(src.size(0))]
            seconds = time.perf_counter() - start
        if args.beam_out:
            np.save(args.beam_out, np.array(best, dtype=np.int32))
        print("torch_beam_cache_tokens_per_s %.1f" % (generated / seconds))


def attention(args):
    """SDPA forward and backward of one causal fp32 shape on --device."""
    import torch.nn.functional as F
    if not hasattr(F, "scaled_dot_product_attention"):
        sys.exit("error: attention needs PyTorch 2.0 or later (this is %s)" % torch.__version__)
    shape = (args.batch, args.heads, args.src_len, 64)
    generator = torch.Generator().manual_seed(0)
    q, k, v, grad = (torch.rand(shape, generator=generator).mul_(2).sub_(1).to(args.device)
                     for _ in range(4))
    for t in (q, k, v):
        t.requires_grad_(True)

    def forward():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def backward():
        torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
    print("# B=%d heads=%d T=%d head_dim=64 causal, fp32, PyTorch %s on %s, SDPA backend %s"
          % (args.batch, args.heads, args.src_len, torch.__version__, args.device,
             out.grad_fn.name() if out.grad_fn else "?"))
    median, _ = timed(forward, args.repeat, args.warmup)
    print("torch_sdpa_fwd_ms %.4f" % median)
    median, _ = timed(backward, args.repeat, args.warmup)
    print("torch_sdpa_bwd_ms %.4f" % median)


def write_twin(model, args):
    """The twin's weights (txc's parameter names) and padded int32 ids into
    --out: weights.safetensors, src.npy [B, S], tgt.npy [B, T]; returns the
    ids as int64 tensors."""
    import numpy as np
    from safetensors_np import write_safetensors
    if not args.out:
        sys.exit("error: %s needs --out DIR" % args.what)
    os.makedirs(args.out, exist_ok=True)
    b, s_len, t_len = args.batch, args.src_len, args.tgt_len
    generator = torch.Generator().manual_seed(1)
    src = padded(torch.randint(4, args.src_vocab or args.vocab, (b, s_len), generator=generator),
                 [max(1, s_len - 3 * i % s_len) for i in range(b)])
    tgt = padded(torch.randint(4, args.tgt_vocab or args.vocab, (b, t_len), generator=generator),
                 [max(1, t_len - 2 * i % t_len) for i in range(b)])
    write_safetensors(os.path.join(args.out, "weights.safetensors"),
                      {name: t.detach().contiguous().numpy().astype("<f4")
                       for name, t in model.state_dict().items()}, {"format": "pt"})
    np.save(os.path.join(args.out, "src.npy"), src.numpy().astype(np.int32))
    np.save(os.path.join(args.out, "tgt.npy"), tgt.numpy().astype(np.int32))
    return src, tgt


def export_onnx(model, args):
    import numpy as np
    model.eval()
    src, tgt = write_twin(model, args)
    with torch.no_grad():
        logits = model(src, tgt)
        torch.onnx.export(model, (src, tgt), os.path.join(args.out, "model.onnx"),
                          input_names=["src", "tgt"], output_names=["logits"],
                          opset_version=14, do_constant_folding=True)
    np.save(os.path.join(args.out, "logits.npy"), logits.numpy().astype(np.float32))
    print("wrote %s: model.onnx, weights.safetensors, src.npy %s, tgt.npy %s, logits.npy"
          % (args.out, list(src.shape), list(tgt.shape)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["forward", "train", "greedy", "greedy-cache", "onnx",
                                      "weights", "attention"])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--src_len", type=int, default=64)
    p.add_argument("--tgt_len", type=int, default=64)
    p.add_argument("--d_model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--d_ff", type=int, default=2048)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--src_vocab", type=int, help="default: --vocab")
    p.add_argument("--tgt_vocab", type=int, help="default: --vocab")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2, help="untimed runs first")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", help="onnx: output directory")
    p.add_argument("--load", help="greedy-cache: weights (safetensors, txc's names)")
    p.add_argument("--sources", help="greedy-cache: int32 [B, S] source ids")
    p.add_argument("--tokens-out", help="greedy-cache: write the tokens here")
    p.add_argument("--check-rerun", action="store_true")
    p.add_argument("--beam", type=int, default=0,
                   help="greedy-cache: also time beam search, N hypotheses")
    p.add_argument("--beam-out", help="greedy-cache: write the beam's tokens here")
    p.add_argument("--autocast", choices=["none", "bf16"], default="none",
                   help="train under torch.autocast(DEVICE, bfloat16)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--compile", action="store_true",
                   help="forward, train: torch.compile the model")
    p.add_argument("--tf32", action="store_true", help="cuda: allow TF32 matmuls")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("error: --device cuda: PyTorch sees no CUDA device")
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
    if args.what == "attention":
        attention(args)
        return
    torch.manual_seed(0)
    model = Transformer(args.src_vocab or args.vocab, args.tgt_vocab or args.vocab,
                        args.d_model, args.layers, args.heads,
                        args.d_ff, 0.1)
    src = torch.randint(4, args.vocab, (args.batch, args.src_len))
    tgt = torch.randint(4, args.vocab, (args.batch, args.tgt_len))
    if args.what in ("forward", "train", "greedy-cache"):
        model.to(args.device)
        src, tgt = src.to(args.device), tgt.to(args.device)
    if args.compile and args.what in ("forward", "train"):
        if not hasattr(torch, "compile"):
            sys.exit("error: --compile needs PyTorch 2.0 or later (this is %s)"
                     % torch.__version__)
        model = torch.compile(model)
    if args.what == "onnx":
        export_onnx(model, args)
        return
    if args.what == "weights":
        src, tgt = write_twin(model, args)
        print("wrote %s: weights.safetensors, src.npy %s, tgt.npy %s"
              % (args.out, list(src.shape), list(tgt.shape)))
        return
    if args.what == "greedy-cache":
        greedy_cache(model, src, args)
        return
    if args.what == "forward":
        model.eval()

        def forward():
            with torch.no_grad():
                model(src, tgt)
        median, fastest = timed(forward, args.repeat)
        print("torch_forward_ms %.2f %.2f" % (median, fastest))
        return
    if args.what == "train":
        model.train()
        criterion = torch.nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
        optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        warmup = 4000
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: args.d_model ** -0.5 *
            min((s + 1) ** -0.5, (s + 1) * warmup ** -1.5))

        def step():
            optimizer.zero_grad()
            with torch.autocast(args.device, dtype=torch.bfloat16,
                                enabled=args.autocast == "bf16"):
                logits = model(src, tgt)
                loss = criterion(logits.reshape(-1, logits.size(-1)).float(),
                                 tgt.reshape(-1))
            loss.backward()
            optimizer.step()
            schedule.step()
        median, fastest = timed(step, args.repeat, args.warmup)
        print("torch_train_ms %.2f %.2f" % (median, fastest))
        return
    model.eval()

    def greedy():
        with torch.no_grad():
            src_mask, _ = model.masks(src, src[:, :1])
            memory = model.encoder(src, src_mask)
            ys = torch.full((args.batch, 1), 2, dtype=torch.long)
            for _ in range(args.tgt_len):
                _, tgt_mask = model.masks(src, ys)
                out = model.final_linear(model.decoder(ys, memory, src_mask, tgt_mask))
                nxt = out[:, -1].argmax(-1, keepdim=True)
                ys = torch.cat([ys, nxt], dim=1)
    median, fastest = timed(greedy, args.repeat, warmup=1)
    tokens = args.batch * args.tgt_len
    print("torch_greedy_ms_per_token %.3f %.3f" % (median / tokens, fastest / tokens))


if __name__ == "__main__":
    main()
