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
  onnx    exports the eval-mode model (encode + teacher-forced decode:
          (src, tgt) -> logits) with torch.onnx.export into --out DIR as
          model.onnx, with its weights as weights.safetensors (the names txc
          gives base.tx's parameters), src.npy / tgt.npy (int32, rows
          right-padded with 0 to different lengths) and PyTorch's logits.npy.
"""
import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "test", "golden"), os.path.join(HERE, "..", "test", "utils")]
from seed_model import Transformer  # noqa: E402


def timed(fn, repeat, warmup=2):
    times = []
    for i in range(repeat + warmup):
        start = time.perf_counter()
        fn()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


def padded(ids, lengths):
    """Right-pads row b of ids with 0 from lengths[b] on."""
    for b, n in enumerate(lengths):
        ids[b, n:] = 0
    return ids


def export_onnx(model, args):
    import numpy as np
    from safetensors_np import write_safetensors
    if not args.out:
        sys.exit("error: onnx needs --out DIR")
    os.makedirs(args.out, exist_ok=True)
    model.eval()
    b, s_len, t_len = args.batch, args.src_len, args.tgt_len
    generator = torch.Generator().manual_seed(1)
    src = padded(torch.randint(4, args.vocab, (b, s_len), generator=generator),
                 [max(1, s_len - 3 * i) for i in range(b)])
    tgt = padded(torch.randint(4, args.vocab, (b, t_len), generator=generator),
                 [max(1, t_len - 2 * i) for i in range(b)])
    with torch.no_grad():
        logits = model(src, tgt)
        torch.onnx.export(model, (src, tgt), os.path.join(args.out, "model.onnx"),
                          input_names=["src", "tgt"], output_names=["logits"],
                          opset_version=14, do_constant_folding=True)
    write_safetensors(os.path.join(args.out, "weights.safetensors"),
                      {name: t.detach().contiguous().numpy().astype("<f4")
                       for name, t in model.state_dict().items()}, {"format": "pt"})
    np.save(os.path.join(args.out, "src.npy"), src.numpy().astype(np.int32))
    np.save(os.path.join(args.out, "tgt.npy"), tgt.numpy().astype(np.int32))
    np.save(os.path.join(args.out, "logits.npy"), logits.numpy().astype(np.float32))
    print("wrote %s: model.onnx, weights.safetensors, src.npy %s, tgt.npy %s, logits.npy"
          % (args.out, list(src.shape), list(tgt.shape)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["forward", "train", "greedy", "onnx"])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--src_len", type=int, default=64)
    p.add_argument("--tgt_len", type=int, default=64)
    p.add_argument("--d_model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--d_ff", type=int, default=2048)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", help="onnx: output directory")
    p.add_argument("--autocast", choices=["none", "bf16"], default="none",
                   help="train under torch.autocast(cpu, bfloat16)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Transformer(args.vocab, args.vocab, args.d_model, args.layers, args.heads,
                        args.d_ff, 0.1)
    src = torch.randint(4, args.vocab, (args.batch, args.src_len))
    tgt = torch.randint(4, args.vocab, (args.batch, args.tgt_len))
    if args.what == "onnx":
        export_onnx(model, args)
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
            with torch.autocast("cpu", dtype=torch.bfloat16,
                                enabled=args.autocast == "bf16"):
                logits = model(src, tgt)
                loss = criterion(logits.reshape(-1, logits.size(-1)).float(),
                                 tgt.reshape(-1))
            loss.backward()
            optimizer.step()
            schedule.step()
        median, fastest = timed(step, args.repeat)
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
