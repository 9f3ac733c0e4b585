//===- Gather.cpp - gather along one axis and its scatter-add gradient ----===//
//
// The tensor is viewed as [outer, n, inner]: the gather copies, for every
// outer index, the `inner`-element rows the ids pick (parallel over outer
// indices and ids; rows are memcpy'd, so f32, i32 and bool share one
// kernel). The gradient zeroes dsrc and adds the rows back; ids may repeat,
// so threads own (outer index, column stripe) pairs and walk every id in
// order: no atomics, deterministic, the same sums for any thread count.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

using namespace txrt;

namespace {

/// Throws unless every id is in [-n, n).
void requireIndices(const int32_t *ids, int64_t count, int64_t n) {
  for (int64_t k = 0; k < count; ++k)
    if (ids[k] < -n || ids[k] >= n)
      throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                  "ids[" + std::to_string(k) + "] = " + std::to_string(ids[k]) +
                      " is outside [" + std::to_string(-n) + ", " +
                      std::to_string(n) + ")");
}

int64_t wrap(int32_t id, int64_t n) { return id < 0 ? n + id : id; }

} // namespace

extern "C" {

txrt_status txrt_gather(txrt_context *ctx, int64_t site, int64_t outer,
                        int64_t n, int64_t inner, int64_t element_bytes,
                        const int32_t *ids, int64_t count, const void *src,
                        void *out) {
  return runKernel(
      ctx, site, "txrt_gather",
      [&] {
        return shapes("outer", outer, "n", n, "inner", inner, "element_bytes",
                      element_bytes, "count", count);
      },
      [&](Context &c) {
        require(outer >= 0 && n >= 0 && inner >= 0 && count >= 0,
                "sizes must be non-negative");
        require(element_bytes == 1 || element_bytes == 4,
                "element_bytes must be 1 or 4");
        if (outer == 0 || count == 0 || inner == 0)
          return;
        require(ids && src && out, "ids, src and out must not be NULL");
        requireIndices(ids, count, n);
        const size_t rowBytes = size_t(inner * element_bytes);
        const auto *from = static_cast<const char *>(src);
        auto *to = static_cast<char *>(out);
        int64_t rows = outer * count;
#pragma omp parallel for num_threads(c.numThreads()) if (rows * inner > 32768)
        for (int64_t r = 0; r < rows; ++r) {
          int64_t o = r / count, k = r % count;
          std::memcpy(to + r * rowBytes,
                      from + (o * n + wrap(ids[k], n)) * rowBytes, rowBytes);
        }
      });
}

txrt_status txrt_gather_bwd(txrt_context *ctx, int64_t site, int64_t outer,
                            int64_t n, int64_t inner, const int32_t *ids,
                            int64_t count, const float *dout, float *dsrc) {
  return runKernel(
      ctx, site, "txrt_gather_bwd",
      [&] {
        return shapes("outer", outer, "n", n, "inner", inner, "count", count);
      },
      [&](Context &c) {
        require(outer >= 0 && n >= 0 && inner >= 0 && count >= 0,
                "sizes must be non-negative");
        if (outer == 0 || n == 0 || inner == 0)
          return;
        require(dsrc != nullptr, "dsrc is NULL");
        int64_t total = outer * n * inner;
#pragma omp parallel for num_threads(c.numThreads()) if (total > 65536)
        for (int64_t i = 0; i < outer * n; ++i)
          std::memset(dsrc + i * inner, 0, size_t(inner) * sizeof(float));
        if (count == 0)
          return;
        require(ids && dout, "ids and dout must not be NULL");
        requireIndices(ids, count, n);
        // Enough (outer index, stripe) tasks for every thread; stripes of
        // at least 16 floats (a cache line).
        int threads = c.numThreads();
        int64_t perOuter = std::max<int64_t>(1, (threads + outer - 1) / outer);
        int64_t stripe =
            std::max<int64_t>(16, (inner + perOuter - 1) / perOuter);
        stripe = (stripe + 15) / 16 * 16;
        int64_t stripes = (inner + stripe - 1) / stripe;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t t = 0; t < outer * stripes; ++t) {
          int64_t o = t / stripes, begin = (t % stripes) * stripe;
          int64_t width = std::min(stripe, inner - begin);
          for (int64_t k = 0; k < count; ++k) {
            float *dst = dsrc + (o * n + wrap(ids[k], n)) * inner + begin;
            const float *from = dout + (o * count + k) * inner + begin;
#pragma omp simd
            for (int64_t j = 0; j < width; ++j)
              dst[j] += from[j];
          }
        }
      });
}

} // extern "C"
