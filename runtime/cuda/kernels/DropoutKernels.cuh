//===- DropoutKernels.cuh - dropout's device code --------------*- CUDA -*-===//
//
// The kernel of txrt_cuda_dropout_{fwd,bwd} (Dropout.cu launches it) and
// its launch geometry: a thread a Philox counter, counter b giving the keep
// words of elements 4b .. 4b+3 exactly as runtime/lib/kernels/Dropout.cpp
// reads them, and a kept element is x * (1 / (1 - p)) computed as the CPU
// computes it, so the outputs are bit-identical. No CUDA header:
// test/unit/cuda/emulated/ runs the same code on the host against the CPU
// kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_DROPOUTKERNELS_CUH
#define TXRT_CUDA_KERNELS_DROPOUTKERNELS_CUH

#include "KernelLaunch.cuh"
#include "PhiloxDevice.h"

#include <cstdint>

namespace txrt::cuda::dropout {

/// Element i is element offset + i of the whole batch's stream
/// (txrt_cuda_context_set_batch_rows): one thread per counter of the
/// stream's [offset, offset + n), so the first and last may be partial.
__global__ void dropoutKernel(int64_t n, int64_t offset, PhiloxSource source,
                              uint32_t threshold, float keepScale,
                              const float *x, float *y) {
  const PhiloxStream key = source.resolve();
  const int64_t first = offset / 4;
  const int64_t counters = (offset + n + 3) / 4 - first;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < counters;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = first + c;
    uint32_t words[4];
    philoxWords(key, uint64_t(b), words);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      int64_t i = 4 * b + w - offset;
      if (i >= 0 && i < n)
        y[i] = words[w] >= threshold ? x[i] * keepScale : 0.0f;
    }
  }
}

/// A kept element's factor, 1 / (1 - p) in float as the CPU kernel has it.
inline float keepScaleOf(float p) { return 1.0f / (1.0f - p); }

/// A thread a counter of the stream's [offset, offset + n).
inline KernelLaunch counterLaunch(int64_t n, int64_t offset) {
  return gridStrideLaunch((offset % 4 + n + 3) / 4, 256);
}

} // namespace txrt::cuda::dropout

#endif // TXRT_CUDA_KERNELS_DROPOUTKERNELS_CUH
