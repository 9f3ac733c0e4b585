//===- Accumulate.cu - the device gradient exchange's kernels -------------===//
//
// What runtime/cuda/GradientExchange.cpp enqueues besides Adam and NCCL:
// scale * gradient added into a bucket slot with the product rounded before
// the sum (no FMA, as the CPU's accumulateScaled), and the clipping factor
// min(1, clip / (norm + 1e-6)) from the sum of squares of the summed
// gradients (double, one block, in a fixed order: every rank computes the
// same factor from the same sums).
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "Kernels.h"

namespace txrt::cuda {

namespace {

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

unsigned blocksFor(int64_t n) {
  int64_t blocks = (n + 255) / 256;
  return unsigned(blocks < 1 ? 1 : (blocks > 65535 * 16 ? 65535 * 16 : blocks));
}

} // namespace

void launchAccumulateScaled(cudaStream_t stream, float *sum,
                            const float *gradient, float factor, int64_t n) {
  if (n > 0)
    accumulateScaledKernel<<<blocksFor(n), 256, 0, stream>>>(sum, gradient,
                                                             factor, n);
}

void launchSumSquares(cudaStream_t stream, const float *x, int64_t n,
                      double *squares) {
  if (n > 0)
    sumSquaresKernel<<<1, 1024, 0, stream>>>(x, n, squares);
}

void launchClipFactor(cudaStream_t stream, const double *squares, float clip,
                      float *factor) {
  clipFactorKernel<<<1, 1, 0, stream>>>(squares, clip, factor);
}

} // namespace txrt::cuda
