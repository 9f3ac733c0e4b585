//===- AccumulateKernels.cuh - gradient exchange device code ---*- CUDA -*-===//
//
// The kernels of Accumulate.cu (runtime/cuda/GradientExchange.cpp
// enqueues them) and their launch geometry: scale * gradient added into a
// bucket slot with the product rounded before the sum (no FMA, as the
// CPU's accumulateScaled), and the clipping factor min(1, clip / (norm +
// 1e-6)) from the sum of squares of the summed gradients (double, one
// block, a fixed order: every rank computes the same factor from the same
// sums). No CUDA header: test/unit/cuda/emulated/ runs the same code on
// the host.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ACCUMULATEKERNELS_CUH
#define TXRT_CUDA_KERNELS_ACCUMULATEKERNELS_CUH

#include "BlockReduce.cuh"
#include "KernelLaunch.cuh"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::accumulate {

__global__ void accumulateScaledKernel(float *sum, const float *gradient,
                                       float factor, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    sum[i] = __fadd_rn(sum[i], __fmul_rn(factor, gradient[i]));
}

__global__ void sumSquaresKernel(const float *x, int64_t n, double *squares) {
  double partial = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    partial += double(x[i]) * double(x[i]);
  double total = blockSum(partial);
  if (threadIdx.x == 0)
    *squares += total;
}

__global__ void clipFactorKernel(const double *squares, float clip,
                                 float *factor) {
  *factor = fminf(1.0f, clip / (float(sqrt(*squares)) + 1e-6f));
}

/// accumulateScaledKernel: a thread an element.
inline KernelLaunch accumulateLaunch(int64_t n) {
  return gridStrideLaunch(n, 256);
}
/// sumSquaresKernel: one block over all elements (clipFactorKernel: one
/// thread).
inline KernelLaunch sumSquaresLaunch() { return {1, 1024}; }

} // namespace txrt::cuda::accumulate

#endif // TXRT_CUDA_KERNELS_ACCUMULATEKERNELS_CUH
