//===- Gather.cu - gather along one axis and its scatter-add gradient -----===//
//
// The host side of GatherKernels.cuh: checks, dsrc zeroed for the
// gradient, and the launches. An index outside [-n, n) is reported by the
// next txrt_cuda_synchronize, as the embedding's ids are.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "GatherKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::gather;

extern "C" {

txrt_status txrt_cuda_gather(txrt_cuda_context *ctx, int64_t site,
                             int64_t outer, int64_t n, int64_t inner,
                             int64_t element_bytes, const int32_t *ids,
                             int64_t count, const void *src, void *out) {
  return runCuda(ctx, "txrt_cuda_gather", [&](txrt_cuda_context &c) {
    require(outer >= 0 && n >= 0 && inner >= 0 && count >= 0,
            "sizes must be non-negative");
    require(element_bytes == 1 || element_bytes == 4,
            "element_bytes must be 1 or 4");
    const int64_t total = outer * count * inner;
    if (total == 0)
      return;
    require(ids && src && out, "ids, src and out must not be NULL");
    const KernelLaunch elements = elementLaunch(total);
    if (element_bytes == 4)
      gatherKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
          outer, n, inner, ids, count, static_cast<const uint32_t *>(src),
          static_cast<uint32_t *>(out), c.fault);
    else
      gatherKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
          outer, n, inner, ids, count, static_cast<const uint8_t *>(src),
          static_cast<uint8_t *>(out), c.fault);
    checkLaunch("gatherKernel");
  });
}

txrt_status txrt_cuda_gather_bwd(txrt_cuda_context *ctx, int64_t site,
                                 int64_t outer, int64_t n, int64_t inner,
                                 const int32_t *ids, int64_t count,
                                 const float *dout, float *dsrc) {
  return runCuda(ctx, "txrt_cuda_gather_bwd", [&](txrt_cuda_context &c) {
    require(outer >= 0 && n >= 0 && inner >= 0 && count >= 0,
            "sizes must be non-negative");
    if (outer * n * inner > 0) {
      require(dsrc, "dsrc must not be NULL");
      check(cudaMemsetAsync(dsrc, 0, size_t(outer * n * inner) * sizeof(float),
                            c.stream),
            "cudaMemsetAsync");
    }
    const int64_t total = outer * count * inner;
    if (total == 0)
      return;
    require(ids && dout && dsrc, "ids, dout and dsrc must not be NULL");
    const KernelLaunch elements = elementLaunch(total);
    gatherBackwardKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
        outer, n, inner, ids, count, dout, dsrc, c.fault);
    checkLaunch("gatherBackwardKernel");
  });
}

} // extern "C"
