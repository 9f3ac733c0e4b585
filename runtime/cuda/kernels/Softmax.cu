//===- Softmax.cu - softmax, log-softmax and the sum of squares -----------===//
//
// Softmax and log-softmax over the last dimension, one block per row (max,
// then the sum of exp(x - max)), and their backward from the output y as
// txrt_softmax_bwd defines it. txrt_cuda_sum_squares adds sum x^2 (in
// double) to an accumulator on the device: the gradient norm of clipping.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "CudaContext.h"

#include <cmath>

using namespace txrt::cuda;

namespace {

constexpr int kThreads = 256;

__global__ void softmaxForward(int64_t cols, const float *x, float *y,
                               bool logSoftmax) {
  const float *xr = x + blockIdx.x * cols;
  float *yr = y + blockIdx.x * cols;
  float maximum = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    maximum = fmaxf(maximum, xr[j]);
  maximum = blockMax(maximum);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    sum += expf(xr[j] - maximum);
  sum = blockSum(sum);
  const float logSum = logf(sum);
  // y may alias x: each element is read, then written, by one thread.
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    yr[j] = logSoftmax ? xr[j] - maximum - logSum
                       : expf(xr[j] - maximum) / sum;
}

__global__ void softmaxBackward(int64_t cols, const float *y, const float *dy,
                                float *dx, bool logSoftmax) {
  const int64_t offset = blockIdx.x * cols;
  float partial = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    partial += logSoftmax ? dy[offset + j] : dy[offset + j] * y[offset + j];
  const float total = blockSum(partial);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const int64_t at = offset + j;
    dx[at] = logSoftmax ? dy[at] - expf(y[at]) * total
                        : y[at] * (dy[at] - total);
  }
}

__global__ void sumSquaresKernel(int64_t n, const float *x,
                                 float *accumulator) {
  double partial = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    partial += double(x[i]) * double(x[i]);
  const double total = blockSum(partial);
  if (threadIdx.x == 0)
    accumulator[0] = float(double(accumulator[0]) + total);
}

void checkRows(int64_t rows, int64_t cols, int32_t logSoftmax) {
  require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
  require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
  require(logSoftmax == 0 || logSoftmax == 1, "log_softmax must be 0 or 1");
}

} // namespace

extern "C" {

txrt_status txrt_cuda_softmax_fwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t rows, int64_t cols, const float *x,
                                  float *y, int32_t log_softmax) {
  return runCuda(ctx, "txrt_cuda_softmax_fwd", [&](txrt_cuda_context &c) {
    checkRows(rows, cols, log_softmax);
    if (rows == 0 || cols == 0)
      return;
    require(x && y, "x and y must not be NULL");
    softmaxForward<<<unsigned(rows), kThreads, 0, c.stream>>>(cols, x, y,
                                                              log_softmax);
    checkLaunch("softmaxForward");
  });
}

txrt_status txrt_cuda_softmax_bwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t rows, int64_t cols, const float *y,
                                  const float *dy, float *dx,
                                  int32_t log_softmax) {
  return runCuda(ctx, "txrt_cuda_softmax_bwd", [&](txrt_cuda_context &c) {
    checkRows(rows, cols, log_softmax);
    if (rows == 0 || cols == 0)
      return;
    require(y && dy && dx, "y, dy and dx must not be NULL");
    softmaxBackward<<<unsigned(rows), kThreads, 0, c.stream>>>(cols, y, dy, dx,
                                                               log_softmax);
    checkLaunch("softmaxBackward");
  });
}

txrt_status txrt_cuda_sum_squares(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, const float *x,
                                  float *accumulator) {
  return runCuda(ctx, "txrt_cuda_sum_squares", [&](txrt_cuda_context &c) {
    require(n >= 0, "n must be non-negative");
    require(accumulator, "accumulator must not be NULL");
    if (n == 0)
      return;
    require(x, "x must not be NULL");
    sumSquaresKernel<<<1, 1024, 0, c.stream>>>(n, x, accumulator);
    checkLaunch("sumSquaresKernel");
  });
}

} // extern "C"
