//===- LayerNorm.cu - layer norm and residual add + layer norm ------------===//
//
// The host side: checks, then the launches of LayerNormKernels.cuh's
// kernels. Backward reads s from `sum` or recomputes it as x + r, reads or
// recomputes mean and var as the CPU kernels do, and leaves them in the
// context's workspace for the dgamma / dbeta kernel.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "LayerNormKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::layernorm;

namespace {

void forward(txrt_cuda_context &c, int64_t rows, int64_t cols, const float *x,
             const float *r, const float *gamma, const float *beta, float eps,
             float *y, float *outSum, float *mean, float *var) {
  require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
  require(eps >= 0.0f, "eps must be non-negative");
  if (rows == 0 || cols == 0)
    return;
  require(x && y, "x and y must not be NULL");
  require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
  const KernelLaunch rowsLaunch = rowLaunch(rows);
  layerNormForward<<<rowsLaunch.blocks, rowsLaunch.threads, 0, c.stream>>>(
      cols, x, r, gamma, beta, eps, y, outSum, mean, var);
  checkLaunch("layerNormForward");
}

void backward(txrt_cuda_context &c, int64_t rows, int64_t cols, NormInput s,
              const float *gamma, const float *mean, const float *var,
              float eps, const float *dy, const float *dsum, float *dx,
              float *dgamma, float *dbeta, int32_t accumulateDx,
              int32_t accumulateParams) {
  require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
  require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
  require(gamma || !dgamma, "dgamma needs gamma (the forward had no scale)");
  if (cols == 0)
    return;
  if (rows == 0) {
    // Zero rows: zero parameter gradients unless accumulating.
    if (!accumulateParams) {
      if (dgamma)
        check(cudaMemsetAsync(dgamma, 0, cols * sizeof(float), c.stream),
              "cudaMemsetAsync");
      if (dbeta)
        check(cudaMemsetAsync(dbeta, 0, cols * sizeof(float), c.stream),
              "cudaMemsetAsync");
    }
    return;
  }
  require((s.sum || s.x) && dy && dx, "the input, dy and dx must not be NULL");
  require((mean == nullptr) == (var == nullptr),
          "mean and var must both be given or both be NULL");
  require(2 * size_t(rows) * sizeof(float) <= c.workspaceBytes,
          "too many rows for the workspace's row statistics");
  float *rowMean = static_cast<float *>(c.workspace), *rowVar = rowMean + rows;
  const KernelLaunch rowsLaunch = rowLaunch(rows);
  layerNormBackwardData<<<rowsLaunch.blocks, rowsLaunch.threads, 0, c.stream>>>(
      cols, s, gamma, mean, var, eps, dy, dsum, dx, accumulateDx != 0, rowMean,
      rowVar);
  checkLaunch("layerNormBackwardData");
  if (dgamma || dbeta) {
    const KernelLaunch columns = paramsLaunch(cols);
    layerNormBackwardParams<<<columns.blocks, columns.threads, 0, c.stream>>>(
        rows, cols, s, rowMean, rowVar, eps, dy, dgamma, dbeta,
        accumulateParams != 0);
    checkLaunch("layerNormBackwardParams");
  }
}

} // namespace

extern "C" {

txrt_status txrt_cuda_layer_norm_fwd(txrt_cuda_context *ctx, int64_t site,
                                     int64_t rows, int64_t cols, const float *x,
                                     const float *gamma, const float *beta,
                                     float eps, float *y, float *mean,
                                     float *var) {
  return runCuda(ctx, "txrt_cuda_layer_norm_fwd", [&](txrt_cuda_context &c) {
    forward(c, rows, cols, x, nullptr, gamma, beta, eps, y, nullptr, mean, var);
  });
}

txrt_status txrt_cuda_layer_norm_bwd(txrt_cuda_context *ctx, int64_t site,
                                     int64_t rows, int64_t cols, const float *x,
                                     const float *gamma, const float *mean,
                                     const float *var, float eps,
                                     const float *dy, float *dx, float *dgamma,
                                     float *dbeta, int32_t accumulate_dx,
                                     int32_t accumulate_params) {
  return runCuda(ctx, "txrt_cuda_layer_norm_bwd", [&](txrt_cuda_context &c) {
    backward(c, rows, cols, NormInput{nullptr, x, nullptr}, gamma, mean, var,
             eps, dy, nullptr, dx, dgamma, dbeta, accumulate_dx,
             accumulate_params);
  });
}

txrt_status txrt_cuda_add_layer_norm_fwd(txrt_cuda_context *ctx, int64_t site,
                                         int64_t rows, int64_t cols,
                                         const float *x, const float *r,
                                         const float *gamma, const float *beta,
                                         float eps, float *y, float *out_sum,
                                         float *mean, float *var) {
  return runCuda(
      ctx, "txrt_cuda_add_layer_norm_fwd", [&](txrt_cuda_context &c) {
        require(rows == 0 || cols == 0 || (r && gamma),
                "r and gamma must not be NULL");
        forward(c, rows, cols, x, r, gamma, beta, eps, y, out_sum, mean, var);
      });
}

txrt_status txrt_cuda_add_layer_norm_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *sum, const float *gamma,
    const float *mean, const float *var, float eps, const float *dy,
    const float *dsum, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params) {
  return runCuda(
      ctx, "txrt_cuda_add_layer_norm_bwd", [&](txrt_cuda_context &c) {
        require(rows == 0 || cols == 0 || sum || (x && r),
                "x and r must not be NULL without sum");
        backward(c, rows, cols, NormInput{sum, x, r}, gamma, mean, var, eps, dy,
                 dsum, dx, dgamma, dbeta, accumulate_dx, accumulate_params);
      });
}

} // extern "C"
