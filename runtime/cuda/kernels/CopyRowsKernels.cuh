//===- CopyRowsKernels.cuh - strided copies within the device --*- CUDA -*-===//
//
// The kernel of txrt_cuda_copy_rows (CopyRows.cu launches it): up to
// kCopiesPerLaunch strided copies in one launch, each `height` rows of
// `width` bytes from src + r * srcPitch to dst + r * dstPitch. It is how the
// driver's resident KV caches follow their rows at every decoded token
// (runtime/driver/core/ResidentTensor.h): a model's dozen caches move in
// one launch instead of a cudaMemcpy2DAsync each. A block's threads stride
// over a row's bytes, 16 at a time when the copy's addresses, pitches and
// width are all multiples of 16 (4 or 1 otherwise); blockIdx.y picks the
// copy and the blocks stride over its rows. No CUDA header:
// test/unit/cuda/emulated/ runs the same code on the host.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_COPYROWSKERNELS_CUH
#define TXRT_CUDA_KERNELS_COPYROWSKERNELS_CUH

#include "KernelLaunch.cuh"

#include <cstdint>

namespace txrt::cuda::copyrows {

/// The copies one launch takes (they travel as the kernel's argument:
/// 32 x 48 bytes, well within the 4 KiB a kernel's parameters may hold).
constexpr int64_t kCopiesPerLaunch = 32;

struct RowCopy {
  char *dst;
  const char *src;
  int64_t dstPitch, srcPitch, width, height;
};

struct RowCopies {
  RowCopy copy[kCopiesPerLaunch];
};

/// 16 bytes moved as one load and one store.
struct alignas(16) Bytes16 {
  uint32_t word[4];
};

/// The largest of 16, 4 and 1 that divides every address and size of `c`.
__host__ __device__ inline int64_t copyUnit(const RowCopy &c) {
  const uint64_t all = uint64_t(reinterpret_cast<uintptr_t>(c.dst)) |
                       uint64_t(reinterpret_cast<uintptr_t>(c.src)) |
                       uint64_t(c.dstPitch) | uint64_t(c.srcPitch) |
                       uint64_t(c.width);
  return all % 16 == 0 ? 16 : all % 4 == 0 ? 4 : 1;
}

template <typename Unit>
__device__ inline void copyRow(char *dst, const char *src, int64_t units) {
  Unit *to = reinterpret_cast<Unit *>(dst);
  const Unit *from = reinterpret_cast<const Unit *>(src);
  for (int64_t i = threadIdx.x; i < units; i += blockDim.x)
    to[i] = from[i];
}

__global__ void copyRowsKernel(RowCopies copies) {
  const RowCopy &c = copies.copy[blockIdx.y];
  const int64_t unit = copyUnit(c);
  for (int64_t row = blockIdx.x; row < c.height; row += gridDim.x) {
    char *dst = c.dst + row * c.dstPitch;
    const char *src = c.src + row * c.srcPitch;
    if (unit == 16)
      copyRow<Bytes16>(dst, src, c.width / 16);
    else if (unit == 4)
      copyRow<uint32_t>(dst, src, c.width / 4);
    else
      copyRow<char>(dst, src, c.width);
  }
}

/// copyRowsKernel over `count` copies whose tallest has `rows` rows:
/// blocks.x strides over the rows (at most 1024 a copy), the grid's y is
/// the copy; 256 threads a block.
inline KernelLaunch copyRowsLaunch(int64_t rows) {
  return {unsigned(rows < 1 ? 1 : rows > 1024 ? 1024 : rows), 256};
}

/// Calls launch(batch, filled, launch geometry) for each run of up to
/// kCopiesPerLaunch of `copies` (those with bytes to move), in order:
/// CopyRows.cu's launches.
template <typename Launch>
void forEachLaunch(const RowCopy *copies, int64_t count, Launch &&launch) {
  RowCopies batch{};
  int64_t filled = 0, tallest = 0;
  for (int64_t i = 0; i <= count; ++i) {
    if (i < count && copies[i].width > 0 && copies[i].height > 0) {
      batch.copy[filled++] = copies[i];
      tallest = copies[i].height > tallest ? copies[i].height : tallest;
    }
    if (filled > 0 && (filled == kCopiesPerLaunch || i == count)) {
      launch(batch, filled, copyRowsLaunch(tallest));
      filled = 0;
      tallest = 0;
    }
  }
}

} // namespace txrt::cuda::copyrows

#endif // TXRT_CUDA_KERNELS_COPYROWSKERNELS_CUH
