//===- LayerNormKernels.cuh - layer norm's device code ---------*- CUDA -*-===//
//
// The kernels of txrt_cuda_layer_norm_* and txrt_cuda_add_layer_norm_*
// (LayerNorm.cu launches them) and their launch geometry. Forward: a block
// per row, two passes over the row (mean, then the biased variance of the
// centred values) as txrt_layer_norm_fwd defines it, then
// y = (s - mean) * rstd * gamma + beta with s = x (+ r). Backward: a block
// per row for ds, a thread per column (rows looped, summed in double) for
// dgamma and dbeta. No CUDA header: test/unit/cuda/emulated/ runs the same
// code on the host against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_LAYERNORMKERNELS_CUH
#define TXRT_CUDA_KERNELS_LAYERNORMKERNELS_CUH

#include "BlockReduce.cuh"
#include "ColumnSums.cuh"
#include "KernelLaunch.cuh"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::layernorm {

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

/// dgamma[j] (+)= sum_i dy[i, j] * xhat[i, j], dbeta[j] (+)= sum_i dy[i, j]
/// (ColumnSums.cuh).
__global__ void layerNormBackwardParams(int64_t rows, int64_t cols, NormInput s,
                                        const float *mean, const float *var,
                                        float eps, const float *dy,
                                        float *dgamma, float *dbeta,
                                        bool accumulate) {
  columnTileSums<2>(
      rows, cols,
      [&](int64_t i, int64_t j, double(&sums)[2]) {
        float rstd = 1.0f / sqrtf(var[i] + eps);
        float d = dy[i * cols + j];
        sums[0] += double(d) * double((s(i * cols + j) - mean[i]) * rstd);
        sums[1] += d;
      },
      [&](int64_t j, const double(&totals)[2]) {
        if (dgamma)
          dgamma[j] = float(totals[0] + (accumulate ? double(dgamma[j]) : 0.0));
        if (dbeta)
          dbeta[j] = float(totals[1] + (accumulate ? double(dbeta[j]) : 0.0));
      });
}

/// layerNormForward and layerNormBackwardData: a block a row.
inline KernelLaunch rowLaunch(int64_t rows) {
  return blockPerRowLaunch(rows, kThreads);
}
/// layerNormBackwardParams: a block a tile of kColumnTile columns.
inline KernelLaunch paramsLaunch(int64_t cols) { return columnTileLaunch(cols); }

} // namespace txrt::cuda::layernorm

#endif // TXRT_CUDA_KERNELS_LAYERNORMKERNELS_CUH
