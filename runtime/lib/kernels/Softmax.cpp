//===- Softmax.cpp - softmax (oneDNN) and log-softmax, fwd and bwd --------===//
//
// Softmax: oneDNN softmax_v2 (softmax_accurate) over the last dimension of
// [rows, cols]; the backward reads the forward's output.
//
// Log-softmax: our own rows, as PyTorch computes them, y = (x - max) -
// log(sum(exp(x - max))) with expApprox and std::log. oneDNN's softmax_log
// (its polynomial log) was biased by about +1.4e-6: log-probabilities above
// 0 ([100, 0, 0, 0] gave +1.43e-6 for the first), a row of one class
// +1.43e-6 instead of 0, and that row's gradient noise instead of 0, which
// Adam turned into full-size steps. The backward, dx = dy - exp(y) *
// sum(dy), is ours too, so exp(0) is exactly 1 there.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Primitive.h"
#include "VecMath.h"

#include <algorithm>
#include <limits>
#include <vector>

using namespace txrt;

namespace {

dnnl::softmax_v2_forward::primitive_desc
softmaxForwardDesc(Context &ctx, int64_t rows, int64_t cols,
                   const dnnl::primitive_attr &attr) {
  memory::desc data = denseDesc({rows, cols});
  dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_training,
                                      dnnl::algorithm::softmax_accurate, data,
                                      data, 1);
  return {desc, attr, ctx.engine()};
}

/// One row of log-softmax; y may be x. A NaN or +inf anywhere makes the
/// row NaN, as in PyTorch (the sum of exponentials is NaN).
void logSoftmaxRow(const float *x, float *y, int64_t cols) {
  const float m = rowMax(x, cols);
  const bool nan = anyNanOrPosInf(x, cols);
  // Blocks of floats, their sums in double: a vocabulary of 50k drifted
  // by 7e-6 (43x PyTorch's error) with one float accumulator per lane.
  const double sum = blockedSum(cols, [&](int64_t begin, int64_t count) {
    float part = 0.0f;
#pragma omp simd reduction(+ : part)
    for (int64_t j = begin; j < begin + count; ++j)
      part += expApprox(x[j] - m);
    return part;
  });
  // An all -inf row: -inf - -inf is NaN, PyTorch's answer too.
  const float logSum = nan || m == kNegInf
                           ? std::numeric_limits<float>::quiet_NaN()
                           : float(std::log(sum));
#pragma omp simd
  for (int64_t j = 0; j < cols; ++j)
    y[j] = (x[j] - m) - logSum;
}

/// One row of log-softmax's backward; dx may be dy.
void logSoftmaxBackwardRow(const float *y, const float *dy, float *dx,
                           int64_t cols) {
  const float sum = float(blockedArraySum(dy, cols));
#pragma omp simd
  for (int64_t j = 0; j < cols; ++j)
    dx[j] = dy[j] - expApprox(y[j]) * sum;
}

} // namespace

extern "C" {

txrt_status txrt_softmax_fwd(txrt_context *ctx, int64_t site, int64_t rows,
                             int64_t cols, const float *x, float *y,
                             int32_t log_softmax) {
  return runKernel(
      ctx, site, "txrt_softmax_fwd",
      [&] {
        return shapes("rows", rows, "cols", cols, "log_softmax", log_softmax);
      },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(x && y, "x and y must not be NULL");
        if (log_softmax) {
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
          for (int64_t r = 0; r < rows; ++r)
            logSoftmaxRow(x + r * cols, y + r * cols, cols);
          return;
        }
        CacheKey key(site, int32_t(Kernel::SoftmaxFwd));
        key << rows << cols;
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          return Primitive(
              c, softmaxForwardDesc(c, rows, cols, userScratchpadAttr()),
              {DNNL_ARG_SRC, DNNL_ARG_DST});
        });
        // A row with a NaN or +inf is NaN everywhere in PyTorch; oneDNN's
        // max skips a NaN and gave [0, 0, nan, 0, 0]. Found before the
        // primitive runs (y may be x), set after it.
        std::vector<uint8_t> nanRow(size_t(rows), 0);
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
        for (int64_t r = 0; r < rows; ++r)
          nanRow[size_t(r)] = anyNanOrPosInf(x + r * cols, cols);
        const bool anyNan =
            std::find(nanRow.begin(), nanRow.end(), 1) != nanRow.end();
        primitive.execute(c, {x, y});
        if (anyNan)
          for (int64_t r = 0; r < rows; ++r)
            if (nanRow[size_t(r)])
              std::fill(y + r * cols, y + (r + 1) * cols,
                        std::numeric_limits<float>::quiet_NaN());
      });
}

txrt_status txrt_softmax_bwd(txrt_context *ctx, int64_t site, int64_t rows,
                             int64_t cols, const float *y, const float *dy,
                             float *dx, int32_t log_softmax) {
  return runKernel(
      ctx, site, "txrt_softmax_bwd",
      [&] {
        return shapes("rows", rows, "cols", cols, "log_softmax", log_softmax);
      },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(y && dy && dx, "y, dy and dx must not be NULL");
        if (log_softmax) {
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
          for (int64_t r = 0; r < rows; ++r)
            logSoftmaxBackwardRow(y + r * cols, dy + r * cols, dx + r * cols,
                                  cols);
          return;
        }
        CacheKey key(site, int32_t(Kernel::SoftmaxBwd));
        key << rows << cols;
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          auto hint = softmaxForwardDesc(c, rows, cols, dnnl::primitive_attr());
          memory::desc data = denseDesc({rows, cols});
          dnnl::softmax_v2_backward::desc desc(
              dnnl::algorithm::softmax_accurate, data, data, data, 1);
          dnnl::softmax_v2_backward::primitive_desc pd(
              desc, userScratchpadAttr(), c.engine(), hint);
          return Primitive(
              c, pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
        });
        primitive.execute(c, {y, dy, dx});
      });
}

} // extern "C"
