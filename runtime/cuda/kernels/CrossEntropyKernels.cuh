//===- CrossEntropyKernels.cuh - cross-entropy's device code ---*- CUDA -*-===//
//
// The kernels of txrt_cuda_cross_entropy_{fwd,bwd} (CrossEntropy.cu
// launches them) and their launch geometry. Forward: a block per row
// computes the max and lse = log sum exp(z - max) (kept apart), the sum of
// z - max, and the row loss of txrt.h's formula; one block then sums the row
// losses (in double) and counts the rows whose target is not ignore_index.
// Backward: a block per row writes g * (softmax - (1 - eps) [j == t] -
// eps / classes) from the row's max and the saved lse (or one recomputed), g = dloss / count
// for the mean. A target outside [0, classes) gives its row a NaN loss and
// a device fault. No CUDA header: test/unit/cuda/emulated/ runs the same
// code on the host against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_CROSSENTROPYKERNELS_CUH
#define TXRT_CUDA_KERNELS_CROSSENTROPYKERNELS_CUH

#include "BlockReduce.cuh"
#include "DeviceFault.cuh"
#include "KernelLaunch.cuh"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::crossentropy {

constexpr int kThreads = 256;

__global__ void rowLossKernel(int64_t classes, const float *logits,
                              const int32_t *targets, int32_t ignoreIndex,
                              float smoothing, float *lse, float *rowLoss,
                              txrt_cuda_device_fault *fault) {
  const int64_t row = blockIdx.x;
  const float *z = logits + row * classes;
  const int32_t target = targets[row];
  if (target == ignoreIndex) {
    if (threadIdx.x == 0) {
      rowLoss[row] = 0.0f;
      if (lse)
        lse[row] = 0.0f;
    }
    return;
  }
  float maximum = -INFINITY;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    maximum = fmaxf(maximum, z[j]);
  maximum = blockMax(maximum);
  float sumExp = 0.0f, sumShifted = 0.0f;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    sumExp += expf(z[j] - maximum);
    sumShifted += z[j] - maximum;
  }
  sumExp = blockSum(sumExp);
  sumShifted = blockSum(sumShifted);
  if (threadIdx.x == 0) {
    // The max and the log kept apart (txrt.h), each term only where its
    // weight is not 0, as the CPU kernel.
    const float logSum = logf(sumExp);
    float loss = NAN;
    if (target >= 0 && target < classes) {
      loss = 0.0f;
      if (smoothing < 1.0f)
        loss += (1.0f - smoothing) * (logSum - (z[target] - maximum));
      if (smoothing > 0.0f)
        loss += smoothing * (logSum - sumShifted / float(classes));
    } else {
      reportFault(fault, kCrossEntropyTargetOutOfRange, row, target, classes);
    }
    rowLoss[row] = loss;
    if (lse)
      lse[row] = logSum;
  }
}

__global__ void totalLossKernel(int64_t n, const float *rowLoss,
                                const int32_t *targets, int32_t ignoreIndex,
                                bool mean, float *outLoss, int64_t *outCount) {
  double sum = 0.0;
  long long count = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    sum += rowLoss[i];
    count += targets[i] != ignoreIndex;
  }
  sum = blockSum(sum);
  count = blockSum(count);
  if (threadIdx.x == 0) {
    if (outLoss)
      outLoss[0] =
          mean ? (count ? float(sum / double(count)) : 0.0f) : float(sum);
    if (outCount)
      outCount[0] = count;
  }
}

__global__ void countKernel(int64_t n, const int32_t *targets,
                            int32_t ignoreIndex, float *outCount) {
  long long count = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    count += targets[i] != ignoreIndex;
  count = blockSum(count);
  if (threadIdx.x == 0)
    outCount[0] = float(count);
}

__global__ void gradientKernel(int64_t classes, const float *logits,
                               const int32_t *targets, const float *lse,
                               int32_t ignoreIndex, float smoothing,
                               const float *dloss, const float *count,
                               float *dlogits) {
  const int64_t row = blockIdx.x;
  const int32_t target = targets[row];
  float *d = dlogits + row * classes;
  const float *z = logits + row * classes;
  if (target == ignoreIndex) {
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      d[j] = 0.0f;
    return;
  }
  float g = dloss[0];
  if (count)
    g = count[0] > 0.0f ? g / count[0] : 0.0f;
  // The forward's max, and its log sum when none was saved (recomputed, as
  // the CPU kernel does).
  float maximum = -INFINITY;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    maximum = fmaxf(maximum, z[j]);
  maximum = blockMax(maximum);
  float logSum;
  if (lse) {
    logSum = lse[row];
  } else {
    float sumExp = 0.0f;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      sumExp += expf(z[j] - maximum);
    logSum = logf(blockSum(sumExp));
  }
  const float uniform = smoothing / float(classes);
  // dlogits may alias logits: each element is read, then written, by one
  // thread (every thread has its max before any writes: blockMax syncs).
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    float p = expf((z[j] - maximum) - logSum);
    float value = p - uniform - (j == target ? 1.0f - smoothing : 0.0f);
    d[j] = g * value;
  }
}

/// rowLossKernel and gradientKernel: a block a row.
inline KernelLaunch rowLaunch(int64_t rows) {
  return blockPerRowLaunch(rows, kThreads);
}
/// totalLossKernel and countKernel: one block over all rows.
inline KernelLaunch totalLaunch() { return {1, 1024}; }

} // namespace txrt::cuda::crossentropy

#endif // TXRT_CUDA_KERNELS_CROSSENTROPYKERNELS_CUH
