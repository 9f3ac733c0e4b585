#!/usr/bin/env bash
#===- scripts/gpu-check.sh - pack the CUDA tests here, run them on a GPU --===#
#
#   scripts/gpu-check.sh [pack]   (on the build machine, no GPU needed)
#     Builds the CUDA unit tests for a portable host CPU (-DTXRT_ARCH=
#     x86-64-v3, so they run on the GPU machine's different x86-64) in
#     $TXC_GPU_BUILD_DIR (default build-gpu, configured if it is not), and
#     copies them with the non-system shared libraries they load (ldd:
#     libdnnl.so.2, libgomp, libOpenCL, ...) into build-gpu-pack/, with,
#     compiled by that build's txc with --mcpu=x86-64-v3: the translate
#     example for the CPU and with --target=cuda (translate-cuda), base.tx
#     at B=8, S=T=64 for both (base-cpu-8x64, base-cuda-8x64), and the
#     llama, gpt and bert examples for both (NAME-cpu, NAME-cuda), and
#     test/GPU/Inputs/scalar-glue.tx and test/E2E/Inputs/math-edges.tx for
#     both (scalar-glue-cpu, math-edges-cuda, ...). Then seals
#     it (below) unless GPU_CHECK_NO_SEAL is set (bench-gpu.sh pack adds to
#     it first). GPU_CHECK_TXC=PATH: compile those with that txc (one
#     built with CUDA from the same commit, e.g. build/bin/txc) instead of
#     building the compiler in the pack's build dir too.
#
#   scripts/gpu-check.sh seal     build-gpu-pack/ as build-gpu-carry/
#     pack.tar.xz (xz: a fifth of the size; GPU_CHECK_GZIP=1: pack.tar.gz,
#     a third, in half a minute where xz is slow), the folder a device call
#     carries (at most 56 MiB beside the tree's few).
#
#   scripts/gpu-check.sh run      (on the GPU machine, in the repository root)
#     Unpacks the carried archive, prints nvidia-smi and the CPU's AVX2
#     support, finds cuBLASLt and NCCL there, then, each stage bounded (and
#     all by GPU_DEADLINE when set: scripts/gpu-budget.sh): the CUDA unit
#     tests (a skip is a failure on a GPU; 120 s), the portable translate
#     executable (info, an encode run), the --target=cuda translate
#     executable against it (test/GPU/Inputs/train-translate-gpu.sh: one
#     step agrees, --ema and resume, 600 steps reach 8 of 8, the GPU
#     checkpoint translates on the CPU; 150 s), base.tx's CUDA executable
#     against its CPU one (test/GPU/Inputs/base-vs-cpu.sh: forward,
#     gradients, 20 Adam steps; 120 s), the llama, gpt and bert examples'
#     CUDA executables against their CPU ones (test/GPU/Inputs/
#     examples-vs-cpu.sh; 60 s), glue that ends in scalars and the math
#     builtins at their domains' edges against the CPU and PyTorch
#     (test/GPU/Inputs/glue-vs-cpu.sh; 30 s), compute-sanitizer memcheck and
#     racecheck on the unit tests (GPU_CHECK_SANITIZER_SECONDS each,
#     default 150), and, where the machine has mpirun, data-parallel
#     training over NCCL (test/GPU/Inputs/train-mpi-nccl.sh; 150 s).
#     Writes summary.txt and each stage's log (unit.txt, unit.xml,
#     translate.txt, cuda-translate.txt, base-vs-cpu.txt,
#     examples-vs-cpu.txt, glue-vs-cpu.txt, memcheck.txt,
#     racecheck.txt, nccl.txt, nvidia-smi.txt) under $OUT (else
#     build-gpu-pack/out): scripts/gpu-session.sh bundles them into the
#     few files a device call returns. Exit 0 only when every stage passed.
#
# docs/cuda.md says how a session with a GPU calls it through the `run` tool.
#
#===------------------------------------------------------------------------===#
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACK="$ROOT/build-gpu-pack"
TEST_NAME=TxrtCudaTests
CARRY="$ROOT/build-gpu-carry"
MAX_PACK_BYTES=$((56 << 20))

die() {
  echo "gpu-check.sh: error: $*" >&2
  exit 2
}

# budget CAP: the stages of one device call share its time limit.
. "$ROOT/scripts/gpu-budget.sh"

# Libraries every Linux machine has (and that must come from that machine).
is_system_library() {
  case "$1" in
  linux-vdso.so* | ld-linux*.so* | libc.so* | libm.so* | libdl.so* | \
    libpthread.so* | librt.so* | libstdc++.so* | libgcc_s.so*)
    return 0 ;;
  esac
  return 1
}

pack() {
  local build="${TXC_GPU_BUILD_DIR:-$ROOT/build-gpu}"
  [[ "$build" = /* ]] || build="$ROOT/$build"
  if [[ ! -f "$build/build.ninja" ]]; then
    echo "== configuring $build (TXRT_ARCH=x86-64-v3, TXC_CUDA=ON)"
    nice cmake -G Ninja -S "$ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DTXRT_ARCH=x86-64-v3 -DTXC_CUDA=ON >/dev/null
  fi
  local arch
  arch="$(sed -n 's/^TXRT_ARCH:STRING=//p' "$build/CMakeCache.txt")"
  [[ "$arch" == x86-64-v3 || "$arch" == x86-64-v2 || "$arch" == x86-64 ]] ||
    die "$build is configured with TXRT_ARCH=$arch; the GPU machine's CPU" \
      "is another x86-64: use a build dir with -DTXRT_ARCH=x86-64-v3"
  # Paths relative to the source tree in ccache's keys: objects the main
  # build compiled with the same flags are reused.
  export CCACHE_BASEDIR="$ROOT"
  # GPU_CHECK_TXC: a txc built with CUDA elsewhere (the main build dir's, of
  # the same commit) instead of building the compiler here too, the longer
  # half of a cold pack build. It runs as bin/txc-borrowed here: txc links
  # executables with the runtime libraries of its own build dir (../lib),
  # which are this dir's x86-64-v3 ones.
  local txc="$build/bin/txc" compiler=txc
  if [[ -n "${GPU_CHECK_TXC:-}" ]]; then
    txc="$build/$GPU_BORROWED_TXC" compiler=
    mkdir -p "$build/bin"
    cp "$GPU_CHECK_TXC" "$txc" && "$txc" --version >/dev/null 2>&1 ||
      die "GPU_CHECK_TXC=$GPU_CHECK_TXC does not run"
    echo "== using $GPU_CHECK_TXC as $txc"
  fi
  echo "== building $TEST_NAME, ${compiler:+txc, }the runtime and the driver in $build"
  nice ninja -C "$build" "$TEST_NAME" $compiler txrt txrt_driver \
    txrt_driver_core txrt_cuda txrt_driver_cuda
  local binary="$build/test/unit/cuda/$TEST_NAME"
  [[ -x "$binary" ]] || die "$binary was not built (is the CUDA toolkit there?)"

  rm -rf "$PACK"
  mkdir -p "$PACK/bin" "$PACK/lib"
  cp "$binary" "$PACK/bin/"
  echo "== txc examples/translate/model.tx --mcpu=x86-64-v3"
  "$txc" "$ROOT/examples/translate/model.tx" --mcpu=x86-64-v3 \
    -o "$PACK/bin/translate"
  echo "== txc examples/translate/model.tx --target=cuda --mcpu=x86-64-v3"
  "$txc" "$ROOT/examples/translate/model.tx" --target=cuda \
    --mcpu=x86-64-v3 -o "$PACK/bin/translate-cuda"
  echo "== txc examples/transformer/base.tx (B=8, S=T=64) for the CPU and --target=cuda"
  "$txc" "$ROOT/examples/transformer/base.tx" --mcpu=x86-64-v3 \
    -D batch=8 -D max_len=64 -o "$PACK/bin/base-cpu-8x64"
  "$txc" "$ROOT/examples/transformer/base.tx" --target=cuda \
    --mcpu=x86-64-v3 -D batch=8 -D max_len=64 -o "$PACK/bin/base-cuda-8x64"
  local example
  for example in llama gpt bert; do
    echo "== txc examples/$example/model.tx for the CPU and --target=cuda"
    "$txc" "$ROOT/examples/$example/model.tx" --mcpu=x86-64-v3 \
      -o "$PACK/bin/$example-cpu"
    "$txc" "$ROOT/examples/$example/model.tx" --target=cuda \
      --mcpu=x86-64-v3 -o "$PACK/bin/$example-cuda"
  done
  echo "== txc test/GPU/Inputs/scalar-glue.tx, test/E2E/Inputs/math-edges.tx for the CPU and --target=cuda"
  local spec
  for spec in test/GPU/Inputs/scalar-glue.tx test/E2E/Inputs/math-edges.tx; do
    example="$(basename "$spec" .tx)"
    "$txc" "$ROOT/$spec" --mcpu=x86-64-v3 -o "$PACK/bin/$example-cpu"
    "$txc" "$ROOT/$spec" --target=cuda --mcpu=x86-64-v3 -o "$PACK/bin/$example-cuda"
  done
  local line name path program
  # The executables' libraries too (libmpi, libsentencepiece, ...): they
  # must start on a machine without this one's packages.
  for program in "$binary" "$PACK/bin/translate" "$PACK/bin/translate-cuda"; do
    while read -r line; do
      name="${line%% *}"
      path="$(echo "$line" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p')"
      [[ -n "$path" ]] || continue
      is_system_library "$name" && continue
      [[ -e "$PACK/lib/$name" ]] && continue
      cp -L "$path" "$PACK/lib/$name"
      echo "   $name ($(du -h "$PACK/lib/$name" | cut -f1))"
    done < <(ldd "$program" | sed 's/^[[:space:]]*//')
  done
  for program in "$TEST_NAME" translate translate-cuda base-cpu-8x64 base-cuda-8x64 \
    llama-cpu llama-cuda gpt-cpu gpt-cuda bert-cpu bert-cuda scalar-glue-cpu \
    scalar-glue-cuda math-edges-cpu math-edges-cuda; do
    if objdump -d "$PACK/bin/$program" | grep -q -m1 zmm; then
      die "$program uses AVX-512 registers: it would not run on an AVX2 host"
    fi
  done
  [[ -n "${GPU_CHECK_NO_SEAL:-}" ]] || seal
}

# seal: build-gpu-pack/ as one xz archive, build-gpu-carry/pack.tar.xz, the
# folder a device call carries (the libraries alone are 40 MiB unpacked,
# libdnnl 38 of them; the archive is a fifth of that). `run` unpacks it
# there when build-gpu-pack/ did not travel itself.
seal() {
  mkdir -p "$CARRY"
  local archive="$CARRY/pack.tar.xz" compress=(xz -T2 -6)
  if [[ -n "${GPU_CHECK_GZIP:-}" ]]; then
    # -9: seven CUDA executables embed the same kernels (8-10 MiB each);
    # -1 made 56 MiB of them, -9 50 MiB in 25 s.
    archive="$CARRY/pack.tar.gz" compress=(gzip -9)
  fi
  rm -f "$CARRY/pack.tar.xz" "$CARRY/pack.tar.gz"
  echo "== sealing $PACK into $archive"
  tar -C "$PACK" -cf - bin lib | "${compress[@]}" >"$archive.tmp"
  mv "$archive.tmp" "$archive"
  local bytes
  bytes="$(stat -c %s "$archive")"
  ((bytes <= MAX_PACK_BYTES)) ||
    die "the sealed pack is $((bytes >> 20)) MiB, over the 56 MiB a device call carries beside the tree"
  echo "== sealed $archive ($((bytes >> 20)) MiB of $(du -sh "$PACK" | cut -f1)): run it on a GPU machine with"
  echo "   carry=[\"build-gpu-carry\"], command=\"scripts/gpu-session.sh\" (or gpu-check.sh run)"
}

# unseal: on the GPU machine, build-gpu-pack/ from the carried archive.
# A pack.tar.gz (GPU_CHECK_GZIP=1 at seal: xz -6 can take many minutes on a
# slow or crowded build machine) unpacks the same way.
unseal() {
  [[ -x "$PACK/bin/$TEST_NAME" ]] && return
  mkdir -p "$PACK"
  if [[ -f "$CARRY/pack.tar.xz" ]]; then
    xz -dc "$CARRY/pack.tar.xz" | tar -C "$PACK" -xf -
  elif [[ -f "$CARRY/pack.tar.gz" ]]; then
    tar -C "$PACK" -xzf "$CARRY/pack.tar.gz"
  fi
}

# cuBLASLt of the GPU machine: its CUDA toolkit, or the copy PyTorch's
# nvidia-cublas wheel installs.
find_cublaslt() {
  local candidate
  for candidate in /usr/local/cuda/lib64/libcublasLt.so.13 \
    /usr/local/cuda/targets/x86_64-linux/lib/libcublasLt.so.13; do
    [[ -e "$candidate" ]] && { echo "$candidate"; return; }
  done
  candidate="$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib", "libcublasLt.so.13"))' 2>/dev/null || true)"
  [[ -n "$candidate" && -e "$candidate" ]] && { echo "$candidate"; return; }
  find / -xdev -name 'libcublasLt.so.13*' -type f 2>/dev/null | head -1
}

# NCCL of the GPU machine: its CUDA toolkit, or PyTorch's nvidia-nccl wheel.
find_nccl() {
  local candidate
  for candidate in /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2 \
    /usr/local/cuda/targets/x86_64-linux/lib/libnccl.so.2; do
    [[ -e "$candidate" ]] && { echo "$candidate"; return; }
  done
  candidate="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)"
  [[ -n "$candidate" && -e "$candidate" ]] && { echo "$candidate"; return; }
  find / -xdev -name 'libnccl.so.2*' -type f 2>/dev/null | head -1
}

run() {
  unseal
  [[ -x "$PACK/bin/$TEST_NAME" ]] ||
    die "no $PACK/bin/$TEST_NAME: run 'scripts/gpu-check.sh pack' on the" \
      "build machine and carry build-gpu-pack"
  local out="${OUT:-$PACK/out}"
  mkdir -p "$out"
  local summary="$out/summary.txt" failed=0
  : >"$summary"
  note() { echo "$*" | tee -a "$summary"; }
  # check_script SECONDS LOG PASS FAIL SCRIPT ARGS...: one comparison script
  # within its share of the budget, its log printed and kept as LOG.txt,
  # one PASS or FAIL line in the summary.
  check_script() {
    local seconds=$1 log=$2 pass=$3 fail=$4 status
    shift 4
    set +e
    timeout "$(budget "$seconds")" "$@" >"$out/$log.txt" 2>&1
    status=$?
    set -e
    cat "$out/$log.txt"
    if ((status == 0)); then
      note "PASS $pass"
    else
      note "FAIL $fail (exit $status): see $log.txt"
      failed=1
    fi
  }

  nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
  head -20 "$out/nvidia-smi.txt"
  note "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)," \
    "avx2: $(grep -q -m1 ' avx2' /proc/cpuinfo && echo yes || echo NO)," \
    "avx512f: $(grep -q -m1 ' avx512f' /proc/cpuinfo && echo yes || echo no)"

  export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # compute-sanitizer ships with the toolkit, not always on PATH.
  export PATH="$PATH:/usr/local/cuda/bin"
  local cublaslt
  cublaslt="$(find_cublaslt)"
  if [[ -n "$cublaslt" ]]; then
    export TXRT_CUBLASLT="$cublaslt"
    note "cuBLASLt: $cublaslt"
  else
    note "cuBLASLt: NOT FOUND (the GEMM tests will fail)"
  fi
  local nccl
  nccl="$(find_nccl)"
  if [[ -n "$nccl" ]]; then
    export TXRT_NCCL="$nccl"
    note "NCCL: $nccl"
  else
    note "NCCL: NOT FOUND (NcclTest and the NCCL check will fail)"
  fi
  if ldd "$PACK/bin/$TEST_NAME" | grep 'not found'; then
    note "FAIL libraries: the lines above are missing on this machine"
    failed=1
  fi

  local binary="$PACK/bin/$TEST_NAME"
  set +e
  timeout "$(budget 120)" "$binary" --gtest_output="xml:$out/unit.xml" \
    >"$out/unit.txt" 2>&1
  local status=$?
  set -e
  tail -40 "$out/unit.txt"
  local skipped
  skipped="$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below:/\1/p' "$out/unit.txt")"
  skipped="${skipped:-0}"
  if ((status == 124)); then
    note "FAIL unit tests: timed out after 120 s (a hang?)"
    failed=1
  elif ((status != 0)); then
    note "FAIL unit tests (exit $status): $(grep -cE '^\[  FAILED  \] [A-Za-z].* \([0-9]+ ms\)' "$out/unit.txt" || true) failed"
    failed=1
  elif ((skipped > 0)); then
    note "FAIL unit tests: $skipped skipped on a GPU machine:" \
      "$(grep -m1 -A1 'Skipped' "$out/unit.txt" | tail -1)"
    failed=1
  else
    note "PASS unit tests: $(grep -m1 '^\[  PASSED  \]' "$out/unit.txt")"
  fi
  # The tensor-core attention kernels (the default) were written and
  # emulated without a GPU: where they fail on one, the stages below (and
  # gpu-session.sh's benchmarks) run the CUDA-core kernels instead, so one
  # broken form does not fail every training and decoding check with it.
  if grep -q '^\[  FAILED  \] CudaAttentionTest' "$out/unit.txt" &&
    grep -qE '\(tensor cores\)|attention[A-Za-z]*Mma' "$out/unit.txt"; then
    export TXRT_CUDA_ATTENTION=simt
    note "FALLBACK attention: the tensor-core kernels failed" \
      "CudaAttentionTest; the stages below run TXRT_CUDA_ATTENTION=simt"
  fi

  set +e
  {
    "$PACK/bin/translate" info &&
      printf '4 5 6\n7 8 0\n' >"$out/src.txt" &&
      "$PACK/bin/translate" run encode --init 3 --input "src=$out/src.txt" \
        --out-dir "$PACK/run"
  } >"$out/translate.txt" 2>&1
  status=$?
  set -e
  rm -f "$out/src.txt"
  tail -3 "$out/translate.txt"
  if ((status == 0)); then
    note "PASS portable executable (--mcpu=x86-64-v3): info and encode ran"
  else
    note "FAIL portable executable (exit $status): see translate.txt"
    failed=1
  fi
  set +e
  timeout "$(budget 150)" "$ROOT/test/GPU/Inputs/train-translate-gpu.sh" \
    "$PACK/bin/translate" "$PACK/bin/translate-cuda" \
    "$ROOT/examples/translate/data/train.tsv" "$PACK/cuda-translate" \
    >"$out/cuda-translate.txt" 2>&1
  status=$?
  set -e
  cat "$out/cuda-translate.txt"
  if ((status == 0)); then
    note "PASS --target=cuda executable: $(grep -h 'exact' "$out/cuda-translate.txt" | tr '\n' ' ')"
  else
    note "FAIL --target=cuda executable (exit $status): see cuda-translate.txt"
    failed=1
  fi
  check_script 120 base-vs-cpu \
    "base.tx on the GPU vs the CPU: forward, gradients, 20 Adam steps" \
    "base.tx on the GPU vs the CPU" \
    "$ROOT/test/GPU/Inputs/base-vs-cpu.sh" "$PACK/bin/base-cpu-8x64" \
    "$PACK/bin/base-cuda-8x64" "$PACK/base-vs-cpu"
  check_script 60 examples-vs-cpu \
    "llama, gpt, bert on the GPU vs the CPU: forward, gradients, 10 Adam steps" \
    "llama, gpt, bert on the GPU vs the CPU" \
    "$ROOT/test/GPU/Inputs/examples-vs-cpu.sh" "$PACK/bin" "$PACK/examples-vs-cpu"
  check_script 30 glue-vs-cpu \
    "glue ending in scalars and the math builtins' edges on the GPU (vs the CPU, vs PyTorch)" \
    "glue on the GPU" \
    "$ROOT/test/GPU/Inputs/glue-vs-cpu.sh" "$PACK/bin" "$PACK/glue-vs-cpu"
  local tool
  for tool in memcheck racecheck; do
    if ! command -v compute-sanitizer >/dev/null; then
      note "FAIL $tool: compute-sanitizer is not on PATH"
      failed=1
      continue
    fi
    local limit
    limit="$(budget "${GPU_CHECK_SANITIZER_SECONDS:-150}")"
    if ((limit <= 1)); then
      note "SKIP $tool: out of time (GPU_DEADLINE)"
      failed=1
      continue
    fi
    set +e
    # Bounded, so that a slow sanitizer still leaves the device call time
    # to return what it found (the run tool stops a call at 10 minutes).
    # Not the tests that start NCCL: its own kernels and proxy thread are
    # not ours to check, and slow under the sanitizer; nor the test that
    # asks for more memory than the GPU has on purpose (memcheck reports
    # the failed cudaMalloc it expects).
    timeout "$limit" \
      compute-sanitizer --tool "$tool" --error-exitcode 99 "$binary" \
      --gtest_filter='Cuda*-*Nccl*:CudaContextTest.DeviceInfoAndBadArguments' >"$out/$tool.txt" 2>&1
    status=$?
    set -e
    tail -5 "$out/$tool.txt"
    if ((status == 124)); then
      note "FAIL $tool: timed out after $limit s"
      failed=1
    elif ((status == 0)); then
      note "PASS $tool: $(grep -m1 'ERROR SUMMARY' "$out/$tool.txt" || echo 'no errors')"
    else
      note "FAIL $tool (exit $status): $(grep -m1 'ERROR SUMMARY' "$out/$tool.txt" || echo 'see $tool.txt')"
      failed=1
    fi
  done
  if command -v mpirun >/dev/null; then
    set +e
    timeout "$(budget 150)" "$ROOT/test/GPU/Inputs/train-mpi-nccl.sh" \
      "$PACK/bin/translate" "$PACK/bin/translate-cuda" \
      "$ROOT/examples/translate/data/train.tsv" "$PACK/nccl" python3 \
      mpirun --oversubscribe --allow-run-as-root -x TXRT_NCCL \
      -x LD_LIBRARY_PATH >"$out/nccl.txt" 2>&1
    status=$?
    set -e
    grep -E '^(PASS|FAIL) ' "$out/nccl.txt"
    if ((status == 0)); then
      note "PASS NCCL (mpirun): $(grep -c '^PASS' "$out/nccl.txt") stages"
    else
      note "FAIL NCCL (mpirun, exit $status): see nccl.txt"
      failed=1
    fi
  else
    note "SKIP NCCL: no mpirun on this machine (the executables carry" \
      "libmpi; Open MPI's launcher is not packed)"
  fi
  echo "== summary ($out)"
  cat "$summary"
  return "$failed"
}

case "${1:-pack}" in
pack) pack ;;
seal) seal ;;
unseal) unseal ;;
run) run ;;
-h | --help) sed -n '2,/^#===-\{10\}/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
*) die "unknown mode '$1' (pack, seal, unseal or run)" ;;
esac
