//===- SoftmaxKernels.cuh - softmax's device code --------------*- CUDA -*-===//
//
// The kernels of txrt_cuda_softmax_{fwd,bwd} and txrt_cuda_sum_squares
// (Softmax.cu launches them) and their launch geometry: softmax and
// log-softmax over the last dimension, a block per row (max, then the sum
// of exp(x - max)), their backward from the output y as txrt_softmax_bwd
// defines it, and one block adding sum x^2 (in double) to an accumulator.
// No CUDA header: test/unit/cuda/emulated/ runs the same code on the host
// against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_SOFTMAXKERNELS_CUH
#define TXRT_CUDA_KERNELS_SOFTMAXKERNELS_CUH

#include "BlockReduce.cuh"
#include "KernelLaunch.cuh"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::softmax {

constexpr int kThreads = 256;

__global__ void softmaxForward(int64_t cols, const float *x, float *y,
                               bool logSoftmax) {
  const float *xr = x + blockIdx.x * cols;
  float *yr = y + blockIdx.x * cols;
  float maximum = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    maximum = fmaxf(maximum, xr[j]);
  maximum = blockMax(maximum);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    sum += expf(xr[j] - maximum);
  sum = blockSum(sum);
  const float logSum = logf(sum);
  // y may alias x: each element is read, then written, by one thread.
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    yr[j] = logSoftmax ? xr[j] - maximum - logSum : expf(xr[j] - maximum) / sum;
}

__global__ void softmaxBackward(int64_t cols, const float *y, const float *dy,
                                float *dx, bool logSoftmax) {
  const int64_t offset = blockIdx.x * cols;
  float partial = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    partial += logSoftmax ? dy[offset + j] : dy[offset + j] * y[offset + j];
  const float total = blockSum(partial);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const int64_t at = offset + j;
    dx[at] =
        logSoftmax ? dy[at] - expf(y[at]) * total : y[at] * (dy[at] - total);
  }
}

__global__ void sumSquaresKernel(int64_t n, const float *x,
                                 float *accumulator) {
  double partial = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    partial += double(x[i]) * double(x[i]);
  const double total = blockSum(partial);
  if (threadIdx.x == 0)
    accumulator[0] = float(double(accumulator[0]) + total);
}

/// softmaxForward and softmaxBackward: a block a row.
inline KernelLaunch rowLaunch(int64_t rows) {
  return blockPerRowLaunch(rows, kThreads);
}
/// sumSquaresKernel: one block over all elements.
inline KernelLaunch sumSquaresLaunch() { return {1, 1024}; }

} // namespace txrt::cuda::softmax

#endif // TXRT_CUDA_KERNELS_SOFTMAXKERNELS_CUH
