//===- Dropout.cu - inverted dropout on the CPU kernel's Philox stream ----===//
//
// One thread per Philox counter: counter b gives the keep words of elements
// 4b .. 4b+3, exactly as runtime/lib/kernels/Dropout.cpp reads them, and a
// kept element is x * (1 / (1 - p)) computed as the CPU computes it, so the
// outputs are bit-identical.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "PhiloxDevice.h"

using namespace txrt::cuda;

namespace {

/// Element i is element offset + i of the whole batch's stream
/// (txrt_cuda_context_set_batch_rows): one thread per counter of the
/// stream's [offset, offset + n), so the first and last may be partial.
__global__ void dropoutKernel(int64_t n, int64_t offset, PhiloxStream key,
                              uint32_t threshold, float keepScale,
                              const float *x, float *y) {
  const int64_t first = offset / 4;
  const int64_t counters = (offset + n + 3) / 4 - first;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       c < counters; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = first + c;
    uint32_t words[4];
    philoxWords(key, uint64_t(b), words);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      int64_t i = 4 * b + w - offset;
      if (i >= 0 && i < n)
        y[i] = words[w] >= threshold ? x[i] * keepScale : 0.0f;
    }
  }
}

txrt_status dropout(txrt_cuda_context *ctx, const char *name, int64_t site,
                    int64_t n, float p, uint64_t seed, int64_t step,
                    const float *x, float *y) {
  return runCuda(ctx, name, [&](txrt_cuda_context &c) {
    require(n >= 0, "n must be non-negative");
    require(p >= 0.0f && p < 1.0f, "p must be in [0, 1)");
    if (n == 0)
      return;
    require(x && y, "the input and output must not be NULL");
    if (p == 0.0f) {
      if (x != y)
        check(cudaMemcpyAsync(y, x, size_t(n) * sizeof(float),
                              cudaMemcpyDeviceToDevice, c.stream),
              "cudaMemcpyAsync");
      return;
    }
    const float keepScale = 1.0f / (1.0f - p);
    const int64_t offset = c.dropoutOffset(n);
    dropoutKernel<<<gridFor((offset % 4 + n + 3) / 4, 256), 256, 0,
                    c.stream>>>(n, offset, philoxStream(seed, step, site),
                                keepThreshold(p), keepScale, x, y);
    checkLaunch("dropoutKernel");
  });
}

} // namespace

extern "C" {

txrt_status txrt_cuda_dropout_fwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, float p, uint64_t seed,
                                  int64_t step, const float *x, float *y) {
  return dropout(ctx, "txrt_cuda_dropout_fwd", site, n, p, seed, step, x, y);
}

txrt_status txrt_cuda_dropout_bwd(txrt_cuda_context *ctx, int64_t fwd_site,
                                  int64_t n, float p, uint64_t seed,
                                  int64_t step, const float *dy, float *dx) {
  return dropout(ctx, "txrt_cuda_dropout_bwd", fwd_site, n, p, seed, step, dy,
                 dx);
}

} // extern "C"
