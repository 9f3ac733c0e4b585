//===- Gather.cu - gather along one axis and its scatter-add gradient -----===//
//
// out[o, k, :] = src[o, i, :] with i = ids[k] (n + ids[k] when negative),
// elements of 4 or 1 bytes; the gradient zeroes dsrc and adds every dout row
// into its source row with atomicAdd (not bitwise deterministic where ids
// repeat). An index outside [-n, n) is reported by the next
// txrt_cuda_synchronize, as the embedding's ids are.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"

using namespace txrt::cuda;

namespace {

template <typename T>
__global__ void gatherKernel(int64_t outer, int64_t n, int64_t inner,
                             const int32_t *ids, int64_t count, const T *src,
                             T *out, txrt_cuda_device_fault *fault) {
  const int64_t total = outer * count * inner;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % inner, k = e / inner % count, o = e / inner / count;
    int64_t i = ids[k];
    if (i < 0)
      i += n;
    if (i < 0 || i >= n) {
      if (j == 0 && o == 0)
        reportFault(fault, kGatherIndexOutOfRange, k, ids[k], n);
      out[e] = T(0);
      continue;
    }
    out[e] = src[(o * n + i) * inner + j];
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
    int64_t i = ids[k];
    if (i < 0)
      i += n;
    if (i < 0 || i >= n) {
      if (j == 0 && o == 0)
        reportFault(fault, kGatherIndexOutOfRange, k, ids[k], n);
      continue;
    }
    atomicAdd(&dsrc[(o * n + i) * inner + j], dout[e]);
  }
}

} // namespace

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
    if (element_bytes == 4)
      gatherKernel<<<gridFor(total, 256), 256, 0, c.stream>>>(
          outer, n, inner, ids, count, static_cast<const uint32_t *>(src),
          static_cast<uint32_t *>(out), c.fault);
    else
      gatherKernel<<<gridFor(total, 256), 256, 0, c.stream>>>(
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
    gatherBackwardKernel<<<gridFor(total, 256), 256, 0, c.stream>>>(
        outer, n, inner, ids, count, dout, dsrc, c.fault);
    checkLaunch("gatherBackwardKernel");
  });
}

} // extern "C"
