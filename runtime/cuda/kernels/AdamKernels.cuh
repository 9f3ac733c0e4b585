//===- AdamKernels.cuh - Adam's device code --------------------*- CUDA -*-===//
//
// The kernel of txrt_cuda_adam_update / _step (Adam.cu launches it), the
// host arithmetic of its constants and its launch geometry: the CPU
// kernel's arithmetic (runtime/lib/kernels/Adam.cpp) element for element,
// the bias corrections in double on the host, m as a lerp as torch writes
// it, v, then the step, over a whole parameter arena in one launch. No
// CUDA header: test/unit/cuda/emulated/ runs the same code on the host
// against the CPU kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ADAMKERNELS_CUH
#define TXRT_CUDA_KERNELS_ADAMKERNELS_CUH

#include "KernelLaunch.cuh"
#include "StepState.cuh"
#include "lib/AdamScalars.h"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::adam {

/// stepScalars (a captured step's, StepState.cuh) or nullptr: stepSize and
/// sqrtCorrection2 as arguments.
__global__ void adamKernel(int64_t n, float *param, const float *grad,
                           const float *gradScale, float *m, float *v,
                           float stepSize, float sqrtCorrection2,
                           float oneMinusBeta1, float beta2,
                           float oneMinusBeta2, float eps, float weightDecay,
                           const AdamStepScalars *stepScalars) {
  const float scale = gradScale ? *gradScale : 1.0f;
  if (stepScalars) {
    stepSize = stepScalars->stepSize;
    sqrtCorrection2 = stepScalars->sqrtCorrection2;
  }
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float g = grad[i] * scale;
    if (weightDecay != 0.0f)
      g += weightDecay * param[i];
    // torch's lerp, both forms (Adam.cpp).
    float mi = oneMinusBeta1 < 0.5f
                   ? m[i] + oneMinusBeta1 * (g - m[i])
                   : g - (g - m[i]) * (1.0f - oneMinusBeta1);
    float vi = beta2 * v[i] + oneMinusBeta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    float denom = sqrtf(vi) / sqrtCorrection2 + eps;
    param[i] -= stepSize * (mi / denom);
  }
}

/// adamKernel's scalar arguments for Adam's step `step` (>= 1).
struct AdamConstants {
  float stepSize, sqrtCorrection2, oneMinusBeta1, beta2, oneMinusBeta2;
};

/// The CPU's constants (lib/AdamScalars.h: from the written betas, in
/// double, as torch.optim.Adam), so both devices update alike.
inline AdamConstants adamConstants(float lr, float beta1, float beta2,
                                   int64_t step) {
  const txrt::AdamScalars cpu = txrt::adamScalars(lr, beta1, beta2, step);
  return {cpu.stepSize, cpu.sqrtCorrection2, cpu.oneMinusBeta1, beta2,
          cpu.oneMinusBeta2};
}

/// A thread an element.
inline KernelLaunch adamLaunch(int64_t n) { return gridStrideLaunch(n, 256); }

} // namespace txrt::cuda::adam

#endif // TXRT_CUDA_KERNELS_ADAMKERNELS_CUH
