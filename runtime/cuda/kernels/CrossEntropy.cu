//===- CrossEntropy.cu - softmax cross-entropy, label smoothing, ignore ---===//
//
// Forward: one block per row computes lse = max + log sum exp(z - max), the
// target logit and the mean logit, and the row loss of txrt.h's formula;
// one block then sums the row losses (in double) and counts the rows whose
// target is not ignore_index. Backward: one block per row writes
// g * (softmax - (1 - eps) [j == t] - eps / classes) from the saved lse,
// with g = dloss / count for the mean (the count is recomputed on the
// device; lse too when none was saved). A target outside [0, classes) gives that row a NaN loss and is
// reported by the next txrt_cuda_synchronize.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "CudaContext.h"

#include <cmath>

using namespace txrt::cuda;

namespace {

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
  float sumExp = 0.0f, sumZ = 0.0f;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    sumExp += expf(z[j] - maximum);
    sumZ += z[j];
  }
  sumExp = blockSum(sumExp);
  sumZ = blockSum(sumZ);
  if (threadIdx.x == 0) {
    const float rowLse = maximum + logf(sumExp);
    float loss = NAN;
    if (target >= 0 && target < classes)
      loss = (1.0f - smoothing) * (rowLse - z[target]) +
             smoothing * (rowLse - sumZ / float(classes));
    else
      reportFault(fault, kCrossEntropyTargetOutOfRange, row, target, classes);
    rowLoss[row] = loss;
    if (lse)
      lse[row] = rowLse;
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
      outLoss[0] = mean ? (count ? float(sum / double(count)) : 0.0f)
                        : float(sum);
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
  float rowLse;
  if (lse) {
    rowLse = lse[row];
  } else { // recomputed, as the CPU kernel does without a saved lse
    float maximum = -INFINITY;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      maximum = fmaxf(maximum, z[j]);
    maximum = blockMax(maximum);
    float sumExp = 0.0f;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      sumExp += expf(z[j] - maximum);
    rowLse = maximum + logf(blockSum(sumExp));
  }
  const float uniform = smoothing / float(classes);
  // dlogits may alias logits: each element is read, then written, by one
  // thread.
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    float p = expf(z[j] - rowLse);
    float value = p - uniform - (j == target ? 1.0f - smoothing : 0.0f);
    d[j] = g * value;
  }
}

void checkShapes(int64_t n, int64_t classes, float smoothing,
                 int32_t reduction) {
  require(n >= 0 && classes >= 0, "n and classes must be non-negative");
  require(n <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
  require(smoothing >= 0.0f && smoothing <= 1.0f,
          "label_smoothing must be in [0, 1]");
  require(reduction == TXRT_LOSS_MEAN || reduction == TXRT_LOSS_SUM,
          "reduction must be TXRT_LOSS_MEAN or TXRT_LOSS_SUM");
}

} // namespace

extern "C" {

txrt_status txrt_cuda_cross_entropy_fwd(
    txrt_cuda_context *ctx, int64_t site, int64_t n, int64_t classes,
    const float *logits, const int32_t *targets, int32_t ignore_index,
    float label_smoothing, int32_t reduction, float *out_loss, float *lse,
    float *out_row_loss, int64_t *out_count) {
  return runCuda(ctx, "txrt_cuda_cross_entropy_fwd", [&](txrt_cuda_context &c) {
    checkShapes(n, classes, label_smoothing, reduction);
    require(n == 0 || classes > 0, "classes must be positive");
    require(n == 0 || (logits && targets), "logits and targets must not be NULL");
    float *rowLoss = out_row_loss;
    if (!rowLoss) {
      require(size_t(n) * sizeof(float) <= c.workspaceBytes,
              "too many rows for the scratch row losses (pass out_row_loss)");
      rowLoss = static_cast<float *>(c.workspace);
    }
    if (n > 0) {
      rowLossKernel<<<unsigned(n), kThreads, 0, c.stream>>>(
          classes, logits, targets, ignore_index, label_smoothing, lse,
          rowLoss, c.fault);
      checkLaunch("rowLossKernel");
    }
    totalLossKernel<<<1, 1024, 0, c.stream>>>(n, rowLoss, targets,
                                              ignore_index,
                                              reduction == TXRT_LOSS_MEAN,
                                              out_loss, out_count);
    checkLaunch("totalLossKernel");
  });
}

txrt_status txrt_cuda_cross_entropy_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t n, int64_t classes,
    const float *logits, const int32_t *targets, const float *lse,
    int32_t ignore_index, float label_smoothing, int32_t reduction,
    const float *dloss, float *dlogits) {
  return runCuda(ctx, "txrt_cuda_cross_entropy_bwd", [&](txrt_cuda_context &c) {
    checkShapes(n, classes, label_smoothing, reduction);
    if (n == 0 || classes == 0)
      return;
    require(logits && targets && dloss && dlogits,
            "logits, targets, dloss and dlogits must not be NULL");
    float *count = nullptr;
    if (reduction == TXRT_LOSS_MEAN) {
      count = static_cast<float *>(c.workspace);
      countKernel<<<1, 1024, 0, c.stream>>>(n, targets, ignore_index, count);
      checkLaunch("countKernel");
    }
    gradientKernel<<<unsigned(n), kThreads, 0, c.stream>>>(
        classes, logits, targets, lse, ignore_index, label_smoothing, dloss,
        count, dlogits);
    checkLaunch("gradientKernel");
  });
}

} // extern "C"
