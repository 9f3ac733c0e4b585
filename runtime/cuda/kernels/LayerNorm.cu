//===- LayerNorm.cu - layer norm and residual add + layer norm -------------===//
//
// Forward: one block per row, two passes over the row (mean, then the biased
// variance of the centred values) as txrt_layer_norm_fwd defines it, then
// y = (s - mean) * rstd * gamma + beta with s = x (+ r). Backward: one block
// per row for ds (s read from `sum` or recomputed as x + r; mean and var
// read or recomputed, as the CPU kernels do, and left in the context's
// workspace), one thread per column (rows looped, summed in double) for
// dgamma and dbeta.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "CudaContext.h"

using namespace txrt::cuda;

namespace {

constexpr int kThreads = 256;

/// s = x + r (r may be NULL); writes out_sum when given.
__global__ void layerNormForward(int64_t cols, const float *x, const float *r,
                                 const float *gamma, const float *beta,
                                 float eps, float *y, float *outSum,
                                 float *mean, float *var) {
  const int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  const float *rr = r ? r + row * cols : nullptr;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    sum += xr[j] + (rr ? rr[j] : 0.0f);
  const float mu = blockSum(sum) / float(cols);
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float d = xr[j] + (rr ? rr[j] : 0.0f) - mu;
    squares += d * d;
  }
  const float sigma2 = blockSum(squares) / float(cols);
  const float rstd = 1.0f / sqrtf(sigma2 + eps);
  if (threadIdx.x == 0) {
    if (mean)
      mean[row] = mu;
    if (var)
      var[row] = sigma2;
  }
  // y may alias x or r: each element is read and written by one thread.
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float s = xr[j] + (rr ? rr[j] : 0.0f);
    if (outSum)
      outSum[row * cols + j] = s;
    float value = (s - mu) * rstd;
    if (gamma)
      value *= gamma[j];
    if (beta)
      value += beta[j];
    y[row * cols + j] = value;
  }
}

/// The normalised input s = sum, or x + r (r may be NULL), at `at`.
struct NormInput {
  const float *sum, *x, *r;
  __device__ float operator()(int64_t at) const {
    return sum ? sum[at] : x[at] + (r ? r[at] : 0.0f);
  }
};

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) + dsum, g = dy * gamma.
/// Writes the row's mean and var to rowMean / rowVar for the dgamma kernel.
__global__ void layerNormBackwardData(int64_t cols, NormInput s,
                                      const float *gamma, const float *mean,
                                      const float *var, float eps,
                                      const float *dy, const float *dsum,
                                      float *dx, bool accumulate,
                                      float *rowMean, float *rowVar) {
  const int64_t row = blockIdx.x;
  const int64_t offset = row * cols;
  float mu, sigma2;
  if (mean && var) {
    mu = mean[row];
    sigma2 = var[row];
  } else {
    float total = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      total += s(offset + j);
    mu = blockSum(total) / float(cols);
    float squares = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      float d = s(offset + j) - mu;
      squares += d * d;
    }
    sigma2 = blockSum(squares) / float(cols);
  }
  if (threadIdx.x == 0) {
    rowMean[row] = mu;
    rowVar[row] = sigma2;
  }
  const float rstd = 1.0f / sqrtf(sigma2 + eps);
  const float *dyr = dy + offset;
  float sumG = 0.0f, sumGX = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float g = dyr[j] * (gamma ? gamma[j] : 1.0f);
    sumG += g;
    sumGX += g * (s(offset + j) - mu) * rstd;
  }
  const float meanG = blockSum(sumG) / float(cols);
  const float meanGX = blockSum(sumGX) / float(cols);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const int64_t at = row * cols + j;
    float g = dyr[j] * (gamma ? gamma[j] : 1.0f);
    float xhat = (s(at) - mu) * rstd;
    float value = rstd * (g - meanG - xhat * meanGX);
    if (dsum)
      value += dsum[at];
    dx[at] = accumulate ? dx[at] + value : value;
  }
}

__global__ void layerNormBackwardParams(int64_t rows, int64_t cols,
                                        NormInput s, const float *mean,
                                        const float *var, float eps,
                                        const float *dy, float *dgamma,
                                        float *dbeta, bool accumulate) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < cols;
       j += int64_t(gridDim.x) * blockDim.x) {
    double sumGamma = 0.0, sumBeta = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      float rstd = 1.0f / sqrtf(var[i] + eps);
      float d = dy[i * cols + j];
      sumGamma += double(d) * double((s(i * cols + j) - mean[i]) * rstd);
      sumBeta += d;
    }
    if (dgamma)
      dgamma[j] = float(sumGamma + (accumulate ? double(dgamma[j]) : 0.0));
    if (dbeta)
      dbeta[j] = float(sumBeta + (accumulate ? double(dbeta[j]) : 0.0));
  }
}

void forward(txrt_cuda_context &c, int64_t rows, int64_t cols, const float *x,
             const float *r, const float *gamma, const float *beta, float eps,
             float *y, float *outSum, float *mean, float *var) {
  require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
  require(eps >= 0.0f, "eps must be non-negative");
  if (rows == 0 || cols == 0)
    return;
  require(x && y, "x and y must not be NULL");
  require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
  layerNormForward<<<unsigned(rows), kThreads, 0, c.stream>>>(
      cols, x, r, gamma, beta, eps, y, outSum, mean, var);
  checkLaunch("layerNormForward");
}

void backward(txrt_cuda_context &c, int64_t rows, int64_t cols,
              NormInput s, const float *gamma, const float *mean,
              const float *var, float eps, const float *dy, const float *dsum,
              float *dx, float *dgamma, float *dbeta, int32_t accumulateDx,
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
  layerNormBackwardData<<<unsigned(rows), kThreads, 0, c.stream>>>(
      cols, s, gamma, mean, var, eps, dy, dsum, dx, accumulateDx != 0, rowMean,
      rowVar);
  checkLaunch("layerNormBackwardData");
  if (dgamma || dbeta) {
    layerNormBackwardParams<<<gridFor(cols, 128), 128, 0, c.stream>>>(
        rows, cols, s, rowMean, rowVar, eps, dy, dgamma, dbeta,
        accumulateParams != 0);
    checkLaunch("layerNormBackwardParams");
  }
}

} // namespace

extern "C" {

txrt_status txrt_cuda_layer_norm_fwd(txrt_cuda_context *ctx, int64_t site,
                                     int64_t rows, int64_t cols,
                                     const float *x, const float *gamma,
                                     const float *beta, float eps, float *y,
                                     float *mean, float *var) {
  return runCuda(ctx, "txrt_cuda_layer_norm_fwd", [&](txrt_cuda_context &c) {
    forward(c, rows, cols, x, nullptr, gamma, beta, eps, y, nullptr, mean,
            var);
  });
}

txrt_status txrt_cuda_layer_norm_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *gamma, const float *mean, const float *var,
    float eps, const float *dy, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params) {
  return runCuda(ctx, "txrt_cuda_layer_norm_bwd", [&](txrt_cuda_context &c) {
    backward(c, rows, cols, NormInput{nullptr, x, nullptr}, gamma, mean, var,
             eps, dy, nullptr, dx, dgamma, dbeta, accumulate_dx,
             accumulate_params);
  });
}

txrt_status txrt_cuda_add_layer_norm_fwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *gamma, const float *beta,
    float eps, float *y, float *out_sum, float *mean, float *var) {
  return runCuda(ctx, "txrt_cuda_add_layer_norm_fwd",
                 [&](txrt_cuda_context &c) {
                   require(rows == 0 || cols == 0 || (r && gamma),
                           "r and gamma must not be NULL");
                   forward(c, rows, cols, x, r, gamma, beta, eps, y, out_sum,
                           mean, var);
                 });
}

txrt_status txrt_cuda_add_layer_norm_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *sum, const float *gamma,
    const float *mean, const float *var, float eps, const float *dy,
    const float *dsum, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params) {
  return runCuda(ctx, "txrt_cuda_add_layer_norm_bwd",
                 [&](txrt_cuda_context &c) {
                   require(rows == 0 || cols == 0 || sum || (x && r),
                           "x and r must not be NULL without sum");
                   backward(c, rows, cols, NormInput{sum, x, r}, gamma, mean,
                            var, eps, dy, dsum, dx, dgamma, dbeta,
                            accumulate_dx, accumulate_params);
                 });
}

} // extern "C"
