//===- Kernels.h - launchers of the backend's own CUDA kernels --*- C++ -*-===//
//
// Host functions, defined in kernels/*.cu, that check nothing and launch on
// `stream`; the txrt_cuda_* entry points validate arguments first.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_H
#define TXRT_CUDA_KERNELS_H

#include <cuda_runtime.h>

#include <cstdint>

namespace txrt::cuda {

/// y[i, j] = act(y[i, j] + bias[j]) * gate[i, j] + residual[i, j] over
/// [rows, cols]; bias, gate, residual may be NULL.
void launchEpilogue(cudaStream_t stream, int64_t rows, int64_t cols, float *y,
                    const float *bias, int32_t activation, const float *gate,
                    const float *residual);

/// txrt_matmul's epilogue, as the CPU's oneDNN post-ops order it: for
/// every batch (i0, i1) and element (i, j) of the dense products,
///   c = act(product + bias[j]) + residual + beta * c_old
/// with c and residual at c_strides (residual and bias may be NULL; c_old is
/// not read when beta is 0).
void launchStridedEpilogue(cudaStream_t stream, int64_t batch0,
                           int64_t batch1, int64_t m, int64_t n,
                           const float *product, float *c,
                           const int64_t *cStrides, const float *bias,
                           int32_t activation, const float *residual,
                           float beta);

/// out[j] = (accumulate ? out[j] : 0) + sum_i x[i, j] over [rows, cols].
void launchColumnSum(cudaStream_t stream, int64_t rows, int64_t cols,
                     const float *x, float *out, bool accumulate);

/// sum[i] += factor * gradient[i], the product rounded first (no FMA).
void launchAccumulateScaled(cudaStream_t stream, float *sum,
                            const float *gradient, float factor, int64_t n);

/// *squares += sum_i x[i]^2, in double, one block (a fixed order).
void launchSumSquares(cudaStream_t stream, const float *x, int64_t n,
                      double *squares);

/// *factor = min(1, clip / (sqrt(*squares) + 1e-6)), the compiled step's
/// gradient clipping factor.
void launchClipFactor(cudaStream_t stream, const double *squares, float clip,
                      float *factor);

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_H
