//===- Dropout.cpp - inverted dropout with a regenerated Philox mask ------===//
//
// The mask is never stored: element i keeps iff word i of the Philox stream
// keyed by (seed, step, site) is >= p * 2^32; with the context's batch rows
// set (txrt_context_set_batch_rows), i is counted from the call's first row
// in the whole batch. Work is split in chunks of kDropoutChunk (64) elements
// of the stream, each mask generated with one vectorised batch of 16 Philox
// counters (Philox.h).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Philox.h"

#include <cstring>

using namespace txrt;

namespace {

void dropout(Context &ctx, int64_t site, int64_t n, float p, uint64_t seed,
             int64_t step, const float *src, float *dst) {
  if (p == 0.0f) {
    if (dst != src)
      std::memmove(dst, src, size_t(n) * sizeof(float));
    return;
  }
  const PhiloxKey key = philoxKey(seed, step, site);
  const uint32_t threshold = dropoutThreshold(p);
  const float keepScale = 1.0f / (1.0f - p);
  constexpr int64_t kChunk = kDropoutChunk;
  // Element i is element offset + i of the whole batch's stream; chunks are
  // those of the stream, so the first and last may be partial.
  const int64_t offset = ctx.dropoutOffset(n);
  const int64_t firstChunk = offset / kChunk;
  const int64_t chunks = (offset + n + kChunk - 1) / kChunk - firstChunk;
#pragma omp parallel for num_threads(ctx.numThreads())                         \
    schedule(static) if (n > 16384)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t chunk = firstChunk + c;
    const uint64_t bits =
        dropoutKeepBits(key, uint64_t(chunk) * kPhiloxBatch, threshold);
    const int64_t chunkStart = chunk * kChunk;
    const int64_t from = chunkStart > offset ? chunkStart : offset;
    const int64_t to =
        chunkStart + kChunk < offset + n ? chunkStart + kChunk : offset + n;
    const int64_t shift = from - chunkStart;
    const float *in = src + (from - offset);
    float *out = dst + (from - offset);
    const int64_t width = to - from;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j)
      out[j] = (bits >> (shift + j)) & 1u ? in[j] * keepScale : 0.0f;
  }
}

void requireDropout(int64_t n, float p) {
  require(n >= 0, "n must be non-negative");
  require(p >= 0.0f && p < 1.0f, "p must be in [0, 1)");
}

} // namespace

extern "C" {

txrt_status txrt_dropout_fwd(txrt_context *ctx, int64_t site, int64_t n,
                             float p, uint64_t seed, int64_t step,
                             const float *x, float *y) {
  return runKernel(
      ctx, site, "txrt_dropout_fwd", [&] { return shapes("n", n, "p", p); },
      [&](Context &c) {
        requireDropout(n, p);
        if (n == 0)
          return;
        require(x && y, "x and y must not be NULL");
        dropout(c, site, n, p, seed, step, x, y);
      });
}

txrt_status txrt_dropout_bwd(txrt_context *ctx, int64_t fwd_site, int64_t n,
                             float p, uint64_t seed, int64_t step,
                             const float *dy, float *dx) {
  return runKernel(
      ctx, fwd_site, "txrt_dropout_bwd", [&] { return shapes("n", n, "p", p); },
      [&](Context &c) {
        requireDropout(n, p);
        if (n == 0)
          return;
        require(dy && dx, "dy and dx must not be NULL");
        dropout(c, fwd_site, n, p, seed, step, dy, dx);
      });
}

} // extern "C"
