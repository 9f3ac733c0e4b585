//===- Embedding.cu - embedding gather and scatter-add ---------------------===//
//
// Forward: one thread per output element, out = scale * table[id] +
// pos[i % seq_len]. Backward: dtable zeroed (unless accumulating), then one
// atomicAdd per element of dout into its id's row, padding rows skipped.
// An id outside [0, vocab) gives a zero row forward and is skipped backward,
// and the first such id is reported by the next txrt_cuda_synchronize.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"

using namespace txrt::cuda;

namespace {

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
                                 float scale, int32_t paddingIdx,
                                 float *dtable,
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

} // namespace

extern "C" {

txrt_status txrt_cuda_embedding_fwd(txrt_cuda_context *ctx, int64_t site,
                                    int64_t n, int64_t vocab, int64_t dim,
                                    const int32_t *ids, const float *table,
                                    float scale, const float *pos,
                                    int64_t seq_len, float *out) {
  return runCuda(ctx, "txrt_cuda_embedding_fwd", [&](txrt_cuda_context &c) {
    require(n >= 0 && vocab >= 0 && dim >= 0,
            "n, vocab and dim must be non-negative");
    require(!pos || seq_len > 0, "seq_len must be positive with pos");
    if (n == 0 || dim == 0)
      return;
    require(ids && table && out, "ids, table and out must not be NULL");
    gatherKernel<<<gridFor(n * dim, 256), 256, 0, c.stream>>>(
        n, vocab, dim, ids, table, scale, pos, seq_len, out, c.fault);
    checkLaunch("gatherKernel");
  });
}

txrt_status txrt_cuda_embedding_bwd(txrt_cuda_context *ctx, int64_t site,
                                    int64_t n, int64_t vocab, int64_t dim,
                                    const int32_t *ids, const float *dout,
                                    float scale, int32_t padding_idx,
                                    float *dtable, int32_t accumulate) {
  return runCuda(ctx, "txrt_cuda_embedding_bwd", [&](txrt_cuda_context &c) {
    require(n >= 0 && vocab >= 0 && dim >= 0,
            "n, vocab and dim must be non-negative");
    if (vocab == 0 || dim == 0)
      return;
    require(dtable, "dtable must not be NULL");
    if (!accumulate)
      check(cudaMemsetAsync(dtable, 0, size_t(vocab * dim) * sizeof(float),
                            c.stream),
            "cudaMemsetAsync");
    if (n == 0)
      return;
    require(ids && dout, "ids and dout must not be NULL");
    scatterAddKernel<<<gridFor(n * dim, 256), 256, 0, c.stream>>>(
        n, vocab, dim, ids, dout, scale, padding_idx < 0 ? -1 : padding_idx,
        dtable, c.fault);
    checkLaunch("scatterAddKernel");
  });
}

} // extern "C"
