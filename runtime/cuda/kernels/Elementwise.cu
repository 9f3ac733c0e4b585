//===- Elementwise.cu - GEMM epilogues and column sums --------------------===//
//
// The host side of ElementwiseKernels.cuh: the launchers of Kernels.h
// (the GEMM epilogues and the bias gradient, Linear.cpp's) and
// txrt_cuda_activation_{fwd,bwd} with their checks.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "ElementwiseKernels.cuh"
#include "Kernels.h"

using namespace txrt::cuda::elementwise;

namespace {

void requireActivation(int64_t n, int32_t activation) {
  txrt::cuda::require(n >= 0, "n must be non-negative");
  txrt::cuda::require(activation >= TXRT_ACTIVATION_NONE &&
                          activation <= TXRT_ACTIVATION_SILU,
                      "unknown activation");
}

} // namespace

void txrt::cuda::launchStridedEpilogue(cudaStream_t stream, int64_t batch0,
                                       int64_t batch1, int64_t m, int64_t n,
                                       const float *product, float *c,
                                       const int64_t *cStrides,
                                       const float *bias, int32_t activation,
                                       const float *residual, float beta) {
  const int64_t total = batch0 * batch1 * m * n;
  if (total == 0)
    return;
  Strides4 strides = {{cStrides[0], cStrides[1], cStrides[2], cStrides[3]}};
  const KernelLaunch elements = elementLaunch(total);
  stridedEpilogueKernel<<<elements.blocks, elements.threads, 0, stream>>>(
      batch1, m, n, total, product, c, strides, bias, activation, residual,
      beta);
  checkLaunch("stridedEpilogueKernel");
}

void txrt::cuda::launchEpilogue(cudaStream_t stream, int64_t rows, int64_t cols,
                                float *y, const float *bias, int32_t activation,
                                const float *gate, const float *residual) {
  if (rows * cols == 0)
    return;
  const KernelLaunch elements = elementLaunch(rows * cols);
  epilogueKernel<<<elements.blocks, elements.threads, 0, stream>>>(
      rows, cols, y, bias, activation, gate, residual);
  checkLaunch("epilogueKernel");
}

void txrt::cuda::launchColumnSum(cudaStream_t stream, int64_t rows,
                                 int64_t cols, const float *x, float *out,
                                 bool accumulate) {
  if (cols == 0)
    return;
  const KernelLaunch columns = columnLaunch(cols);
  columnSumKernel<<<columns.blocks, columns.threads, 0, stream>>>(
      rows, cols, x, out, accumulate);
  checkLaunch("columnSumKernel");
}

extern "C" {

txrt_status txrt_cuda_activation_fwd(txrt_cuda_context *ctx, int64_t site,
                                     int32_t activation, int64_t n,
                                     const float *x, float *y) {
  return txrt::cuda::runCuda(
      ctx, "txrt_cuda_activation_fwd", [&](txrt_cuda_context &c) {
        requireActivation(n, activation);
        if (n == 0)
          return;
        txrt::cuda::require(x && y, "x and y must not be NULL");
        const txrt::cuda::KernelLaunch elements = elementLaunch(n);
        activationForward<<<elements.blocks, elements.threads, 0, c.stream>>>(
            n, activation, x, y);
        txrt::cuda::checkLaunch("activationForward");
      });
}

txrt_status txrt_cuda_activation_bwd(txrt_cuda_context *ctx, int64_t site,
                                     int32_t activation, int64_t n,
                                     const float *x, const float *dy,
                                     float *dx) {
  return txrt::cuda::runCuda(
      ctx, "txrt_cuda_activation_bwd", [&](txrt_cuda_context &c) {
        requireActivation(n, activation);
        if (n == 0)
          return;
        txrt::cuda::require(x && dy && dx, "x, dy and dx must not be NULL");
        const txrt::cuda::KernelLaunch elements = elementLaunch(n);
        activationBackward<<<elements.blocks, elements.threads, 0, c.stream>>>(
            n, activation, x, dy, dx);
        txrt::cuda::checkLaunch("activationBackward");
      });
}

} // extern "C"
