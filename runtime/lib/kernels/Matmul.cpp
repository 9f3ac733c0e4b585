//===- Matmul.cpp - txrt_matmul and the linear layer, fwd and bwd ---------===//
//
// All products run on cached oneDNN matmul primitives with concrete shapes;
// transposes are strides, never copies. The backward of a linear layer is two
// transposed products plus a column sum for the bias gradient (oneDNN's
// reduction over rows is a reference implementation, so that sum is ours).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "MatmulPrimitive.h"

#include <algorithm>
#include <cstring>

using namespace txrt;

namespace {

void requireStrides(const int64_t *strides, const char *name) {
  require(strides != nullptr, std::string(name) + " is NULL");
}

/// `count` zero floats (or bf16s) in the context's scratch slot `slot`: the
/// operands of a product over an empty contraction (k = 0). Its output is
/// the epilogue of a zero product (bias, activation, gate, residual, beta),
/// not nothing, so the same primitive runs with k = 1 on zeros; oneDNN's
/// k = 0 wrote nothing, and the output kept whatever the buffer held.
const float *zeroOperand(Context &c, int slot, size_t count) {
  float *zeros = c.temp(slot).as<float>(count);
  std::memset(zeros, 0, count * sizeof(float));
  return zeros;
}

} // namespace

void txrt::linearForward(Context &c, int64_t site, bool bf16, int64_t m,
                         int64_t n, int64_t k, const void *x, const void *w,
                         const float *bias, int32_t activation,
                         const float *gate, const float *residual, float *y) {
  c.noteFlops(2.0 * double(m) * double(n) * double(k));
  require(m >= 0 && n >= 0 && k >= 0, "sizes must be non-negative");
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // y = the epilogue of a zero product (zeroOperand)
    x = zeroOperand(c, 2, size_t(m));
    w = zeroOperand(c, 3, size_t(n));
    k = 1;
  }
  require(x != nullptr, "x is NULL");
  require(w != nullptr, "w is NULL");
  require(y != nullptr, "y is NULL");
  MatmulSpec spec;
  spec.bf16 = bf16;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.aStrides = {0, 0, k, 1};
  spec.bStrides = {0, 0, 1, k}; // w^T: element (p, j) is w[j*k + p]
  spec.cStrides = {0, 0, n, 1};
  spec.hasBias = bias != nullptr;
  spec.activation = activation;
  spec.hasGate = gate != nullptr;
  if (residual == y) {
    spec.beta = 1.0f;
    residual = nullptr;
  }
  spec.hasResidual = residual != nullptr;
  // A weight the host froze is read from a copy packed once (PackedWeights.h).
  spec.packedB =
      c.packedWeights.covers(w, size_t(n) * size_t(k) * (bf16 ? 2 : 4));
  cachedMatmul(c, site, Kernel::Matmul, spec)
      .run(c, x, w, y, bias, residual, gate);
}

void txrt::gatedLinearForward(Context &c, int64_t site, bool bf16, int64_t m,
                              int64_t n, int64_t k, const void *x,
                              const void *w, const float *bias,
                              int32_t activation, const float *gate,
                              const float *residual, float *y) {
  if (m > 0 && n > 0) {
    require(gate != nullptr, "gate is NULL");
    require(gate != y, "gate and y must not be the same buffer");
  }
  linearForward(c, site, bf16, m, n, k, x, w, bias, activation, gate,
                residual, y);
}

void txrt::emptyLinearBackward(Context &c, int64_t m, int64_t n, int64_t k,
                               const float *dy, float *dx, float *dw,
                               float *dbias, bool accumulateDx,
                               bool accumulateParams) {
  // n = 0: dx = dy . w sums over nothing; m = 0: so does dw = dy^T . x.
  if (dx && !accumulateDx && m > 0 && k > 0)
    std::memset(dx, 0, size_t(m) * size_t(k) * sizeof(float));
  if (dw && !accumulateParams && n > 0 && k > 0)
    std::memset(dw, 0, size_t(n) * size_t(k) * sizeof(float));
  // dbias sums dy's m rows (none when m = 0), whatever k is.
  if (dbias && n > 0) {
    require(m == 0 || dy != nullptr, "dy is NULL");
    columnSum(c, dy, m, n, dbias, accumulateParams);
  }
}

void txrt::linearBackwardProducts(Context &c, int64_t site, bool bf16,
                                  int64_t m, int64_t n, int64_t k,
                                  const void *dy, const void *x, const void *w,
                                  float *dx, float *dw, bool accumulateDx,
                                  bool accumulateParams) {
  if (dx) {
    require(w != nullptr, "w is NULL (needed for dx)");
    MatmulSpec spec; // dx[m, k] = dy[m, n] . w[n, k]
    spec.bf16 = bf16;
    spec.m = m;
    spec.n = k;
    spec.k = n;
    spec.aStrides = {0, 0, n, 1};
    spec.bStrides = {0, 0, k, 1};
    spec.cStrides = {0, 0, k, 1};
    spec.beta = accumulateDx ? 1.0f : 0.0f;
    cachedMatmul(c, site, Kernel::LinearBwdData, spec)
        .run(c, dy, w, dx, nullptr, nullptr);
  }
  if (dw) {
    require(x != nullptr, "x is NULL (needed for dw)");
    MatmulSpec spec; // dw[n, k] = dy^T[n, m] . x[m, k]
    spec.bf16 = bf16;
    spec.m = n;
    spec.n = k;
    spec.k = m;
    spec.aStrides = {0, 0, 1, n};
    spec.bStrides = {0, 0, k, 1};
    spec.cStrides = {0, 0, k, 1};
    spec.beta = accumulateParams ? 1.0f : 0.0f;
    cachedMatmul(c, site, Kernel::LinearBwdWeights, spec)
        .run(c, dy, x, dw, nullptr, nullptr);
  }
}

extern "C" {

txrt_status txrt_matmul(txrt_context *ctx, int64_t site, int64_t batch0,
                        int64_t batch1, int64_t m, int64_t n, int64_t k,
                        const float *a, const int64_t *a_strides,
                        const float *b, const int64_t *b_strides, float *c,
                        const int64_t *c_strides, const float *bias,
                        int32_t activation, const float *residual, float alpha,
                        float beta) {
  return runKernel(
      ctx, site, "txrt_matmul",
      [&] {
        return shapes("batch0", batch0, "batch1", batch1, "m", m, "n", n, "k",
                      k, "a_strides", dimsString(a_strides, 4), "b_strides",
                      dimsString(b_strides, 4), "c_strides",
                      dimsString(c_strides, 4));
      },
      [&](Context &c_) {
        c_.noteFlops(2.0 * double(batch0) * double(batch1) * double(m) * double(n) * double(k));
        require(batch0 >= 0 && batch1 >= 0 && m >= 0 && n >= 0 && k >= 0,
                "sizes must be non-negative");
        if (batch0 == 0 || batch1 == 0 || m == 0 || n == 0)
          return;
        requireStrides(c_strides, "c_strides");
        // c = the epilogue of a zero product (zeroOperand), contiguous
        // zeros [batch0, batch1, m, 1] by [batch0, batch1, 1, n].
        const int64_t emptyA[4] = {batch1 * m, m, 1, 1},
                      emptyB[4] = {batch1 * n, n, n, 1};
        if (k == 0) {
          const size_t batches = size_t(batch0) * size_t(batch1);
          a = zeroOperand(c_, 2, batches * size_t(m));
          b = zeroOperand(c_, 3, batches * size_t(n));
          a_strides = emptyA;
          b_strides = emptyB;
          k = 1;
        }
        require(a && b && c, "a, b and c must not be NULL");
        requireStrides(a_strides, "a_strides");
        requireStrides(b_strides, "b_strides");
        MatmulSpec spec;
        spec.batch0 = batch0;
        spec.batch1 = batch1;
        spec.m = m;
        spec.n = n;
        spec.k = k;
        std::copy(a_strides, a_strides + 4, spec.aStrides.begin());
        std::copy(b_strides, b_strides + 4, spec.bStrides.begin());
        std::copy(c_strides, c_strides + 4, spec.cStrides.begin());
        spec.hasBias = bias != nullptr;
        spec.activation = activation;
        spec.alpha = alpha;
        spec.beta = beta;
        // A residual that is the output itself is an accumulation.
        if (residual == c) {
          spec.beta += 1.0f;
          residual = nullptr;
        }
        spec.hasResidual = residual != nullptr;
        cachedMatmul(c_, site, Kernel::Matmul, spec)
            .run(c_, a, b, c, bias, residual);
      });
}

txrt_status txrt_linear_fwd(txrt_context *ctx, int64_t site, int64_t m,
                            int64_t n, int64_t k, const float *x,
                            const float *w, const float *bias,
                            int32_t activation, const float *residual,
                            float *y) {
  return runKernel(
      ctx, site, "txrt_linear_fwd", [&] { return shapes("m", m, "n", n, "k", k); },
      [&](Context &c) {
        linearForward(c, site, /*bf16=*/false, m, n, k, x, w, bias, activation, nullptr,
                      residual, y);
      });
}

txrt_status txrt_linear_gated_fwd(txrt_context *ctx, int64_t site, int64_t m,
                                  int64_t n, int64_t k, const float *x,
                                  const float *w, const float *bias,
                                  int32_t activation, const float *gate,
                                  const float *residual, float *y) {
  return runKernel(
      ctx, site, "txrt_linear_gated_fwd",
      [&] { return shapes("m", m, "n", n, "k", k); },
      [&](Context &c) {
        gatedLinearForward(c, site, /*bf16=*/false, m, n, k, x, w, bias,
                           activation, gate, residual, y);
      });
}

txrt_status txrt_linear_bwd(txrt_context *ctx, int64_t site, int64_t m,
                            int64_t n, int64_t k, const float *x,
                            const float *w, const float *dy, float *dx,
                            float *dw, float *dbias, int32_t accumulate_dx,
                            int32_t accumulate_params) {
  return runKernel(
      ctx, site, "txrt_linear_bwd", [&] { return shapes("m", m, "n", n, "k", k); },
      [&](Context &c) {
        c.noteFlops(2.0 * double(m) * double(n) * double(k) * ((dx ? 1.0 : 0.0) + (dw ? 1.0 : 0.0)));
        require(m >= 0 && n >= 0 && k >= 0, "sizes must be non-negative");
        if (m == 0 || n == 0 || k == 0)
          return emptyLinearBackward(c, m, n, k, dy, dx, dw, dbias,
                                     accumulate_dx != 0,
                                     accumulate_params != 0);
        require(dy != nullptr, "dy is NULL");
        linearBackwardProducts(c, site, /*bf16=*/false, m, n, k, dy, x, w, dx,
                               dw, accumulate_dx != 0,
                               accumulate_params != 0);
        if (dbias)
          columnSum(c, dy, m, n, dbias, accumulate_params != 0);
      });
}

} // extern "C"
