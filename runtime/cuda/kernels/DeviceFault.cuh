//===- DeviceFault.cuh - bad input a kernel finds --------------*- CUDA -*-===//
//
// A kernel that meets an input it cannot use (an id out of range) records
// the first such fault in the context's device memory
// (txrt_cuda_context::fault); txrt_cuda_synchronize reads, reports and
// clears it. No CUDA header: kernels' device code includes it, on a GPU and
// under test/unit/cuda/emulated/CudaEmulation.h alike.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_DEVICEFAULT_CUH
#define TXRT_CUDA_KERNELS_DEVICEFAULT_CUH

#include <cstdint>

/// The first bad input a kernel found: which check (0: none), where, what.
struct txrt_cuda_device_fault {
  int32_t kind;
  int32_t value;
  int64_t index;
  int64_t bound;
};

namespace txrt::cuda {

/// Kinds of txrt_cuda_device_fault.
enum DeviceFaultKind : int32_t {
  kNoFault = 0,
  kEmbeddingIdOutOfRange = 1,
  kCrossEntropyTargetOutOfRange = 2,
  kGatherIndexOutOfRange = 3,
};

#if defined(__CUDACC__) || defined(TXRT_CUDA_EMULATION)
/// Records the first fault of the context (later ones are dropped).
__device__ inline void reportFault(txrt_cuda_device_fault *fault, int32_t kind,
                                   int64_t index, int32_t value,
                                   int64_t bound) {
  if (atomicCAS(&fault->kind, 0, -1) == 0) {
    fault->index = index;
    fault->value = value;
    fault->bound = bound;
    __threadfence();
    atomicExch(&fault->kind, kind);
  }
}
#endif

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_DEVICEFAULT_CUH
