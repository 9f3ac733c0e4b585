#!/usr/bin/env bash
#===- scripts/bench-gpu.sh - txc's CUDA executables against PyTorch on a GPU ===#
#
#   scripts/bench-gpu.sh pack   (on the build machine, no GPU needed)
#     scripts/gpu-check.sh pack, then into the same build-gpu-pack/: base.tx
#     compiled with --target=cuda --mcpu=x86-64-v3 at B=8, S=T=64
#     (bin/base-cuda-8x64) and at B=64, S=T=256 (bin/base-cuda-64x256), and
#     txrt-cuda-bench (the attention kernels alone).
#
#   scripts/bench-gpu.sh run    (on the GPU machine, in the repository root)
#     In one run, each figure beside PyTorch (the GPU machine's, 2.x with
#     CUDA) on the same GPU, strict fp32 on both sides (TF32 off):
#       - base.tx train step (forward, backward, Adam) at B=8, T=64 and at
#         B=64, T=256: txc's `run train --repeat` median against PyTorch
#         eager (scripts/bench_torch.py train --device cuda) and
#         torch.compile (--compile); targets >= 1.5x eager, >= 1.0x compile;
#       - greedy decoding with a KV cache, ms/token at B=8 (`bench`)
#         against PyTorch eager with its own KV cache (greedy-cache);
#         target >= 2x;
#       - the B=64, T=256 step again with TF32 on both sides (txc
#         --allow-tf32, PyTorch --tf32);
#       - every kernel of one B=64, T=256 step timed by ncu, summed by
#         name (scripts/gpu_kernel_times.py), where ncu is there;
#       - the attention kernels forward and backward at T=256 and 1024
#         (txrt-cuda-bench, causal, 8 heads of 64) against
#         scaled_dot_product_attention; target: within 1.3x (txc / SDPA
#         time <= 1.3).
#     Prints a FIGURE line per figure (scripts/bench_summary.py's format)
#     and writes bench-gpu.txt under $OUT (else build-gpu-pack/out); PYTHON
#     names the interpreter with torch (default python3). Each
#     part has a time limit; a part that fails or times out is reported and
#     the rest still run. Exit 0 when every part ran (targets missed are
#     reported, not failures).
#
#===------------------------------------------------------------------------===#
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACK="$ROOT/build-gpu-pack"

. "$ROOT/scripts/gpu-budget.sh"

die() {
  echo "bench-gpu.sh: error: $*" >&2
  exit 2
}

pack() {
  GPU_CHECK_NO_SEAL=1 "$ROOT/scripts/gpu-check.sh" pack
  local build="${TXC_GPU_BUILD_DIR:-$ROOT/build-gpu}"
  [[ "$build" = /* ]] || build="$ROOT/$build"
  export CCACHE_BASEDIR="$ROOT"
  nice ninja -C "$build" txrt-cuda-bench
  local txc="$build/bin/txc"
  [[ -z "${GPU_CHECK_TXC:-}" ]] || txc="$build/$GPU_BORROWED_TXC"
  cp "$build/bin/txrt-cuda-bench" "$PACK/bin/"
  local config
  for config in 64x256; do
    echo "== txc examples/transformer/base.tx --target=cuda (B x T = $config)"
    "$txc" "$ROOT/examples/transformer/base.tx" --target=cuda \
      --mcpu=x86-64-v3 -D "batch=${config%x*}" -D "max_len=${config#*x}" \
      -o "$PACK/bin/base-cuda-$config"
  done
  "$ROOT/scripts/gpu-check.sh" seal
}

# The median of "ran 'train' ... median X ms" from `run --repeat`.
txc_step_ms() {
  sed -nE "s/.*ran 'train'.*median ([0-9.]+) ms.*/\1/p"
}

# txc_train_command CONFIG: sets `train_cmd` to the CUDA executable's
# `run train` on run()'s inputs for CONFIG (8x64, 64x256); options follow.
txc_train_command() {
  local config=$1
  train_cmd=("$PACK/bin/base-cuda-$config" run train --init 0
    --input "src=$work/src-$config.npy" --input "tgt_in=$work/tgt_in-$config.npy"
    --input "tgt_out=$work/tgt_out-$config.npy" --out-dir "$work/out")
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }

run() {
  "$ROOT/scripts/gpu-check.sh" unseal
  for program in base-cuda-8x64 base-cuda-64x256 txrt-cuda-bench; do
    [[ -x "$PACK/bin/$program" ]] ||
      die "no $PACK/bin/$program: run 'scripts/bench-gpu.sh pack' here first"
  done
  local out="${OUT:-$PACK/out}" work
  mkdir -p "$out"
  work="$(mktemp -d)"
  local log="$out/bench-gpu.txt"
  : >"$log"
  say() { echo "$*" | tee -a "$log"; }
  export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local cublaslt
  cublaslt="$(find / -xdev -name 'libcublasLt.so.13*' -type f 2>/dev/null | head -1)"
  [[ -z "$cublaslt" ]] || export TXRT_CUBLASLT="$cublaslt"
  say "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
  say "pytorch: $("${PYTHON:-python3}" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>&1)"
  say "cublasLt: ${cublaslt:-NOT FOUND}"
  local python="${PYTHON:-python3}"
  local py=("$python" "$ROOT/scripts/bench_torch.py")

  local config batch len steps
  for config in 8x64 64x256; do
    batch="${config%x*}" len="${config#*x}"
    steps=$((batch == 8 ? 20 : 8))
    "$python" - "$work" "$batch" "$len" <<'PY'
import sys
import numpy as np
out, batch, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
for name in ("src", "tgt_in", "tgt_out"):
    np.save("%s/%s-%dx%d.npy" % (out, name, batch, length),
            rng.integers(4, 8000, size=(batch, length), dtype=np.int32))
PY
    local txc_ms eager_ms compiled_ms train_cmd
    txc_train_command "$config"
    txc_ms="$(timeout "$(budget 240)" "${train_cmd[@]}" --repeat "$steps" 2>&1 >/dev/null |
      tee "$out/txc-train-$config.txt" | txc_step_ms)" || true
    eager_ms="$(timeout "$(budget 240)" "${py[@]}" train --device cuda --batch "$batch" \
      --src_len "$len" --tgt_len "$len" --repeat "$steps" 2>&1 | tee "$out/torch-train-$config.txt" |
      awk '/^torch_train_ms/ {print $2}')" || true
    say "train step B=$batch T=$len: txc ${txc_ms:-FAILED} ms, PyTorch eager ${eager_ms:-FAILED} ms"
    # The same steps run directly, call by call (no CUDA graph replay).
    local direct_ms
    direct_ms="$(TXRT_CUDA_GRAPHS=0 timeout "$(budget 120)" "${train_cmd[@]}" --repeat "$steps" \
      2>&1 >/dev/null | tee "$out/txc-train-$config-direct.txt" | txc_step_ms)" || true
    say "  txc without CUDA graphs (TXRT_CUDA_GRAPHS=0): ${direct_ms:-FAILED} ms"
    if [[ -n "$txc_ms" && -n "$direct_ms" ]]; then
      say "FIGURE gpu.graphs_${config} $txc_ms ms ratio=$(ratio "$direct_ms" "$txc_ms") vs=txc_direct"
    fi
    eval "txc_ms_$batch=\$txc_ms"
    if [[ -n "$txc_ms" && -n "$eager_ms" ]]; then
      say "FIGURE gpu.train_${config} $txc_ms ms ratio=$(ratio "$eager_ms" "$txc_ms") vs=pytorch_eager target=>=1.5"
    fi
  done

  local bench torch_decode txc_token torch_token
  bench="$(timeout "$(budget 240)" "$PACK/bin/base-cuda-8x64" bench --steps 1 --batch 8 --src-len 64 \
    --tgt-len 64 2>&1 | tee "$out/txc-bench-8x64.txt")" || true
  txc_token="$(echo "$bench" | sed -nE 's/^greedy +([0-9.]+) ms\/token.*KV cache.*/\1/p')"
  torch_decode="$(timeout "$(budget 240)" "${py[@]}" greedy-cache --device cuda --batch 8 --src_len 64 \
    --tgt_len 64 --repeat 3 2>&1 | tee "$out/torch-greedy-cache.txt")" || true
  torch_token="$(echo "$torch_decode" | awk '/^torch_greedy_cache_ms_per_token/ {print $2}')"
  say "greedy decoding B=8, ms/token with a KV cache: txc ${txc_token:-FAILED}, PyTorch eager ${torch_token:-FAILED}"
  if [[ -n "$txc_token" && -n "$torch_token" ]]; then
    say "FIGURE gpu.decode_greedy_ms_per_token $txc_token ms ratio=$(ratio "$torch_token" "$txc_token") vs=pytorch_kv_cache target=>=2"
  fi

  local t kernels sdpa direction
  for t in 256 1024; do
    kernels="$(timeout "$(budget 120)" "$PACK/bin/txrt-cuda-bench" --batch 8 --heads 8 --len "$t" \
      --head-dim 64 2>&1 | tee "$out/txc-attention-$t.txt")" || true
    # The tiled CUDA-core kernels beside them (not a figure: what the
    # tensor cores gained).
    TXRT_CUDA_ATTENTION=simt timeout "$(budget 60)" "$PACK/bin/txrt-cuda-bench" --batch 8 --heads 8 \
      --len "$t" --head-dim 64 > "$out/txc-attention-simt-$t.txt" 2>&1 || true
    say "attention T=$t, CUDA-core kernels (TXRT_CUDA_ATTENTION=simt): $(grep -E '^txc_attention_(fwd|bwd)_ms' \
      "$out/txc-attention-simt-$t.txt" | tr '\n' ' ')"
    sdpa="$(timeout "$(budget 120)" "${py[@]}" attention --device cuda --batch 8 --heads 8 --src_len "$t" \
      --repeat 20 2>&1 | tee "$out/torch-attention-$t.txt")" || true
    for direction in fwd bwd; do
      local ours theirs
      ours="$(echo "$kernels" | awk -v k="txc_attention_${direction}_ms" '$1 == k {print $2}')"
      theirs="$(echo "$sdpa" | awk -v k="torch_sdpa_${direction}_ms" '$1 == k {print $2}')"
      say "attention $direction T=$t (B=8, 8 heads of 64, causal): txc ${ours:-FAILED} ms, SDPA ${theirs:-FAILED} ms"
      if [[ -n "$ours" && -n "$theirs" ]]; then
        say "FIGURE gpu.attention_${direction}_T${t} $ours ms ratio=$(ratio "$theirs" "$ours") vs=pytorch_sdpa target=>=0.77"
      fi
    done
  done

  # TF32 on both sides (txc --allow-tf32, PyTorch allow_tf32) at the large
  # shape, where the GEMMs dominate.
  local tf32_ms torch_tf32_ms
  txc_train_command 64x256
  tf32_ms="$(timeout "$(budget 240)" "${train_cmd[@]}" --allow-tf32 --repeat 8 2>&1 >/dev/null |
    tee "$out/txc-train-64x256-tf32.txt" | txc_step_ms)" || true
  torch_tf32_ms="$(timeout "$(budget 240)" "${py[@]}" train --device cuda --tf32 --batch 64 \
    --src_len 256 --tgt_len 256 --repeat 8 2>&1 | tee "$out/torch-train-64x256-tf32.txt" |
    awk '/^torch_train_ms/ {print $2}')" || true
  say "train step B=64 T=256 under TF32: txc ${tf32_ms:-FAILED} ms, PyTorch eager ${torch_tf32_ms:-FAILED} ms"
  if [[ -n "$tf32_ms" && -n "$torch_tf32_ms" ]]; then
    say "FIGURE gpu.train_64x256_tf32 $tf32_ms ms ratio=$(ratio "$torch_tf32_ms" "$tf32_ms") vs=pytorch_eager_tf32 target=>=1.5"
  fi

  # Where the large step's time goes: every kernel of one B=64, T=256 step
  # timed by Nsight Compute (where the machine has ncu), summed by name.
  local ncu
  ncu="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)"
  if [[ -n "$ncu" ]]; then
    txc_train_command 64x256
    timeout "$(budget 120)" "$ncu" --clock-control none --metrics gpu__time_duration.sum \
      --csv "${train_cmd[@]}" >"$out/ncu-train-64x256.csv" 2>"$out/ncu-train-64x256.err" || true
    "$python" "$ROOT/scripts/gpu_kernel_times.py" "$out/ncu-train-64x256.csv" 15 |
      tee "$out/kernels-train-64x256.txt" | sed 's/^/  /' | tee -a "$log"
  else
    say "kernel profile: no ncu on this machine"
  fi

  # torch.compile last: compiling the model takes minutes of the call.
  for config in 8x64 64x256; do
    batch="${config%x*}" len="${config#*x}"
    steps=$((batch == 8 ? 20 : 8))
    txc_ms="$(eval "echo \${txc_ms_$batch:-}")"
    compiled_ms="$(timeout "$(budget 300)" "${py[@]}" train --device cuda --compile --batch "$batch" \
      --src_len "$len" --tgt_len "$len" --repeat "$steps" --warmup 3 2>&1 |
      tee "$out/torch-compile-train-$config.txt" | awk '/^torch_train_ms/ {print $2}')" || true
    say "train step B=$batch T=$len: torch.compile ${compiled_ms:-FAILED} ms"
    if [[ -n "$txc_ms" && -n "$compiled_ms" ]]; then
      say "FIGURE gpu.train_${config}_compile $txc_ms ms ratio=$(ratio "$compiled_ms" "$txc_ms") vs=torch_compile target=>=1.0"
    fi
  done
  rm -rf "$work"
  local failed
  failed="$(grep -c 'FAILED' "$log" || true)"
  say "bench-gpu: $(grep -c '^FIGURE' "$log" || true) figures, ${failed:-0} parts failed"
  [[ "${failed:-0}" == 0 ]]
}

case "${1:-pack}" in
pack) pack ;;
run) run ;;
*) die "unknown command '$1' (pack or run)" ;;
esac
