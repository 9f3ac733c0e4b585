//===- Accumulate.cu - the device gradient exchange's kernels -------------===//
//
// The launchers of Kernels.h for runtime/cuda/GradientExchange.cpp; the
// device code is AccumulateKernels.cuh's.
//
//===----------------------------------------------------------------------===//
#include "AccumulateKernels.cuh"
#include "Kernels.h"

namespace txrt::cuda {

using namespace accumulate;

void launchAccumulateScaled(cudaStream_t stream, float *sum,
                            const float *gradient, float factor, int64_t n) {
  if (n <= 0)
    return;
  const KernelLaunch elements = accumulateLaunch(n);
  accumulateScaledKernel<<<elements.blocks, elements.threads, 0, stream>>>(
      sum, gradient, factor, n);
}

void launchSumSquares(cudaStream_t stream, const float *x, int64_t n,
                      double *squares) {
  if (n <= 0)
    return;
  const KernelLaunch all = sumSquaresLaunch();
  sumSquaresKernel<<<all.blocks, all.threads, 0, stream>>>(x, n, squares);
}

void launchClipFactor(cudaStream_t stream, const double *squares, float clip,
                      float *factor) {
  clipFactorKernel<<<1, 1, 0, stream>>>(squares, clip, factor);
}

} // namespace txrt::cuda
