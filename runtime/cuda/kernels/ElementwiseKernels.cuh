//===- ElementwiseKernels.cuh - elementwise device code --------*- CUDA -*-===//
//
// The kernels of Elementwise.cu and their launch geometry: what cuBLASLt's
// epilogues do not compute as the CPU kernels define it (GELU in erf and
// tanh forms, SiLU, a gate, a residual added after the activation, the
// strided matmul epilogue with beta), the bias gradient (a column sum in
// double), and txrt_cuda_activation_{fwd,bwd} (relu'(0) = 0, as oneDNN's).
// No CUDA header: test/unit/cuda/emulated/ runs the same code on the host
// against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ELEMENTWISEKERNELS_CUH
#define TXRT_CUDA_KERNELS_ELEMENTWISEKERNELS_CUH

#include "ColumnSums.cuh"
#include "KernelLaunch.cuh"

#include "txrt/txrt.h"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::elementwise {

__device__ float activate(float x, int32_t activation) {
  switch (activation) {
  case TXRT_ACTIVATION_RELU:
    // torch.relu: NaN and -0 stay.
    return x < 0.0f ? 0.0f : x;
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

__device__ float activationDerivative(float x, int32_t activation) {
  switch (activation) {
  case TXRT_ACTIVATION_RELU:
    return x > 0.0f ? 1.0f : 0.0f;
  case TXRT_ACTIVATION_GELU: {
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    float pdf = 0.3989422804014327f * expf(-0.5f * x * x);
    return cdf + x * pdf;
  }
  case TXRT_ACTIVATION_GELU_TANH: {
    const float k = 0.7978845608028654f;
    float inner = k * (x + 0.044715f * x * x * x);
    float t = tanhf(inner);
    return 0.5f * (1.0f + t) +
           0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * x * x);
  }
  case TXRT_ACTIVATION_SILU: {
    float s = 1.0f / (1.0f + expf(-x));
    return s * (1.0f + x * (1.0f - s));
  }
  default:
    return 1.0f;
  }
}

__global__ void activationForward(int64_t n, int32_t activation, const float *x,
                                  float *y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] = activate(x[i], activation);
}

__global__ void activationBackward(int64_t n, int32_t activation,
                                   const float *x, const float *dy, float *dx) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    // relu selects, as PyTorch's threshold_backward (and the CPU kernel):
    // an infinite dy where x <= 0 gives 0, not inf * 0.
    dx[i] = activation == TXRT_ACTIVATION_RELU
                ? (x[i] <= 0.0f ? 0.0f : dy[i])
                : dy[i] * activationDerivative(x[i], activation);
}

__global__ void epilogueKernel(int64_t rows, int64_t cols, float *y,
                               const float *bias, int32_t activation,
                               const float *gate, const float *residual) {
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    float value = y[i];
    if (bias)
      value += bias[i % cols];
    value = activate(value, activation);
    if (gate)
      value *= gate[i];
    if (residual)
      value += residual[i];
    y[i] = value;
  }
}

/// out[j] (+)= sum over rows of x[i, j] (ColumnSums.cuh).
__global__ void columnSumKernel(int64_t rows, int64_t cols, const float *x,
                                float *out, bool accumulate) {
  columnTileSums<1>(
      rows, cols,
      [&](int64_t i, int64_t j, double(&sums)[1]) { sums[0] += x[i * cols + j]; },
      [&](int64_t j, const double(&totals)[1]) {
        out[j] = float(totals[0] + (accumulate ? double(out[j]) : 0.0));
      });
}

struct Strides4 {
  int64_t s[4];
};

__global__ void stridedEpilogueKernel(int64_t batch1, int64_t m, int64_t n,
                                      int64_t total, const float *product,
                                      float *c, Strides4 cs, const float *bias,
                                      int32_t activation, const float *residual,
                                      float beta) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % n, i = e / n % m, i1 = e / n / m % batch1,
                  i0 = e / n / m / batch1;
    const int64_t at = i0 * cs.s[0] + i1 * cs.s[1] + i * cs.s[2] + j * cs.s[3];
    float value = product[e];
    if (bias)
      value += bias[j];
    value = activate(value, activation);
    if (residual)
      value += residual[at];
    if (beta != 0.0f)
      value += beta * c[at];
    c[at] = value;
  }
}

/// The activation and epilogue kernels: a thread an element.
inline KernelLaunch elementLaunch(int64_t elements) {
  return gridStrideLaunch(elements, 256);
}
/// columnSumKernel: a block a tile of kColumnTile columns.
inline KernelLaunch columnLaunch(int64_t cols) { return columnTileLaunch(cols); }

} // namespace txrt::cuda::elementwise

#endif // TXRT_CUDA_KERNELS_ELEMENTWISEKERNELS_CUH
