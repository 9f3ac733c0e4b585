//===- EmbeddingKernels.cuh - embedding's device code ----------*- CUDA -*-===//
//
// The kernels of txrt_cuda_embedding_{fwd,bwd} (Embedding.cu launches
// them) and their launch geometry. Forward: a thread an output element,
// out = scale * table[id] + pos[i % seq_len]. Backward: an atomicAdd an
// element of dout into its id's row of dtable, padding rows skipped. An id
// outside [0, vocab) gives a zero row forward, is skipped backward, and
// is a device fault. No CUDA header: test/unit/cuda/emulated/ runs the
// same code on the host against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_EMBEDDINGKERNELS_CUH
#define TXRT_CUDA_KERNELS_EMBEDDINGKERNELS_CUH

#include "DeviceFault.cuh"
#include "KernelLaunch.cuh"

#include <cstdint>

namespace txrt::cuda::embedding {

__global__ void gatherKernel(int64_t n, int64_t vocab, int64_t dim,
                             const int32_t *ids, const float *table,
                             float scale, const float *pos, int64_t seqLen,
                             float *out, txrt_cuda_device_fault *fault) {
  const int64_t total = n * dim;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / dim, d = e % dim;
    const int32_t id = ids[i];
    const bool valid = id >= 0 && id < vocab;
    if (!valid && d == 0)
      reportFault(fault, kEmbeddingIdOutOfRange, i, id, vocab);
    float value = valid ? scale * table[id * dim + d] : 0.0f;
    if (pos)
      value += pos[(i % seqLen) * dim + d];
    out[e] = value;
  }
}

__global__ void scatterAddKernel(int64_t n, int64_t vocab, int64_t dim,
                                 const int32_t *ids, const float *dout,
                                 float scale, int32_t paddingIdx, float *dtable,
                                 txrt_cuda_device_fault *fault) {
  const int64_t total = n * dim;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / dim, d = e % dim;
    const int32_t id = ids[i];
    if (id == paddingIdx)
      continue;
    if (id < 0 || id >= vocab) {
      if (d == 0)
        reportFault(fault, kEmbeddingIdOutOfRange, i, id, vocab);
      continue;
    }
    atomicAdd(&dtable[id * dim + d], scale * dout[e]);
  }
}

/// Both kernels: a thread an element of the n x dim rows.
inline KernelLaunch elementLaunch(int64_t n, int64_t dim) {
  return gridStrideLaunch(n * dim, 256);
}

} // namespace txrt::cuda::embedding

#endif // TXRT_CUDA_KERNELS_EMBEDDINGKERNELS_CUH
