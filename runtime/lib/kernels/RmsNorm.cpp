//===- RmsNorm.cpp - RMS norm and residual add + RMS norm, fwd and bwd ----===//
//
// y = s / sqrt(mean(s^2) + eps) * gamma over each row, with s = x (plain) or
// s = x + r (fused residual add, s also written to out_sum). One pass over
// memory per direction: forward, per row, the sum of squares of s (x + r
// stored once, into out_sum or else y), then y = s * rstd * gamma with s
// read back from L1. Backward, per row:
// rstd from s, xhat = s * rstd, g = dy * gamma, c = mean(g * xhat), then
// ds = rstd * (g - xhat * c) (+ dsum); dgamma accumulates dy * xhat in
// per-thread partial rows, float for 128 rows at a time and then double
// (ColumnSums, VecMath.h), summed at the end (no atomics). Row sums use two
// vector accumulators (Simd.h: AVX-512, AVX2 or portable loops). For
// --precision=bf16 the forward also rounds each y row to bf16 into a second
// output while the row is in L1 (txrt_rms_norm_fwd_bf16).
//
//===----------------------------------------------------------------------===//
#include "Bf16Round.h"
#include "Kernel.h"
#include "Simd.h"
#include "VecMath.h"

#include <omp.h>

#include <cmath>

using namespace txrt;

namespace {

/// s = x + r into `out`; returns sum(s^2) (one block of blockedSum).
float addBlockSquares(int64_t cols, const float *x, const float *r,
                      float *out) {
  int64_t j = 0;
  float squares = 0.0f;
#if TXRT_HAS_SIMD
  constexpr int64_t L = Simd::kLanes;
  Simd::Vec acc0 = Simd::zero(), acc1 = Simd::zero();
  for (; j + 2 * L <= cols; j += 2 * L) {
    const Simd::Vec s0 = Simd::add(Simd::load(x + j), Simd::load(r + j));
    const Simd::Vec s1 =
        Simd::add(Simd::load(x + j + L), Simd::load(r + j + L));
    Simd::store(out + j, s0);
    Simd::store(out + j + L, s1);
    acc0 = Simd::fmadd(s0, s0, acc0);
    acc1 = Simd::fmadd(s1, s1, acc1);
  }
  squares = Simd::sum(Simd::add(acc0, acc1));
#endif
  for (; j < cols; ++j) {
    const float s = x[j] + r[j];
    out[j] = s;
    squares += s * s;
  }
  return squares;
}

/// sum(s^2) of a block of s = x (+ r), read only.
float blockSquares(int64_t cols, const float *x, const float *r) {
  int64_t j = 0;
  float squares = 0.0f;
#if TXRT_HAS_SIMD
  constexpr int64_t L = Simd::kLanes;
  Simd::Vec acc0 = Simd::zero(), acc1 = Simd::zero();
  for (; j + 2 * L <= cols; j += 2 * L) {
    Simd::Vec s0 = Simd::load(x + j), s1 = Simd::load(x + j + L);
    if (r) {
      s0 = Simd::add(s0, Simd::load(r + j));
      s1 = Simd::add(s1, Simd::load(r + j + L));
    }
    acc0 = Simd::fmadd(s0, s0, acc0);
    acc1 = Simd::fmadd(s1, s1, acc1);
  }
  squares = Simd::sum(Simd::add(acc0, acc1));
#endif
  for (; j < cols; ++j) {
    const float s = r ? x[j] + r[j] : x[j];
    squares += s * s;
  }
  return squares;
}

/// sum(dy * gamma * xhat) over a block.
float blockGradientDot(int64_t cols, const float *dy, const float *gamma,
                       const float *xhat) {
  int64_t j = 0;
  float total = 0.0f;
#if TXRT_HAS_SIMD
  constexpr int64_t L = Simd::kLanes;
  Simd::Vec acc0 = Simd::zero(), acc1 = Simd::zero();
  for (; j + 2 * L <= cols; j += 2 * L) {
    acc0 = Simd::fmadd(Simd::mul(Simd::load(dy + j), Simd::load(gamma + j)),
                       Simd::load(xhat + j), acc0);
    acc1 = Simd::fmadd(
        Simd::mul(Simd::load(dy + j + L), Simd::load(gamma + j + L)),
        Simd::load(xhat + j + L), acc1);
  }
  total = Simd::sum(Simd::add(acc0, acc1));
#endif
  for (; j < cols; ++j)
    total += dy[j] * gamma[j] * xhat[j];
  return total;
}

// Whole rows: the blocks' sums in double (VecMath.h), so rows wider than
// a block do not drift; narrower ones are one block, summed as before.

float addRowSquares(int64_t cols, const float *x, const float *r, float *out) {
  return float(blockedSum(cols, [&](int64_t begin, int64_t count) {
    return addBlockSquares(count, x + begin, r + begin, out + begin);
  }));
}

float rowSquares(int64_t cols, const float *x, const float *r) {
  return float(blockedSum(cols, [&](int64_t begin, int64_t count) {
    return blockSquares(count, x + begin, r ? r + begin : nullptr);
  }));
}

float gradientDot(int64_t cols, const float *dy, const float *gamma,
                  const float *xhat) {
  return float(blockedSum(cols, [&](int64_t begin, int64_t count) {
    return blockGradientDot(count, dy + begin, gamma + begin, xhat + begin);
  }));
}

void rmsNormForward(Context &ctx, int64_t rows, int64_t cols, const float *x,
                    const float *r, const float *gamma, float eps, float *y,
                    float *sumOut, txrt_bf16 *yBf16) {
  const float invCols = 1.0f / float(cols);
#pragma omp parallel for num_threads(ctx.numThreads()) schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    float *yRow = y + i * cols;
    // s is read back from L1 by the second pass: from x itself, or from
    // where the first pass put x + r (the sum's row, else y's).
    const float *sRow = x + i * cols;
    float squares;
    if (r) {
      float *into = sumOut ? sumOut + i * cols : yRow;
      squares = addRowSquares(cols, x + i * cols, r + i * cols, into);
      sRow = into;
    } else {
      squares = rowSquares(cols, sRow, nullptr);
    }
    const float rstd = 1.0f / std::sqrt(squares * invCols + eps);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      yRow[j] = sRow[j] * rstd * gamma[j];
    if (yBf16)
      roundRowToBf16(cols, yRow, yBf16 + i * cols);
  }
}

void rmsNormBackward(Context &ctx, int64_t rows, int64_t cols, const float *x,
                     const float *r, const float *gamma, float eps,
                     const float *dy, const float *dsum, float *dx,
                     float *dgamma, bool accumulateDx, bool accumulateParams) {
  const int threads = ctx.numThreads();
  const float invCols = 1.0f / float(cols);
  // Per thread: dgamma's double row, then an xhat row and dgamma's float
  // row (ColumnSums). Allocated here: nothing inside the parallel region
  // may throw.
  for (int t = 0; t < threads; ++t)
    ctx.threadWorkspace(t).as<double>(2 * cols);
  int team = 1;
#pragma omp parallel num_threads(threads)
  {
    const int thread = omp_get_thread_num();
#pragma omp single nowait
    team = omp_get_num_threads();
    double *work = ctx.threadWorkspace(thread).as<double>(2 * cols);
    float *xhat = reinterpret_cast<float *>(work + cols);
    ColumnSums gammaSums(work, xhat + cols, cols);
    float *partialGamma = gammaSums.part();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const float *xRow = x + i * cols;
      const float *rRow = r ? r + i * cols : nullptr;
      const float *dyRow = dy + i * cols;
      const float rstd =
          1.0f / std::sqrt(rowSquares(cols, xRow, rRow) * invCols + eps);
      if (rRow) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j)
          xhat[j] = (xRow[j] + rRow[j]) * rstd;
      } else {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j)
          xhat[j] = xRow[j] * rstd;
      }
      const float c = gradientDot(cols, dyRow, gamma, xhat) * invCols;
      if (dgamma) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j)
          partialGamma[j] += dyRow[j] * xhat[j];
        gammaSums.rowAdded();
      }
      float *dxRow = dx + i * cols;
      const float *dsRow = dsum ? dsum + i * cols : nullptr;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        float ds = rstd * (dyRow[j] * gamma[j] - xhat[j] * c);
        if (dsRow)
          ds += dsRow[j];
        dxRow[j] = accumulateDx ? dxRow[j] + ds : ds;
      }
    }
    gammaSums.flush();
  }
  if (!dgamma)
    return;
  for (int64_t j = 0; j < cols; ++j) {
    double g = 0.0;
    for (int t = 0; t < team; ++t)
      g += ctx.threadWorkspace(t).as<double>(2 * cols)[j];
    dgamma[j] = accumulateParams ? float(double(dgamma[j]) + g) : float(g);
  }
}

/// Both forward entry points: checks the arguments, then the shared
/// forward; the bf16 one (`bf16`: `y_bf16` required) also writes the
/// rounded copy.
txrt_status rmsNormForwardEntry(const char *name, bool bf16, txrt_context *ctx,
                                int64_t site, int64_t rows, int64_t cols,
                                const float *x, const float *r,
                                const float *gamma, float eps, float *y,
                                float *out_sum, txrt_bf16 *y_bf16) {
  return runKernel(
      ctx, site, name, [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        require(eps > 0.0f, "eps must be positive");
        if (rows == 0 || cols == 0)
          return;
        require(x && gamma && y, "x, gamma and y must not be NULL");
        require(!bf16 || y_bf16, "y_bf16 must not be NULL");
        require(r || !out_sum, "out_sum needs r (the fused residual add)");
        rmsNormForward(c, rows, cols, x, r, gamma, eps, y, out_sum, y_bf16);
      });
}

} // namespace

extern "C" {

txrt_status txrt_rms_norm_fwd(txrt_context *ctx, int64_t site,
                              int64_t rows, int64_t cols, const float *x,
                              const float *r, const float *gamma, float eps,
                              float *y, float *out_sum) {
  return rmsNormForwardEntry("txrt_rms_norm_fwd", false, ctx, site, rows, cols,
                             x, r, gamma, eps, y, out_sum, nullptr);
}

txrt_status txrt_rms_norm_fwd_bf16(txrt_context *ctx, int64_t site,
                                   int64_t rows, int64_t cols, const float *x,
                                   const float *r, const float *gamma,
                                   float eps, float *y, float *out_sum,
                                   txrt_bf16 *y_bf16) {
  return rmsNormForwardEntry("txrt_rms_norm_fwd_bf16", true, ctx, site, rows,
                             cols, x, r, gamma, eps, y, out_sum, y_bf16);
}

txrt_status txrt_rms_norm_bwd(txrt_context *ctx, int64_t site,
                              int64_t rows, int64_t cols, const float *x,
                              const float *r, const float *gamma, float eps,
                              const float *dy, const float *dsum, float *dx,
                              float *dgamma, int32_t accumulate_dx,
                              int32_t accumulate_params) {
  return runKernel(
      ctx, site, "txrt_rms_norm_bwd",
      [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        require(eps > 0.0f, "eps must be positive");
        if (cols == 0)
          return;
        if (rows == 0) {
          if (dgamma && !accumulate_params)
            for (int64_t j = 0; j < cols; ++j)
              dgamma[j] = 0.0f;
          return;
        }
        require(x && gamma && dy && dx, "x, gamma, dy and dx must not be NULL");
        rmsNormBackward(c, rows, cols, x, r, gamma, eps, dy, dsum, dx, dgamma,
                        accumulate_dx != 0, accumulate_params != 0);
      });
}

} // extern "C"
