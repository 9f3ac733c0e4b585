//===- Embedding.cpp - embedding gather and its scatter-add gradient ------===//
//
// Forward: parallel over rows, each a scaled copy of a table row (plus a
// positional row). Backward: the scatter-add has write conflicts between
// rows with equal ids, so threads own column stripes of the table instead of
// rows of the input: every thread walks all ids but touches only its stripe.
// No atomics, deterministic, and the stripe stays cache-resident per id.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

using namespace txrt;

namespace {

/// Throws unless every id is in [0, vocab) (or is `skipped`, when given).
void requireIds(const int32_t *ids, int64_t n, int64_t vocab,
                const int32_t *skipped) {
  for (int64_t i = 0; i < n; ++i) {
    if (skipped && ids[i] == *skipped)
      continue;
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                  "ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                      " is outside [0, " + std::to_string(vocab) + ")");
  }
}

} // namespace

extern "C" {

txrt_status txrt_embedding_fwd(txrt_context *ctx, int64_t site, int64_t n,
                               int64_t vocab, int64_t dim, const int32_t *ids,
                               const float *table, float scale,
                               const float *pos, int64_t seq_len, float *out) {
  return runKernel(
      ctx, site, "txrt_embedding_fwd",
      [&] {
        return shapes("n", n, "vocab", vocab, "dim", dim, "seq_len", seq_len);
      },
      [&](Context &c) {
        require(n >= 0 && vocab >= 0 && dim >= 0, "sizes must be non-negative");
        if (n == 0 || dim == 0)
          return;
        require(ids && table && out, "ids, table and out must not be NULL");
        require(!pos || seq_len > 0, "pos needs seq_len > 0");
        requireIds(ids, n, vocab, nullptr);
#pragma omp parallel for num_threads(c.numThreads()) if (n * dim > 32768)
        for (int64_t i = 0; i < n; ++i) {
          const float *src = table + int64_t(ids[i]) * dim;
          float *dst = out + i * dim;
          if (pos) {
            const float *p = pos + (i % seq_len) * dim;
#pragma omp simd
            for (int64_t j = 0; j < dim; ++j)
              dst[j] = scale * src[j] + p[j];
          } else {
#pragma omp simd
            for (int64_t j = 0; j < dim; ++j)
              dst[j] = scale * src[j];
          }
        }
      });
}

txrt_status txrt_embedding_bwd(txrt_context *ctx, int64_t site, int64_t n,
                               int64_t vocab, int64_t dim, const int32_t *ids,
                               const float *dout, float scale,
                               int32_t padding_idx, float *dtable,
                               int32_t accumulate) {
  return runKernel(
      ctx, site, "txrt_embedding_bwd",
      [&] {
        return shapes("n", n, "vocab", vocab, "dim", dim, "padding_idx",
                      padding_idx);
      },
      [&](Context &c) {
        require(n >= 0 && vocab >= 0 && dim >= 0, "sizes must be non-negative");
        if (vocab == 0 || dim == 0)
          return;
        require(dtable != nullptr, "dtable is NULL");
        if (!accumulate) {
          int64_t total = vocab * dim;
#pragma omp parallel for num_threads(c.numThreads()) if (total > 65536)
          for (int64_t i = 0; i < vocab; ++i)
            std::memset(dtable + i * dim, 0, size_t(dim) * sizeof(float));
        }
        if (n == 0)
          return;
        require(ids && dout, "ids and dout must not be NULL");
        requireIds(ids, n, vocab, padding_idx >= 0 ? &padding_idx : nullptr);
        // Stripes of at least 16 floats (a cache line), one or more per
        // thread.
        int threads = c.numThreads();
        int64_t stripe = std::max<int64_t>(16, (dim + threads - 1) / threads);
        stripe = (stripe + 15) / 16 * 16;
        int64_t stripes = (dim + stripe - 1) / stripe;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t s = 0; s < stripes; ++s) {
          int64_t begin = s * stripe;
          int64_t width = std::min(stripe, dim - begin);
          for (int64_t i = 0; i < n; ++i) {
            int32_t id = ids[i];
            if (id == padding_idx || id < 0)
              continue;
            float *dst = dtable + int64_t(id) * dim + begin;
            const float *src = dout + i * dim + begin;
#pragma omp simd
            for (int64_t j = 0; j < width; ++j)
              dst[j] += scale * src[j];
          }
        }
      });
}

} // extern "C"
