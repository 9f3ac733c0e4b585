//===- main.cpp - embedding a model compiled by txc in a C++ program ------===//
//
// `txc model.tx --emit=obj -o model.o` writes model.o and model.h; this
// program links model.o with libtxrt and calls the `encode` entry directly
// through the header's declarations: it allocates the parameter arena and the
// entry's activation arena (sizes from the header), fills the parameters,
// runs one batch and prints a checksum of the output.
//
//   build/bin/txc examples/copy/model.tx --emit=obj -o build/embed/model.o
//   c++ -std=c++17 -O2 -I build/embed -I runtime/include
//       examples/embed/main.cpp build/embed/model.o build/lib/libtxrt.a
//       -ldnnl -fopenmp -o build/embed/embed
//   build/embed/embed
//
//===----------------------------------------------------------------------===//
#include "model.h"
#include "txrt/txrt.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

/// 64-byte aligned zeroed memory, as the entries expect for arenas.
void *alignedAlloc(size_t bytes) {
  void *memory = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory)
    std::memset(memory, 0, bytes);
  return memory;
}

} // namespace

int main() {
  txrt_context *ctx = nullptr;
  if (txrt_context_create(&ctx) != TXRT_OK) {
    std::fprintf(stderr, "error: %s\n", txrt_last_error(nullptr));
    return 1;
  }
  // Parameters: a real program loads them (the metadata in txc_model_json
  // gives each name, shape and offset); here every weight is a small
  // constant so the run is deterministic.
  auto *params = static_cast<float *>(alignedAlloc(TXC_PARAM_ARENA_BYTES));
  void *arena = alignedAlloc(TXC_ENCODE_ARENA_BYTES);
  if (!params || !arena) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < TXC_PARAM_ARENA_BYTES / sizeof(float); ++i)
    params[i] = 0.01f * float(int(i % 7) - 3);

  // One batch: B = 2 sequences of S = 5 token ids, right-padded with 0.
  const int64_t batch = 2, length = 5;
  std::vector<int32_t> src = {4, 5, 6, 7, 8, 9, 10, 11, 0, 0};
  // dims in the header's order (B, S, T, cache); encode reads B and S
  // only, but the array holds every dim.
  const int64_t dims[] = {batch, length, 1, 1};
  std::vector<float> memory(batch * length * 64);
  void *inputs[] = {src.data()};
  void *outputs[] = {memory.data()};
  if (txc_entry_encode(ctx, params, arena, dims, inputs, outputs) != 0) {
    std::fprintf(stderr, "error: %s\n", txrt_last_error(ctx));
    return 1;
  }
  double checksum = 0;
  bool finite = true;
  for (float value : memory) {
    checksum += std::fabs(value);
    finite = finite && std::isfinite(value);
  }
  std::printf("encode: %lld x %lld x 64 outputs, finite: %s, sum |x| = %.4f\n",
              (long long)batch, (long long)length, finite ? "yes" : "no",
              checksum);
  std::printf("metadata: %zu bytes of JSON\n", std::strlen(txc_model_json));
  std::free(params);
  std::free(arena);
  txrt_context_destroy(ctx);
  return finite ? 0 : 1;
}
