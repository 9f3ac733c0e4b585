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

/// out[j] = (accumulate ? out[j] : 0) + sum_i x[i, j] over [rows, cols].
void launchColumnSum(cudaStream_t stream, int64_t rows, int64_t cols,
                     const float *x, float *out, bool accumulate);

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_H
