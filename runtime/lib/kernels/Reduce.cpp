//===- Reduce.cpp - reductions (oneDNN reduction) and argmax --------------===//
//
// Dimensions are first merged into runs of kept / reduced dims. Reducing
// the innermost run ([outer, reduced]) runs on oneDNN's jit reduction for
// max and min, and here for sum and mean; a single reduced run with kept
// dims inside it ([outer, reduced, inner], e.g. a bias gradient) is a
// vectorised loop here because oneDNN 2.6 only has a reference
// implementation for it; other patterns go to oneDNN. Sums and means here
// add float blocks (kSumBlock terms along a row, 128 rows down a column)
// in double (VecMath.h): one float accumulator over 30M values of about
// 100 came out 1.1 % low (oneDNN's jit, innermost) or stalled at 2^31 (the
// loop, middle).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Primitive.h"
#include "VecMath.h"

#include <algorithm>
#include <limits>

using namespace txrt;

namespace {

constexpr int kMaxRank = 6;

dnnl::algorithm reductionAlgorithm(int32_t op) {
  switch (op) {
  case TXRT_REDUCE_SUM:
    return dnnl::algorithm::reduction_sum;
  case TXRT_REDUCE_MEAN:
    return dnnl::algorithm::reduction_mean;
  case TXRT_REDUCE_MAX:
    return dnnl::algorithm::reduction_max;
  case TXRT_REDUCE_MIN:
    return dnnl::algorithm::reduction_min;
  default:
    throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                "unknown reduction " + std::to_string(op));
  }
}

/// Runs of equal kind: merged[i] = product of a run, reduced[i] its kind.
struct MergedDims {
  Dims extent;
  std::vector<bool> reduced;
};

MergedDims mergeDims(const Dims &x, const Dims &y) {
  MergedDims merged;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 1)
      continue; // size-1 dims are neither kept nor reduced
    bool reduced = y[i] == 1;
    if (!merged.reduced.empty() && merged.reduced.back() == reduced)
      merged.extent.back() *= x[i];
    else {
      merged.extent.push_back(x[i]);
      merged.reduced.push_back(reduced);
    }
  }
  return merged;
}

/// y[o, i] = reduce_r x[o, r, i], parallel over (o, chunks of i).
template <int32_t Op>
void reduceMiddle(Context &ctx, const float *x, int64_t outer, int64_t mid,
                  int64_t inner, float *y) {
  constexpr int64_t kChunk = 256;
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  float init = Op == TXRT_REDUCE_MAX   ? -std::numeric_limits<float>::infinity()
               : Op == TXRT_REDUCE_MIN ? std::numeric_limits<float>::infinity()
                                       : 0.0f;
#pragma omp parallel for collapse(2) num_threads(ctx.numThreads())
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      int64_t begin = chunk * kChunk;
      int64_t width = std::min(kChunk, inner - begin);
      alignas(64) float acc[kChunk];
      alignas(64) double total[kChunk];
      for (int64_t j = 0; j < width; ++j)
        total[j] = 0.0;
      // Sums: kSumRows rows at a time in float (one running sum per
      // column: 8192 rows of 0.1 drifted by 6.5e-5), the blocks in double.
      const int64_t block =
          Op == TXRT_REDUCE_MAX || Op == TXRT_REDUCE_MIN ? mid : kSumRows;
      for (int64_t r0 = 0; r0 < mid; r0 += block) {
        for (int64_t j = 0; j < width; ++j)
          acc[j] = init;
        const int64_t r1 = std::min(mid, r0 + block);
        for (int64_t r = r0; r < r1; ++r) {
          const float *row = x + (o * mid + r) * inner + begin;
#pragma omp simd
          for (int64_t j = 0; j < width; ++j) {
            if (Op == TXRT_REDUCE_MAX)
              acc[j] = row[j] > acc[j] ? row[j] : acc[j];
            else if (Op == TXRT_REDUCE_MIN)
              acc[j] = row[j] < acc[j] ? row[j] : acc[j];
            else
              acc[j] += row[j];
          }
        }
        if (Op == TXRT_REDUCE_SUM || Op == TXRT_REDUCE_MEAN)
          for (int64_t j = 0; j < width; ++j)
            total[j] += double(acc[j]);
      }
      if (Op == TXRT_REDUCE_MAX || Op == TXRT_REDUCE_MIN) {
        for (int64_t j = 0; j < width; ++j)
          y[o * inner + begin + j] = acc[j];
      } else if (mid <= kSumRows) { // one block: as before, in float
        float scale = Op == TXRT_REDUCE_MEAN ? 1.0f / float(mid) : 1.0f;
        for (int64_t j = 0; j < width; ++j)
          y[o * inner + begin + j] = acc[j] * scale;
      } else {
        double scale = Op == TXRT_REDUCE_MEAN ? 1.0 / double(mid) : 1.0;
        for (int64_t j = 0; j < width; ++j)
          y[o * inner + begin + j] = float(total[j] * scale);
      }
    }
  }
}

/// y[o] = sum (or mean) of x[o, 0..n), in blocks (blockedSum).
void sumInner(Context &ctx, bool mean, const float *x, int64_t outer, int64_t n,
              float *y) {
#pragma omp parallel for num_threads(ctx.numThreads()) if (outer * n > 32768)
  for (int64_t o = 0; o < outer; ++o) {
    const float *row = x + o * n;
    double sum = blockedArraySum(row, n);
    y[o] = float(mean ? sum / double(n) : sum);
  }
}

void runReduceMiddle(Context &ctx, int32_t op, const float *x, int64_t outer,
                     int64_t mid, int64_t inner, float *y) {
  switch (op) {
  case TXRT_REDUCE_SUM:
    return reduceMiddle<TXRT_REDUCE_SUM>(ctx, x, outer, mid, inner, y);
  case TXRT_REDUCE_MEAN:
    return reduceMiddle<TXRT_REDUCE_MEAN>(ctx, x, outer, mid, inner, y);
  case TXRT_REDUCE_MAX:
    return reduceMiddle<TXRT_REDUCE_MAX>(ctx, x, outer, mid, inner, y);
  default:
    return reduceMiddle<TXRT_REDUCE_MIN>(ctx, x, outer, mid, inner, y);
  }
}

} // namespace

extern "C" {

txrt_status txrt_reduce(txrt_context *ctx, int64_t site, int32_t op,
                        int32_t rank, const int64_t *x_dims, const float *x,
                        const int64_t *y_dims, float *y) {
  return runKernel(
      ctx, site, "txrt_reduce",
      [&] {
        int shown = rank >= 1 && rank <= kMaxRank ? rank : 0;
        return shapes("op", op, "x", dimsString(x_dims, shown), "y",
                      dimsString(y_dims, shown));
      },
      [&](Context &c) {
        dnnl::algorithm algorithm = reductionAlgorithm(op);
        require(rank >= 1 && rank <= kMaxRank, "rank must be 1..6");
        require(x_dims && y_dims, "x_dims and y_dims must not be NULL");
        Dims xDims(x_dims, x_dims + rank), yDims(y_dims, y_dims + rank);
        int64_t xCount = 1, yCount = 1;
        for (int i = 0; i < rank; ++i) {
          require(xDims[i] >= 0, "dims must be non-negative");
          require(yDims[i] == xDims[i] || yDims[i] == 1,
                  "y dimension " + std::to_string(i) + " must be x's or 1");
          xCount *= xDims[i];
          yCount *= yDims[i];
        }
        if (yCount == 0)
          return;
        require(y != nullptr, "y is NULL");
        if (xCount == 0) { // reducing an empty dimension: the identity
          float identity =
              op == TXRT_REDUCE_MAX    ? -std::numeric_limits<float>::infinity()
              : op == TXRT_REDUCE_MIN  ? std::numeric_limits<float>::infinity()
              : op == TXRT_REDUCE_MEAN ? std::numeric_limits<float>::quiet_NaN()
                                       : 0.0f;
          std::fill(y, y + yCount, identity);
          return;
        }
        require(x != nullptr, "x is NULL");
        MergedDims merged = mergeDims(xDims, yDims);
        size_t runs = merged.extent.size();
        if (runs == 0 || (runs == 1 && !merged.reduced[0])) {
          std::copy(x, x + xCount, y); // nothing reduced
          return;
        }
        bool innermostReduced = merged.reduced.back();
        int reducedRuns = 0;
        for (bool r : merged.reduced)
          reducedRuns += r;
        if (reducedRuns == 1 && innermostReduced &&
            (op == TXRT_REDUCE_SUM || op == TXRT_REDUCE_MEAN))
          return sumInner(c, op == TXRT_REDUCE_MEAN, x,
                          runs == 2 ? merged.extent[0] : 1,
                          merged.extent.back(), y);
        if (reducedRuns == 1 && !innermostReduced) {
          int64_t outer = runs == 3 ? merged.extent[0] : 1;
          int64_t mid = merged.extent[runs - 2];
          int64_t inner = merged.extent[runs - 1];
          return runReduceMiddle(c, op, x, outer, mid, inner, y);
        }
        CacheKey key(site, int32_t(Kernel::Reduce));
        key << int64_t(op) << int64_t(rank);
        for (int i = 0; i < rank; ++i)
          key << xDims[i] << yDims[i];
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          dnnl::reduction::desc desc(algorithm, denseDesc(xDims),
                                     denseDesc(yDims), 0.0f, 0.0f);
          dnnl::reduction::primitive_desc pd(desc, userScratchpadAttr(),
                                             c.engine());
          return Primitive(c, pd, {DNNL_ARG_SRC, DNNL_ARG_DST});
        });
        primitive.execute(c, {x, y});
      });
}

txrt_status txrt_argmax(txrt_context *ctx, int64_t site, int64_t rows,
                        int64_t cols, const float *x, int32_t *out) {
  return runKernel(
      ctx, site, "txrt_argmax", [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0)
          return;
        require(cols > 0, "cols must be positive");
        require(x && out, "x and out must not be NULL");
#pragma omp parallel for num_threads(c.numThreads()) if (rows * cols > 65536)
        for (int64_t i = 0; i < rows; ++i) {
          const float *row = x + i * cols;
          int64_t best = 0;
          float bestValue = row[0];
          for (int64_t j = 1; j < cols; ++j)
            if (row[j] > bestValue) {
              bestValue = row[j];
              best = j;
            }
          out[i] = int32_t(best);
        }
      });
}

} // extern "C"
