//===- EmaKernels.cuh - train --ema's update on the device -----*- CUDA -*-===//
//
// The kernel of txrt_cuda_update_average (Ema.cu launches it; the driver's
// Device::updateAverage calls it after every train step with --ema) and its
// launch geometry:
//
//   average[i] = round(round(decay * average[i]) + round((1 - decay) * p[i]))
//
// with each product rounded before the sum, as the host's updateAverage
// (runtime/driver/loop/Ema.cpp, compiled without FMA contraction) computes
// it, so a device's average has the CPU's bits. __fmul_rn / __fadd_rn keep
// nvcc from fusing them into an FMA (its default, --fmad=true). No CUDA
// header: test/unit/cuda/emulated/ runs the same code on the host against
// the driver's updateAverage.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_EMAKERNELS_CUH
#define TXRT_CUDA_KERNELS_EMAKERNELS_CUH

#include "KernelLaunch.cuh"

#include <cstdint>

namespace txrt::cuda::ema {

__global__ void updateAverageKernel(float *average, const float *params,
                                    int64_t n, float decay) {
  const float keep = decay, take = 1.0f - decay;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    average[i] =
        __fadd_rn(__fmul_rn(keep, average[i]), __fmul_rn(take, params[i]));
}

/// updateAverageKernel: a thread an element.
inline KernelLaunch updateAverageLaunch(int64_t n) {
  return gridStrideLaunch(n, 256);
}

} // namespace txrt::cuda::ema

#endif // TXRT_CUDA_KERNELS_EMAKERNELS_CUH
