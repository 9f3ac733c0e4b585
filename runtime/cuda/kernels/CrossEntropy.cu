//===- CrossEntropy.cu - softmax cross-entropy, label smoothing, ignore ---===//
//
// The host side: checks, then the launches of CrossEntropyKernels.cuh's
// kernels; the row losses go to out_row_loss or the context's workspace,
// the backward's count of rows to the workspace. A bad target is reported
// by the next txrt_cuda_synchronize.
//
//===----------------------------------------------------------------------===//
#include "CrossEntropyKernels.cuh"
#include "CudaContext.h"

using namespace txrt::cuda;
using namespace txrt::cuda::crossentropy;

namespace {

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
    require(n == 0 || (logits && targets),
            "logits and targets must not be NULL");
    float *rowLoss = out_row_loss;
    if (!rowLoss) {
      require(size_t(n) * sizeof(float) <= c.workspaceBytes,
              "too many rows for the scratch row losses (pass out_row_loss)");
      rowLoss = static_cast<float *>(c.workspace);
    }
    if (n > 0) {
      const KernelLaunch rows = rowLaunch(n);
      rowLossKernel<<<rows.blocks, rows.threads, 0, c.stream>>>(
          classes, logits, targets, ignore_index, label_smoothing, lse, rowLoss,
          c.fault);
      checkLaunch("rowLossKernel");
    }
    const KernelLaunch total = totalLaunch();
    totalLossKernel<<<total.blocks, total.threads, 0, c.stream>>>(
        n, rowLoss, targets, ignore_index, reduction == TXRT_LOSS_MEAN,
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
      const KernelLaunch total = totalLaunch();
      countKernel<<<total.blocks, total.threads, 0, c.stream>>>(
          n, targets, ignore_index, count);
      checkLaunch("countKernel");
    }
    const KernelLaunch rows = rowLaunch(n);
    gradientKernel<<<rows.blocks, rows.threads, 0, c.stream>>>(
        classes, logits, targets, lse, ignore_index, label_smoothing, dloss,
        count, dlogits);
    checkLaunch("gradientKernel");
  });
}

} // extern "C"
