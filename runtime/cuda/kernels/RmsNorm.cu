//===- RmsNorm.cu - RMS norm, optionally after a residual add -------------===//
//
// The host side of RmsNormKernels.cuh: checks and the launches; the
// backward's per-row rstd goes through the context's workspace.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "RmsNormKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::rmsnorm;

extern "C" {

txrt_status txrt_cuda_rms_norm_fwd(txrt_cuda_context *ctx, int64_t site,
                                   int64_t rows, int64_t cols, const float *x,
                                   const float *r, const float *gamma,
                                   float eps, float *y, float *out_sum) {
  return runCuda(ctx, "txrt_cuda_rms_norm_fwd", [&](txrt_cuda_context &c) {
    require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
    require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
    require(!out_sum || r, "out_sum needs r");
    if (rows == 0 || cols == 0)
      return;
    require(x && gamma && y, "x, gamma and y must not be NULL");
    const KernelLaunch perRow = rowLaunch(rows);
    rmsNormForward<<<perRow.blocks, perRow.threads, 0, c.stream>>>(
        cols, x, r, gamma, eps, y, out_sum);
    checkLaunch("rmsNormForward");
  });
}

txrt_status txrt_cuda_rms_norm_bwd(txrt_cuda_context *ctx, int64_t site,
                                   int64_t rows, int64_t cols, const float *x,
                                   const float *r, const float *gamma,
                                   float eps, const float *dy,
                                   const float *dsum, float *dx, float *dgamma,
                                   int32_t accumulate_dx,
                                   int32_t accumulate_params) {
  return runCuda(ctx, "txrt_cuda_rms_norm_bwd", [&](txrt_cuda_context &c) {
    require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
    require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
    if (cols == 0)
      return;
    if (rows == 0) {
      if (dgamma && !accumulate_params)
        check(
            cudaMemsetAsync(dgamma, 0, size_t(cols) * sizeof(float), c.stream),
            "cudaMemsetAsync");
      return;
    }
    require(x && gamma && dy && dx, "x, gamma, dy and dx must not be NULL");
    require(size_t(rows) * sizeof(float) <= c.workspaceBytes,
            "too many rows for the workspace's row statistics");
    float *rowRstds = static_cast<float *>(c.workspace);
    const KernelLaunch perRow = rowLaunch(rows);
    rmsNormBackwardData<<<perRow.blocks, perRow.threads, 0, c.stream>>>(
        cols, x, r, gamma, eps, dy, dsum, dx, accumulate_dx != 0, rowRstds);
    checkLaunch("rmsNormBackwardData");
    if (dgamma) {
      const KernelLaunch columns = gammaLaunch(cols);
      rmsNormBackwardGamma<<<columns.blocks, columns.threads, 0, c.stream>>>(
          rows, cols, x, r, dy, rowRstds, dgamma, accumulate_params != 0);
      checkLaunch("rmsNormBackwardGamma");
    }
  });
}

} // extern "C"
