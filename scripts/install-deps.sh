#!/usr/bin/env bash
#===- install-deps.sh - install what txc needs from Debian 12 ---------------===#
#
# Idempotent: installs with apt-get only the packages that are missing and
# prints what it installed. Safe to run on every `make demo` / `make check`.
#
#===------------------------------------------------------------------------===#
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ lld make python3 python3-numpy bc
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools clang-19
  libdnnl-dev libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
  python3-torch libopenblas0-openmp nlohmann-json3-dev
  libclang-rt-19-dev libomp-19-dev graphviz
  libsentencepiece-dev sentencepiece wordnet-base apertium-eng-spa
  libopenmpi-dev openmpi-bin
)
# libclang-rt-19-dev (libFuzzer, the ASan/UBSan runtimes) and libomp-19-dev
# (clang's OpenMP runtime) are for the sanitizer and fuzzing build
# (scripts/check-sanitize.sh, scripts/fuzz.sh); the default build uses g++.
# libsentencepiece-dev: subword vocabularies (runtime/driver/data/
# SentencePiece.h); sentencepiece: spm_train / spm_encode, models users bring
# (the tests of them need it); wordnet-base and apertium-eng-spa: the English->Spanish
# corpus of examples/enes/make-corpus.sh.
# libopenmpi-dev, openmpi-bin: data-parallel training (docs/distributed.md).
# graphviz renders txc --emit=svg (docs/graphs.md).

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: missing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-deps: error: not root and no sudo; install as root:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: error: apt-get not found (txc targets Debian 12); install: ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
  echo "install-deps: apt-get install failed; refreshing package lists and retrying" >&2
  $SUDO apt-get update || { echo "install-deps: error: apt-get update failed (no network or apt locked?)" >&2; exit 1; }
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" || {
    echo "install-deps: error: could not install: ${missing[*]}" >&2; exit 1; }
fi
echo "install-deps: installed: ${missing[*]}"
