//===- KernelLaunch.cuh - a 1-D kernel launch's geometry -------*- CUDA -*-===//
//
// The blocks and threads of a kernel's launch, computed by a host function
// beside the kernel (<Name>Kernels.cuh) so that the .cu launching it on a
// GPU and the emulated test running it on the host (test/unit/cuda/
// emulated/) use the same geometry. No CUDA header: both compile it.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_KERNELLAUNCH_CUH
#define TXRT_CUDA_KERNELS_KERNELLAUNCH_CUH

#include <cstdint>

namespace txrt::cuda {

/// blocks x threads, no dynamic shared memory.
struct KernelLaunch {
  unsigned blocks;
  unsigned threads;
};

/// Blocks of `threads` covering n items, capped so the grid stays valid
/// (kernels loop with a grid stride).
inline unsigned gridFor(int64_t n, unsigned threads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535 * 16)
    blocks = 65535 * 16;
  return unsigned(blocks < 1 ? 1 : blocks);
}

/// A thread an item, grid-stride looped past gridFor's cap.
inline KernelLaunch gridStrideLaunch(int64_t items, unsigned threads) {
  return {gridFor(items, threads), threads};
}

/// A block of `threads` a row (rows <= 2^31 - 1, the caller's check).
inline KernelLaunch blockPerRowLaunch(int64_t rows, unsigned threads) {
  return {unsigned(rows), threads};
}

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_KERNELLAUNCH_CUH
