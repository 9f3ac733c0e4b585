//===- Softmax.cu - softmax, log-softmax and the sum of squares -----------===//
//
// The host side of SoftmaxKernels.cuh: checks and the launches of softmax,
// log-softmax, their backward, and txrt_cuda_sum_squares (the gradient
// norm of clipping, accumulated on the device).
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "SoftmaxKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::softmax;

namespace {

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
    const KernelLaunch perRow = rowLaunch(rows);
    softmaxForward<<<perRow.blocks, perRow.threads, 0, c.stream>>>(cols, x, y,
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
    const KernelLaunch perRow = rowLaunch(rows);
    softmaxBackward<<<perRow.blocks, perRow.threads, 0, c.stream>>>(
        cols, y, dy, dx, log_softmax);
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
    const KernelLaunch all = sumSquaresLaunch();
    sumSquaresKernel<<<all.blocks, all.threads, 0, c.stream>>>(n, x,
                                                               accumulator);
    checkLaunch("sumSquaresKernel");
  });
}

} // extern "C"
