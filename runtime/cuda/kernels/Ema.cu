//===- Ema.cu - train --ema's update of the weight average ----------------===//
//
// The host side of EmaKernels.cuh: txrt_cuda_update_average's checks and
// launch on the context's stream (no synchronization: it can be captured).
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "EmaKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::ema;

extern "C" {

txrt_status txrt_cuda_update_average(txrt_cuda_context *ctx, float *average,
                                     const float *params, int64_t n,
                                     float decay) {
  return runCuda(ctx, "txrt_cuda_update_average", [&](txrt_cuda_context &c) {
    require(n >= 0, "n must be non-negative");
    // [0, 1]: a decay in (0, 1) just below 1 rounds to 1.0f, which the
    // host's update takes too (the average then stays as it is).
    require(decay >= 0.0f && decay <= 1.0f, "decay must be in [0, 1]");
    if (n == 0)
      return;
    require(average && params, "average and params must not be NULL");
    const KernelLaunch elements = updateAverageLaunch(n);
    updateAverageKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
        average, params, n, decay);
    checkLaunch("updateAverageKernel");
  });
}

} // extern "C"
