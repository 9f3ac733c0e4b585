//===- AddLayerNorm.cpp - fused residual add + layer norm, fwd and bwd ----===//
//
// One pass over memory per direction. Forward, per row: s = x + r into the
// output row (and out_sum), mean and biased variance from the row while it
// is in L1, then y = (s - mean) * rstd * gamma + beta in place. Backward, per
// row: xhat and dy*gamma, their means, then ds; dgamma / dbeta accumulate in
// per-thread partial rows that are summed at the end (no atomics, and the
// result does not depend on the schedule beyond the thread count).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "RowStats.h"

#include <omp.h>

#include <cmath>

using namespace txrt;

namespace {

void addLayerNormForward(Context &ctx, int64_t rows, int64_t cols,
                         const float *x, const float *r, const float *gamma,
                         const float *beta, float eps, float *y, float *sumOut,
                         float *meanOut, float *varOut) {
  const float invCols = 1.0f / float(cols);
#pragma omp parallel for num_threads(ctx.numThreads()) schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *xRow = x + i * cols;
    const float *rRow = r + i * cols;
    float *yRow = y + i * cols;
    float total = 0.0f;
#pragma omp simd reduction(+ : total)
    for (int64_t j = 0; j < cols; ++j) {
      float s = xRow[j] + rRow[j];
      yRow[j] = s;
      total += s;
    }
    if (sumOut) {
      float *sRow = sumOut + i * cols;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j)
        sRow[j] = yRow[j];
    }
    float mean = total * invCols;
    float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < cols; ++j) {
      float d = yRow[j] - mean;
      squares += d * d;
    }
    float var = squares * invCols;
    float rstd = 1.0f / std::sqrt(var + eps);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      yRow[j] = (yRow[j] - mean) * rstd * gamma[j] + beta[j];
    if (meanOut) {
      meanOut[i] = mean;
      varOut[i] = var;
    }
  }
}

void addLayerNormBackward(Context &ctx, int64_t rows, int64_t cols,
                          const float *x, const float *r, const float *sum,
                          const float *gamma, const float *mean,
                          const float *var, float eps, const float *dy,
                          const float *dsum, float *dx, float *dgamma,
                          float *dbeta, bool accumulateDx,
                          bool accumulateParams) {
  const int threads = ctx.numThreads();
  const bool params = dgamma || dbeta;
  const float invCols = 1.0f / float(cols);
  // Per thread: an xhat row, then partial dgamma and dbeta rows. Allocated
  // here: nothing inside the parallel region may throw.
  for (int t = 0; t < threads; ++t)
    ctx.threadWorkspace(t).as<float>(3 * cols);
  int team = 1;
#pragma omp parallel num_threads(threads)
  {
    int thread = omp_get_thread_num();
#pragma omp single nowait
    team = omp_get_num_threads();
    float *work = ctx.threadWorkspace(thread).as<float>(3 * cols);
    float *xhat = work;
    float *partialGamma = work + cols;
    float *partialBeta = work + 2 * cols;
    for (int64_t j = 0; j < 2 * cols; ++j)
      partialGamma[j] = 0.0f;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const float *dyRow = dy + i * cols;
      float m = mean[i];
      float rstd = 1.0f / std::sqrt(var[i] + eps);
      if (sum) {
        const float *sRow = sum + i * cols;
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j)
          xhat[j] = (sRow[j] - m) * rstd;
      } else {
        const float *xRow = x + i * cols;
        const float *rRow = r + i * cols;
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j)
          xhat[j] = (xRow[j] + rRow[j] - m) * rstd;
      }
      float sumG = 0.0f, sumGX = 0.0f;
#pragma omp simd reduction(+ : sumG, sumGX)
      for (int64_t j = 0; j < cols; ++j) {
        float g = dyRow[j] * gamma[j];
        sumG += g;
        sumGX += g * xhat[j];
      }
      if (params) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) {
          partialGamma[j] += dyRow[j] * xhat[j];
          partialBeta[j] += dyRow[j];
        }
      }
      float a = sumG * invCols, b = sumGX * invCols;
      float *dxRow = dx + i * cols;
      const float *dsRow = dsum ? dsum + i * cols : nullptr;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        float ds = rstd * (dyRow[j] * gamma[j] - a - xhat[j] * b);
        if (dsRow)
          ds += dsRow[j];
        dxRow[j] = accumulateDx ? dxRow[j] + ds : ds;
      }
    }
  }
  if (!params)
    return;
  for (int64_t j = 0; j < cols; ++j) {
    float g = 0.0f, b = 0.0f;
    for (int t = 0; t < team; ++t) {
      const float *work = ctx.threadWorkspace(t).as<float>(3 * cols);
      g += work[cols + j];
      b += work[2 * cols + j];
    }
    if (dgamma)
      dgamma[j] = accumulateParams ? dgamma[j] + g : g;
    if (dbeta)
      dbeta[j] = accumulateParams ? dbeta[j] + b : b;
  }
}

} // namespace

extern "C" {

txrt_status txrt_add_layer_norm_fwd(txrt_context *ctx, int64_t /*site*/,
                                    int64_t rows, int64_t cols, const float *x,
                                    const float *r, const float *gamma,
                                    const float *beta, float eps, float *y,
                                    float *out_sum, float *mean, float *var) {
  return runKernel(
      ctx, "txrt_add_layer_norm_fwd",
      [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(x && r && gamma && beta && y,
                "x, r, gamma, beta and y must not be NULL");
        require((mean == nullptr) == (var == nullptr),
                "mean and var must both be given (training) or both be NULL");
        addLayerNormForward(c, rows, cols, x, r, gamma, beta, eps, y, out_sum,
                            mean, var);
      });
}

txrt_status txrt_add_layer_norm_bwd(
    txrt_context *ctx, int64_t /*site*/, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *sum, const float *gamma,
    const float *mean, const float *var, float eps, const float *dy,
    const float *dsum, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params) {
  return runKernel(
      ctx, "txrt_add_layer_norm_bwd",
      [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(sum || (x && r), "either sum or both x and r are needed");
        require(gamma && dy && dx, "gamma, dy and dx must not be NULL");
        require((mean == nullptr) == (var == nullptr),
                "mean and var must both be given or both be NULL");
        if (!mean) { // recompute the forward's statistics
          float *stats = c.statsWork.as<float>(2 * rows);
          if (sum)
            rowMeanVar(c, rows, cols, sum, nullptr, stats, stats + rows);
          else
            rowMeanVar(c, rows, cols, x, r, stats, stats + rows);
          mean = stats;
          var = stats + rows;
        }
        addLayerNormBackward(c, rows, cols, x, r, sum, gamma, mean, var, eps,
                             dy, dsum, dx, dgamma, dbeta, accumulate_dx != 0,
                             accumulate_params != 0);
      });
}

} // extern "C"
