//===- ArgmaxKernels.cuh - greedy decoding's choice on the device -*- CUDA
//-*-===//
//
// The kernel of txrt_cuda_argmax_rows (Argmax.cu launches it): a block a
// row of logits, each thread the first largest of its strided elements,
// then the warps' and the block's. It is the host search's choice
// (runtime/driver/decoding/Decoding.cpp: AllowedIds::apply, then the first
// largest) made where the logits are, so a greedy decoding step on a GPU
// copies B ids back instead of B x vocab logits (docs/cuda.md "Greedy
// choice on the device"). The host's rule, element for element:
//   - an id not allowed (at or past `emittable` when 0 < emittable <
//     vocab, or one of the excluded) reads as -infinity;
//   - the first id of the largest value wins (ties: the lowest id);
//   - the first NaN wins, as in torch.argmax (the choice is then flagged
//     as non-finite below, and refused);
//   - a row of -infinity (every id masked) gives id 0;
//   - a choice whose logit (as written, before the mask) is not finite is
//     written as -1 - id: the host then reads the row and refuses it as
//     its own search does (Decoding.cpp: chooseDecoded), where greedy
//     decoding would have printed a token chosen from NaN or infinite
//     logits.
// No CUDA header: test/unit/cuda/emulated/ runs the same code on the host.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ARGMAXKERNELS_CUH
#define TXRT_CUDA_KERNELS_ARGMAXKERNELS_CUH

#include "KernelLaunch.cuh"

#include "txrt/txrt_cuda.h" // TXRT_CUDA_ARGMAX_MAX_EXCLUDED

#include <cmath>
#include <cstdint>

namespace txrt::cuda::argmax {

constexpr int kThreads = 256;
/// The most excluded ids a launch takes (they travel in its argument; the
/// driver excludes [PAD] and [SOS]).
constexpr int kMaxExcluded = TXRT_CUDA_ARGMAX_MAX_EXCLUDED;
/// A thread's or warp's candidate before it has seen an element.
constexpr int32_t kNoId = 0x7FFFFFFF;

struct AllowedIds {
  int64_t emittable; ///< ids at or past it are not allowed (0: all are)
  int32_t excludedCount;
  int32_t excluded[kMaxExcluded];
};

/// Logit `id` of `row` as the host's search sees it (-infinity where the
/// id is not allowed).
__host__ __device__ inline float allowedLogit(const float *row, int64_t id,
                                              int64_t vocab,
                                              const AllowedIds &allowed) {
  if (allowed.emittable > 0 && allowed.emittable < vocab &&
      id >= allowed.emittable)
    return -INFINITY;
  for (int32_t i = 0; i < allowed.excludedCount; ++i)
    if (allowed.excluded[i] == id)
      return -INFINITY;
  return row[id];
}

/// Whether (value, id) beats (bestValue, bestId): a NaN beats every number
/// and a later NaN; otherwise larger, or as large and earlier. (-inf, kNoId)
/// loses to every element.
__host__ __device__ inline bool beats(float value, int32_t id, float bestValue,
                                      int32_t bestId) {
  if (value != value)
    return bestValue == bestValue || id < bestId;
  return value > bestValue || (value == bestValue && id < bestId);
}

__global__ void argmaxRowsKernel(const float *logits, int64_t vocab,
                                 int64_t rowStride, AllowedIds allowed,
                                 int32_t *ids) {
  __shared__ float warpValue[32];
  __shared__ int32_t warpId[32];
  const float *row = logits + int64_t(blockIdx.x) * rowStride;
  float best = -INFINITY;
  int32_t bestId = kNoId;
  for (int64_t id = threadIdx.x; id < vocab; id += blockDim.x) {
    const float value = allowedLogit(row, id, vocab, allowed);
    if (beats(value, int32_t(id), best, bestId)) {
      best = value;
      bestId = int32_t(id);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const float value = __shfl_down_sync(0xFFFFFFFFu, best, offset);
    const int32_t id = __shfl_down_sync(0xFFFFFFFFu, bestId, offset);
    if (beats(value, id, best, bestId)) {
      best = value;
      bestId = id;
    }
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = (blockDim.x + 31) / 32;
  if (lane == 0) {
    warpValue[warp] = best;
    warpId[warp] = bestId;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < warps; ++w)
      if (beats(warpValue[w], warpId[w], best, bestId)) {
        best = warpValue[w];
        bestId = warpId[w];
      }
    const int32_t id = bestId == kNoId ? 0 : bestId;
    const float chosen = row[id];
    ids[blockIdx.x] = chosen - chosen == 0.0f ? id : -1 - id;
  }
}

/// argmaxRowsKernel: a block a row.
inline KernelLaunch argmaxLaunch(int64_t rows) {
  return blockPerRowLaunch(rows, kThreads);
}

} // namespace txrt::cuda::argmax

#endif // TXRT_CUDA_KERNELS_ARGMAXKERNELS_CUH
