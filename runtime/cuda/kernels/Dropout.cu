//===- Dropout.cu - inverted dropout on the CPU kernel's Philox stream ----===//
//
// The host side of DropoutKernels.cuh: checks, a copy when p = 0, the
// key and threshold of the site's Philox stream, and the launch.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "DropoutKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::dropout;

namespace {

txrt_status runDropout(txrt_cuda_context *ctx, const char *name, int64_t site,
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
    const int64_t offset = c.dropoutOffset(n);
    const KernelLaunch counters = counterLaunch(n, offset);
    PhiloxSource source = hostPhilox(seed, step, site);
    source.state = capturedTrainState(c, seed, step);
    dropoutKernel<<<counters.blocks, counters.threads, 0, c.stream>>>(
        n, offset, source, keepThreshold(p), keepScaleOf(p), x, y);
    checkLaunch("dropoutKernel");
  });
}

} // namespace

extern "C" {

txrt_status txrt_cuda_dropout_fwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, float p, uint64_t seed,
                                  int64_t step, const float *x, float *y) {
  return runDropout(ctx, "txrt_cuda_dropout_fwd", site, n, p, seed, step, x, y);
}

txrt_status txrt_cuda_dropout_bwd(txrt_cuda_context *ctx, int64_t fwd_site,
                                  int64_t n, float p, uint64_t seed,
                                  int64_t step, const float *dy, float *dx) {
  return runDropout(ctx, "txrt_cuda_dropout_bwd", fwd_site, n, p, seed, step,
                    dy, dx);
}

} // extern "C"
