//===- Elementwise.cu - GEMM epilogues and column sums ---------------------===//
//
// What cuBLASLt's epilogues do not compute as the CPU kernels define it:
// exact (erf) GELU and SiLU, a residual added after an activation, and the
// bias gradient (a column sum, accumulated in double).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "CudaContext.h"

#include "txrt/txrt.h"

namespace {

__device__ float activate(float x, int32_t activation) {
  switch (activation) {
  case TXRT_ACTIVATION_RELU:
    return x > 0.0f ? x : 0.0f;
  case TXRT_ACTIVATION_GELU:
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  case TXRT_ACTIVATION_GELU_TANH: {
    float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
  }
  case TXRT_ACTIVATION_SILU:
    return x / (1.0f + expf(-x));
  default:
    return x;
  }
}

__global__ void epilogueKernel(int64_t rows, int64_t cols, float *y,
                               const float *bias, int32_t activation,
                               const float *residual) {
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    float value = y[i];
    if (bias)
      value += bias[i % cols];
    value = activate(value, activation);
    if (residual)
      value += residual[i];
    y[i] = value;
  }
}

__global__ void columnSumKernel(int64_t rows, int64_t cols, const float *x,
                                float *out, bool accumulate) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < cols;
       j += int64_t(gridDim.x) * blockDim.x) {
    double sum = 0.0;
    for (int64_t i = 0; i < rows; ++i)
      sum += x[i * cols + j];
    out[j] = float(sum + (accumulate ? double(out[j]) : 0.0));
  }
}

} // namespace

void txrt::cuda::launchEpilogue(cudaStream_t stream, int64_t rows,
                                int64_t cols, float *y, const float *bias,
                                int32_t activation, const float *residual) {
  if (rows * cols == 0)
    return;
  epilogueKernel<<<gridFor(rows * cols, 256), 256, 0, stream>>>(
      rows, cols, y, bias, activation, residual);
  checkLaunch("epilogueKernel");
}

void txrt::cuda::launchColumnSum(cudaStream_t stream, int64_t rows,
                                 int64_t cols, const float *x, float *out,
                                 bool accumulate) {
  if (cols == 0)
    return;
  columnSumKernel<<<gridFor(cols, 128), 128, 0, stream>>>(rows, cols, x, out,
                                                           accumulate);
  checkLaunch("columnSumKernel");
}
