//===- RmsNormKernels.cuh - RMS norm's device code -------------*- CUDA -*-===//
//
// The kernels of txrt_cuda_rms_norm_{fwd,bwd} (RmsNorm.cu launches them)
// and their launch geometry: s = x (+ r), y = s * rstd * gamma with
// rstd = 1 / sqrt(mean(s^2) + eps), a block per row. Backward recomputes
// rstd per row (nothing is saved, as on the CPU) and leaves it for the
// dgamma kernel (a thread per column, double sums):
//   ds = rstd * g - rstd^3 * s * mean(g * s),  g = dy * gamma (+ dsum).
// No CUDA header: test/unit/cuda/emulated/ runs the same code on the host
// against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_RMSNORMKERNELS_CUH
#define TXRT_CUDA_KERNELS_RMSNORMKERNELS_CUH

#include "BlockReduce.cuh"
#include "ColumnSums.cuh"
#include "KernelLaunch.cuh"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::rmsnorm {

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

/// dgamma[j] (+)= sum_i dy[i, j] * s[i, j] * rstd[i], s = x (+ r)
/// (ColumnSums.cuh).
__global__ void rmsNormBackwardGamma(int64_t rows, int64_t cols, const float *x,
                                     const float *r, const float *dy,
                                     const float *rowRstds, float *dgamma,
                                     bool accumulate) {
  columnTileSums<1>(
      rows, cols,
      [&](int64_t i, int64_t j, double(&sums)[1]) {
        const int64_t at = i * cols + j;
        float s = x[at] + (r ? r[at] : 0.0f);
        sums[0] += double(dy[at]) * double(s * rowRstds[i]);
      },
      [&](int64_t j, const double(&totals)[1]) {
        dgamma[j] = float(totals[0] + (accumulate ? double(dgamma[j]) : 0.0));
      });
}

/// rmsNormForward and rmsNormBackwardData: a block a row.
inline KernelLaunch rowLaunch(int64_t rows) {
  return blockPerRowLaunch(rows, kThreads);
}
/// rmsNormBackwardGamma: a block a tile of kColumnTile columns.
inline KernelLaunch gammaLaunch(int64_t cols) { return columnTileLaunch(cols); }

} // namespace txrt::cuda::rmsnorm

#endif // TXRT_CUDA_KERNELS_RMSNORMKERNELS_CUH
