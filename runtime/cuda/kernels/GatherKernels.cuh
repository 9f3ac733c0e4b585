//===- GatherKernels.cuh - gather's device code ----------------*- CUDA -*-===//
//
// The kernels of txrt_cuda_gather / _gather_bwd (Gather.cu launches them)
// and their launch geometry: out[o, k, :] = src[o, i, :] with i = ids[k]
// (n + ids[k] when negative), elements of 4 or 1 bytes; the gradient adds
// every dout row into its source row with atomicAdd (not bitwise
// deterministic where ids repeat). An index outside [-n, n) gives zeros,
// is skipped backward, and is a device fault. No CUDA header:
// test/unit/cuda/emulated/ runs the same code on the host against the CPU
// kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_GATHERKERNELS_CUH
#define TXRT_CUDA_KERNELS_GATHERKERNELS_CUH

#include "DeviceFault.cuh"
#include "KernelLaunch.cuh"

#include <cstdint>

namespace txrt::cuda::gather {

/// The source row of ids[k] (n + ids[k] when negative), or -1 outside
/// [-n, n), then reported as a device fault by the thread that `reports`
/// (one per id).
__device__ inline int64_t sourceRow(const int32_t *ids, int64_t k, int64_t n,
                                    bool reports,
                                    txrt_cuda_device_fault *fault) {
  const int64_t i = ids[k] < 0 ? ids[k] + n : ids[k];
  if (i >= 0 && i < n)
    return i;
  if (reports)
    reportFault(fault, kGatherIndexOutOfRange, k, ids[k], n);
  return -1;
}

template <typename T>
__global__ void gatherKernel(int64_t outer, int64_t n, int64_t inner,
                             const int32_t *ids, int64_t count, const T *src,
                             T *out, txrt_cuda_device_fault *fault) {
  const int64_t total = outer * count * inner;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % inner, k = e / inner % count, o = e / inner / count;
    const int64_t i = sourceRow(ids, k, n, j == 0 && o == 0, fault);
    out[e] = i < 0 ? T(0) : src[(o * n + i) * inner + j];
  }
}

__global__ void gatherBackwardKernel(int64_t outer, int64_t n, int64_t inner,
                                     const int32_t *ids, int64_t count,
                                     const float *dout, float *dsrc,
                                     txrt_cuda_device_fault *fault) {
  const int64_t total = outer * count * inner;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % inner, k = e / inner % count, o = e / inner / count;
    const int64_t i = sourceRow(ids, k, n, j == 0 && o == 0, fault);
    if (i >= 0)
      atomicAdd(&dsrc[(o * n + i) * inner + j], dout[e]);
  }
}

/// Both kernels: a thread an element of the outer x count x inner rows.
inline KernelLaunch elementLaunch(int64_t elements) {
  return gridStrideLaunch(elements, 256);
}

} // namespace txrt::cuda::gather

#endif // TXRT_CUDA_KERNELS_GATHERKERNELS_CUH
