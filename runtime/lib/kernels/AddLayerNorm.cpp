//===- AddLayerNorm.cpp - fused residual add + layer norm, fwd and bwd ----===//
//
// One pass over memory per direction. Forward, per row: s = x + r into the
// output row (and out_sum), mean and biased variance from the row while it
// is in L1, then y = (s - mean) * rstd * gamma + beta in place (beta may be
// NULL: no shift), and, for --precision=bf16, y rounded to bf16 into a
// second output from the same row in L1 (txrt_add_layer_norm_fwd_bf16).
// Backward, per row: the statistics (the forward's, or recomputed from s by the
// forward's own arithmetic when the compiled code saved none: the same bits),
// xhat and dy*gamma, their means, then ds; dgamma / dbeta accumulate in
// per-thread partial rows (float for 128 rows at a time, then double:
// ColumnSums, VecMath.h) that are summed at the end (no atomics, and the
// result does not depend on the schedule beyond the thread count).
//
//===----------------------------------------------------------------------===//
#include "Bf16Round.h"
#include "Kernel.h"
#include "LayerNormBackward.h"
#include "Simd.h"
#include "VecMath.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

using namespace txrt;

namespace {

struct MeanVar {
  float mean, var;
};

/// sum(s) of a block, with two vector accumulators.
float blockSum(int64_t cols, const float *s) {
  int64_t j = 0;
  float total = 0.0f;
#if TXRT_HAS_SIMD
  constexpr int64_t L = Simd::kLanes;
  Simd::Vec acc0 = Simd::zero(), acc1 = Simd::zero();
  for (; j + 2 * L <= cols; j += 2 * L) {
    acc0 = Simd::add(acc0, Simd::load(s + j));
    acc1 = Simd::add(acc1, Simd::load(s + j + L));
  }
  total = Simd::sum(Simd::add(acc0, acc1));
#endif
  for (; j < cols; ++j)
    total += s[j];
  return total;
}

/// sum((s - mean)^2) of a block, likewise.
float blockSquares(int64_t cols, const float *s, float mean) {
  int64_t j = 0;
  float squares = 0.0f;
#if TXRT_HAS_SIMD
  constexpr int64_t L = Simd::kLanes;
  const Simd::Vec m = Simd::broadcast(mean);
  Simd::Vec sq0 = Simd::zero(), sq1 = Simd::zero();
  for (; j + 2 * L <= cols; j += 2 * L) {
    const Simd::Vec d0 = Simd::sub(Simd::load(s + j), m);
    const Simd::Vec d1 = Simd::sub(Simd::load(s + j + L), m);
    sq0 = Simd::fmadd(d0, d0, sq0);
    sq1 = Simd::fmadd(d1, d1, sq1);
  }
  squares = Simd::sum(Simd::add(sq0, sq1));
#endif
  for (; j < cols; ++j) {
    const float d = s[j] - mean;
    squares += d * d;
  }
  return squares;
}

/// The mean and biased variance of a row s of `cols` values, as the
/// forward computes them: the sum (blockedSum: float vector lanes within a
/// block, the blocks in double; a row of one block is summed as before),
/// mean = sum * invCols, then the squares about the mean likewise. The
/// backward, when the compiled code saved no statistics, recomputes them
/// with this same function from the same s, so they are the forward's bit
/// for bit (and it normalises exactly what the forward normalised).
MeanVar rowStats(int64_t cols, const float *s, float invCols) {
  const float total = float(blockedSum(
      cols, [&](int64_t begin, int64_t n) { return blockSum(n, s + begin); }));
  const float mean = total * invCols;
  const float squares = float(blockedSum(cols, [&](int64_t begin, int64_t n) {
    return blockSquares(n, s + begin, mean);
  }));
  return {mean, squares * invCols};
}

/// s[j] = x[j] + r[j] into `s` (and `copy`, when not NULL).
void addRow(int64_t cols, const float *x, const float *r, float *s,
            float *copy) {
  if (copy) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      copy[j] = s[j] = x[j] + r[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      s[j] = x[j] + r[j];
  }
}

/// One row of the forward: y = s = x + r (and sumOut = s), the mean and
/// biased variance of s (rowStats), then y = (s - mean) * rstd * gamma +
/// beta in place; returns {mean, var}. The row is read from memory once;
/// the later passes read it back from L1. yBf16 (or NULL) receives y
/// rounded to bf16.
MeanVar addNormRow(int64_t cols, const float *x, const float *r,
                   const float *gamma, const float *beta, float eps,
                   float invCols, float *y, float *sumOut, txrt_bf16 *yBf16) {
  addRow(cols, x, r, y, sumOut);
  const MeanVar stats = rowStats(cols, y, invCols);
  const float mean = stats.mean;
  const float rstd = 1.0f / std::sqrt(stats.var + eps);
  if (beta) {
#pragma omp simd
    for (int64_t k = 0; k < cols; ++k)
      y[k] = (y[k] - mean) * rstd * gamma[k] + beta[k];
  } else {
#pragma omp simd
    for (int64_t k = 0; k < cols; ++k)
      y[k] = (y[k] - mean) * rstd * gamma[k];
  }
  if (yBf16)
    roundRowToBf16(cols, y, yBf16);
  return stats;
}

void addLayerNormForward(Context &ctx, int64_t rows, int64_t cols,
                         const float *x, const float *r, const float *gamma,
                         const float *beta, float eps, float *y, float *sumOut,
                         float *meanOut, float *varOut, txrt_bf16 *yBf16) {
  const float invCols = 1.0f / float(cols);
#pragma omp parallel for num_threads(ctx.numThreads()) schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const MeanVar stats =
        addNormRow(cols, x + i * cols, r + i * cols, gamma, beta, eps, invCols,
                   y + i * cols, sumOut ? sumOut + i * cols : nullptr,
                   yBf16 ? yBf16 + i * cols : nullptr);
    if (meanOut) {
      meanOut[i] = stats.mean;
      varOut[i] = stats.var;
    }
  }
}

/// sumG = sum(dy * gamma), sumGX = sum(dy * gamma * xhat) over a block,
/// with two vector accumulators each (one would chain every add on the
/// last).
void blockGradientSums(int64_t cols, const float *dy, const float *gamma,
                       const float *xhat, float &sumG, float &sumGX) {
  int64_t j = 0;
#if TXRT_HAS_SIMD
  constexpr int64_t L = Simd::kLanes;
  Simd::Vec g0 = Simd::zero(), g1 = Simd::zero();
  Simd::Vec gx0 = Simd::zero(), gx1 = Simd::zero();
  for (; j + 2 * L <= cols; j += 2 * L) {
    const Simd::Vec a = Simd::mul(Simd::load(dy + j), Simd::load(gamma + j));
    const Simd::Vec b =
        Simd::mul(Simd::load(dy + j + L), Simd::load(gamma + j + L));
    g0 = Simd::add(g0, a);
    g1 = Simd::add(g1, b);
    gx0 = Simd::fmadd(a, Simd::load(xhat + j), gx0);
    gx1 = Simd::fmadd(b, Simd::load(xhat + j + L), gx1);
  }
  sumG = Simd::sum(Simd::add(g0, g1));
  sumGX = Simd::sum(Simd::add(gx0, gx1));
#endif
  for (; j < cols; ++j) {
    const float g = dy[j] * gamma[j];
    sumG += g;
    sumGX += g * xhat[j];
  }
}

/// The same over a row: blocks of kSumBlock in float, added in double (a
/// row of one block is summed as blockGradientSums sums it).
void gradientSums(int64_t cols, const float *dy, const float *gamma,
                  const float *xhat, float &sumG, float &sumGX) {
  if (cols <= kSumBlock) {
    blockGradientSums(cols, dy, gamma, xhat, sumG, sumGX);
    return;
  }
  double g = 0.0, gx = 0.0;
  for (int64_t begin = 0; begin < cols; begin += kSumBlock) {
    float partG = 0.0f, partGX = 0.0f;
    blockGradientSums(std::min(kSumBlock, cols - begin), dy + begin,
                      gamma + begin, xhat + begin, partG, partGX);
    g += double(partG);
    gx += double(partGX);
  }
  sumG = float(g);
  sumGX = float(gx);
}

/// Both forward entry points: checks the arguments, then the shared
/// forward; the bf16 one (`bf16`: `y_bf16` required) also writes the
/// rounded copy.
txrt_status addLayerNormForwardEntry(const char *name, bool bf16,
                                     txrt_context *ctx, int64_t site,
                                     int64_t rows, int64_t cols, const float *x,
                                     const float *r, const float *gamma,
                                     const float *beta, float eps, float *y,
                                     float *out_sum, float *mean, float *var,
                                     txrt_bf16 *y_bf16) {
  return runKernel(
      ctx, site, name, [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(x && r && gamma && y, "x, r, gamma and y must not be NULL");
        require(!bf16 || y_bf16, "y_bf16 must not be NULL");
        require((mean == nullptr) == (var == nullptr),
                "mean and var must both be given (training) or both be NULL");
        addLayerNormForward(c, rows, cols, x, r, gamma, beta, eps, y, out_sum,
                            mean, var, y_bf16);
      });
}

} // namespace

void txrt::addLayerNormBackward(Context &ctx, int64_t rows, int64_t cols,
                                const float *x, const float *r,
                                const float *sum, const float *gamma,
                                const float *mean, const float *var, float eps,
                                const float *dy, const float *dsum, float *dx,
                                float *dgamma, float *dbeta, bool accumulateDx,
                                bool accumulateParams) {
  const int threads = ctx.numThreads();
  const bool params = dgamma || dbeta;
  const float invCols = 1.0f / float(cols);
  // Per thread: dgamma's and dbeta's double rows, then an xhat row and
  // their float rows (ColumnSums). Allocated here: nothing inside the
  // parallel region may throw.
  for (int t = 0; t < threads; ++t)
    ctx.threadWorkspace(t).as<double>(4 * cols);
  int team = 1;
#pragma omp parallel num_threads(threads)
  {
    int thread = omp_get_thread_num();
#pragma omp single nowait
    team = omp_get_num_threads();
    double *work = ctx.threadWorkspace(thread).as<double>(4 * cols);
    float *xhat = reinterpret_cast<float *>(work + 2 * cols);
    ColumnSums gammaSums(work, xhat + cols, cols);
    ColumnSums betaSums(work + cols, xhat + 2 * cols, cols);
    float *partialGamma = gammaSums.part();
    float *partialBeta = betaSums.part();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const float *dyRow = dy + i * cols;
      // s = x + r (or the sum the forward kept), in xhat's row when the
      // statistics are recomputed from it.
      const float *sRow = sum ? sum + i * cols : xhat;
      if (!sum)
        addRow(cols, x + i * cols, r + i * cols, xhat, nullptr);
      const MeanVar stats =
          mean ? MeanVar{mean[i], var[i]} : rowStats(cols, sRow, invCols);
      const float m = stats.mean;
      const float rstd = 1.0f / std::sqrt(stats.var + eps);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j)
        xhat[j] = (sRow[j] - m) * rstd;
      float sumG = 0.0f, sumGX = 0.0f;
      gradientSums(cols, dyRow, gamma, xhat, sumG, sumGX);
      if (params) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) {
          partialGamma[j] += dyRow[j] * xhat[j];
          partialBeta[j] += dyRow[j];
        }
        gammaSums.rowAdded();
        betaSums.rowAdded();
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
    gammaSums.flush();
    betaSums.flush();
  }
  if (!params)
    return;
  for (int64_t j = 0; j < cols; ++j) {
    double g = 0.0, b = 0.0;
    for (int t = 0; t < team; ++t) {
      const double *work = ctx.threadWorkspace(t).as<double>(4 * cols);
      g += work[j];
      b += work[cols + j];
    }
    if (dgamma)
      dgamma[j] = accumulateParams ? float(double(dgamma[j]) + g) : float(g);
    if (dbeta)
      dbeta[j] = accumulateParams ? float(double(dbeta[j]) + b) : float(b);
  }
}

extern "C" {

txrt_status txrt_add_layer_norm_fwd(txrt_context *ctx, int64_t site,
                                    int64_t rows, int64_t cols, const float *x,
                                    const float *r, const float *gamma,
                                    const float *beta, float eps, float *y,
                                    float *out_sum, float *mean, float *var) {
  return addLayerNormForwardEntry("txrt_add_layer_norm_fwd", false, ctx, site,
                                  rows, cols, x, r, gamma, beta, eps, y, out_sum,
                                  mean, var, nullptr);
}

txrt_status txrt_add_layer_norm_fwd_bf16(
    txrt_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *gamma, const float *beta,
    float eps, float *y, float *out_sum, float *mean, float *var,
    txrt_bf16 *y_bf16) {
  return addLayerNormForwardEntry("txrt_add_layer_norm_fwd_bf16", true, ctx,
                                  site, rows, cols, x, r, gamma, beta, eps, y,
                                  out_sum, mean, var, y_bf16);
}

txrt_status txrt_add_layer_norm_bwd(
    txrt_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *sum, const float *gamma,
    const float *mean, const float *var, float eps, const float *dy,
    const float *dsum, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params) {
  return runKernel(
      ctx, site, "txrt_add_layer_norm_bwd",
      [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (cols == 0)
          return;
        if (rows == 0)
          return layerNormBackwardOverNoRows(cols, dgamma, dbeta,
                                             accumulate_params != 0);
        require(sum || (x && r), "either sum or both x and r are needed");
        require(gamma && dy && dx, "gamma, dy and dx must not be NULL");
        require((mean == nullptr) == (var == nullptr),
                "mean and var must both be given or both be NULL");
        // Without mean and var the backward recomputes the forward's
        // statistics row by row (rowStats: the same values).
        addLayerNormBackward(c, rows, cols, x, r, sum, gamma, mean, var, eps,
                             dy, dsum, dx, dgamma, dbeta, accumulate_dx != 0,
                             accumulate_params != 0);
      });
}

} // extern "C"
