//===- RmsNorm.cu - RMS norm, optionally after a residual add -------------===//
//
// s = x (+ r), y = s * rstd * gamma with rstd = 1 / sqrt(mean(s^2) + eps),
// one block per row. Backward recomputes rstd per row (nothing is saved, as
// on the CPU) and writes it to the context's workspace for the dgamma
// kernel (one thread per column, double sums):
//   ds = rstd * g - rstd^3 * s * mean(g * s),  g = dy * gamma (+ dsum).
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "CudaContext.h"

using namespace txrt::cuda;

namespace {

constexpr int kThreads = 256;

__device__ float rowRstd(int64_t cols, const float *x, const float *r,
                         float eps) {
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float s = x[j] + (r ? r[j] : 0.0f);
    squares += s * s;
  }
  return 1.0f / sqrtf(blockSum(squares) / float(cols) + eps);
}

__global__ void rmsNormForward(int64_t cols, const float *x, const float *r,
                               const float *gamma, float eps, float *y,
                               float *outSum) {
  const int64_t offset = blockIdx.x * cols;
  const float rstd = rowRstd(cols, x + offset, r ? r + offset : nullptr, eps);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const int64_t at = offset + j;
    float s = x[at] + (r ? r[at] : 0.0f);
    if (outSum)
      outSum[at] = s;
    y[at] = s * rstd * gamma[j];
  }
}

__global__ void rmsNormBackwardData(int64_t cols, const float *x,
                                    const float *r, const float *gamma,
                                    float eps, const float *dy,
                                    const float *dsum, float *dx,
                                    bool accumulate, float *rowRstds) {
  const int64_t offset = blockIdx.x * cols;
  const float rstd = rowRstd(cols, x + offset, r ? r + offset : nullptr, eps);
  float partial = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const int64_t at = offset + j;
    partial += dy[at] * gamma[j] * (x[at] + (r ? r[at] : 0.0f));
  }
  const float meanGS = blockSum(partial) / float(cols);
  if (threadIdx.x == 0)
    rowRstds[blockIdx.x] = rstd;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const int64_t at = offset + j;
    float s = x[at] + (r ? r[at] : 0.0f);
    float value = rstd * dy[at] * gamma[j] - rstd * rstd * rstd * s * meanGS;
    if (dsum)
      value += dsum[at];
    dx[at] = accumulate ? dx[at] + value : value;
  }
}

__global__ void rmsNormBackwardGamma(int64_t rows, int64_t cols,
                                     const float *x, const float *r,
                                     const float *dy, const float *rowRstds,
                                     float *dgamma, bool accumulate) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < cols;
       j += int64_t(gridDim.x) * blockDim.x) {
    double sum = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t at = i * cols + j;
      float s = x[at] + (r ? r[at] : 0.0f);
      sum += double(dy[at]) * double(s * rowRstds[i]);
    }
    dgamma[j] = float(sum + (accumulate ? double(dgamma[j]) : 0.0));
  }
}

} // namespace

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
    rmsNormForward<<<unsigned(rows), kThreads, 0, c.stream>>>(
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
        check(cudaMemsetAsync(dgamma, 0, size_t(cols) * sizeof(float),
                              c.stream),
              "cudaMemsetAsync");
      return;
    }
    require(x && gamma && dy && dx, "x, gamma, dy and dx must not be NULL");
    require(size_t(rows) * sizeof(float) <= c.workspaceBytes,
            "too many rows for the workspace's row statistics");
    float *rowRstds = static_cast<float *>(c.workspace);
    rmsNormBackwardData<<<unsigned(rows), kThreads, 0, c.stream>>>(
        cols, x, r, gamma, eps, dy, dsum, dx, accumulate_dx != 0, rowRstds);
    checkLaunch("rmsNormBackwardData");
    if (dgamma) {
      rmsNormBackwardGamma<<<gridFor(cols, 128), 128, 0, c.stream>>>(
          rows, cols, x, r, dy, rowRstds, dgamma, accumulate_params != 0);
      checkLaunch("rmsNormBackwardGamma");
    }
  });
}

} // extern "C"
