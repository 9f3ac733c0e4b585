//===- Embedding.cu - embedding gather and scatter-add --------------------===//
//
// The host side: checks, dtable zeroed unless accumulating, then the
// launches of EmbeddingKernels.cuh's kernels. The first id out of range is
// reported by the next txrt_cuda_synchronize.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "EmbeddingKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::embedding;

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
    const KernelLaunch elements = elementLaunch(n, dim);
    gatherKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
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
    const KernelLaunch elements = elementLaunch(n, dim);
    scatterAddKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
        n, vocab, dim, ids, dout, scale, padding_idx < 0 ? -1 : padding_idx,
        dtable, c.fault);
    checkLaunch("scatterAddKernel");
  });
}

} // extern "C"
