//===- CrossEntropy.cpp - log-softmax + NLL with label smoothing ----------===//
//
// Fused so the [n, classes] log-probabilities never exist: the forward reads
// each row twice (max; then sum of exp and sum of logits) and keeps only the
// row's log-sum-exp; the backward reads each row once and writes its
// gradient. Rows whose target is ignore_index contribute nothing.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "VecMath.h"

#include <cmath>

using namespace txrt;

namespace {

void requireReduction(int32_t reduction) {
  require(reduction == TXRT_LOSS_MEAN || reduction == TXRT_LOSS_SUM,
          "unknown reduction " + std::to_string(reduction));
}

/// Validates the targets and returns how many rows are counted.
int64_t countTargets(const int32_t *targets, int64_t n, int64_t classes,
                     int32_t ignoreIndex) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (targets[i] == ignoreIndex)
      continue;
    if (targets[i] < 0 || targets[i] >= classes)
      throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                  "targets[" + std::to_string(i) +
                      "] = " + std::to_string(targets[i]) + " is outside [0, " +
                      std::to_string(classes) + ") and not ignore_index");
    ++count;
  }
  return count;
}

/// The log-sum-exp of one row of logits, as the forward computes and saves
/// it; also the row's plain sum when `sumZ` is non-null. The backward
/// recomputes a missing lse with this same function, so its gradient is the
/// one the saved lse gives, bit for bit.
float rowLogSumExpAndSum(const float *z, int64_t classes, float *sumZ) {
  float m = rowMax(z, classes);
  float sumExp = 0.0f, sum = 0.0f;
#pragma omp simd reduction(+ : sumExp, sum)
  for (int64_t j = 0; j < classes; ++j) {
    sumExp += expApprox(z[j] - m);
    sum += z[j];
  }
  if (sumZ)
    *sumZ = sum;
  return m + std::log(sumExp);
}

} // namespace

extern "C" {

txrt_status txrt_cross_entropy_fwd(txrt_context *ctx, int64_t site,
                                   int64_t n, int64_t classes,
                                   const float *logits, const int32_t *targets,
                                   int32_t ignore_index, float label_smoothing,
                                   int32_t reduction, float *out_loss,
                                   float *lse, float *out_row_loss,
                                   int64_t *out_count) {
  return runKernel(
      ctx, site, "txrt_cross_entropy_fwd",
      [&] { return shapes("n", n, "classes", classes); },
      [&](Context &c) {
        requireReduction(reduction);
        require(n >= 0 && classes > 0, "n must be >= 0 and classes > 0");
        require(label_smoothing >= 0.0f && label_smoothing <= 1.0f,
                "label_smoothing must be in [0, 1]");
        require(out_loss != nullptr, "out_loss is NULL");
        require(n == 0 || (logits && targets),
                "logits and targets must not be NULL");
        int64_t count = countTargets(targets, n, classes, ignore_index);
        const float eps = label_smoothing;
        const float invClasses = 1.0f / float(classes);
        double total = 0.0;
#pragma omp parallel for num_threads(c.numThreads()) reduction(+ : total)
        for (int64_t i = 0; i < n; ++i) {
          int32_t t = targets[i];
          if (t == ignore_index) {
            if (lse)
              lse[i] = 0.0f;
            if (out_row_loss)
              out_row_loss[i] = 0.0f;
            continue;
          }
          const float *z = logits + i * classes;
          float sumZ = 0.0f;
          float rowLse = rowLogSumExpAndSum(z, classes, &sumZ);
          float loss = (1.0f - eps) * (rowLse - z[t]) +
                       eps * (rowLse - sumZ * invClasses);
          if (lse)
            lse[i] = rowLse;
          if (out_row_loss)
            out_row_loss[i] = loss;
          total += double(loss);
        }
        if (reduction == TXRT_LOSS_MEAN)
          total = count ? total / double(count) : 0.0;
        out_loss[0] = float(total);
        if (out_count)
          *out_count = count;
      });
}

txrt_status txrt_cross_entropy_bwd(txrt_context *ctx, int64_t site,
                                   int64_t n, int64_t classes,
                                   const float *logits, const int32_t *targets,
                                   const float *lse, int32_t ignore_index,
                                   float label_smoothing, int32_t reduction,
                                   const float *dloss, float *dlogits) {
  return runKernel(
      ctx, site, "txrt_cross_entropy_bwd",
      [&] { return shapes("n", n, "classes", classes); },
      [&](Context &c) {
        requireReduction(reduction);
        require(n >= 0 && classes > 0, "n must be >= 0 and classes > 0");
        if (n == 0)
          return;
        require(logits && targets && dloss && dlogits,
                "logits, targets, dloss and dlogits must not be NULL");
        int64_t count = countTargets(targets, n, classes, ignore_index);
        float g = dloss[0];
        if (reduction == TXRT_LOSS_MEAN)
          g = count ? g / float(count) : 0.0f;
        const float eps = label_smoothing;
        const float smooth = g * eps / float(classes);
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
        for (int64_t i = 0; i < n; ++i) {
          float *d = dlogits + i * classes;
          int32_t t = targets[i];
          if (t == ignore_index) {
#pragma omp simd
            for (int64_t j = 0; j < classes; ++j)
              d[j] = 0.0f;
            continue;
          }
          const float *z = logits + i * classes;
          // Without a saved lse, the forward's, recomputed from the row while
          // it is in cache (one pass more over it, not over the whole batch).
          float rowLse = lse ? lse[i] : rowLogSumExpAndSum(z, classes, nullptr);
#pragma omp simd
          for (int64_t j = 0; j < classes; ++j)
            d[j] = g * expApprox(z[j] - rowLse) - smooth;
          d[t] -= g * (1.0f - eps);
        }
      });
}

} // extern "C"
