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

/// The max of one row of logits and the log of its sum of exp(z - max), as
/// the forward computes them (the log saved as "lse") and the backward
/// recomputes them, bit for bit; also the row's sum of z - max when
/// `sumShifted` is non-null. Kept apart, not added up (max + log): at large
/// logits (1e7) the log would round away in the sum, as PyTorch's
/// log_softmax, (z - max) - log, never lets it.
struct RowStats {
  float max, logSum;
};
RowStats rowStats(const float *z, int64_t classes, float *sumShifted) {
  float m = rowMax(z, classes);
  float sumExp = 0.0f, sum = 0.0f;
#pragma omp simd reduction(+ : sumExp, sum)
  for (int64_t j = 0; j < classes; ++j) {
    sumExp += expApprox(z[j] - m);
    sum += z[j] - m;
  }
  if (sumShifted)
    *sumShifted = sum;
  return {m, std::log(sumExp)};
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
          float sumShifted = 0.0f;
          RowStats row = rowStats(z, classes, &sumShifted);
          // -log_softmax of the target, and of the mean class for the
          // smoothing, each term only where its weight is not 0 (0 * inf:
          // a -inf logit or an overflowed sum gave NaN without smoothing).
          float loss = 0.0f;
          if (eps < 1.0f)
            loss += (1.0f - eps) * (row.logSum - (z[t] - row.max));
          if (eps > 0.0f)
            loss += eps * (row.logSum - sumShifted * invClasses);
          if (lse)
            lse[i] = row.logSum;
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
          // The forward's max and log sum, recomputed from the row while it
          // is in cache (one pass more over it, not over the whole batch):
          // the max alone with a saved lse.
          RowStats row = lse ? RowStats{rowMax(z, classes), lse[i]}
                             : rowStats(z, classes, nullptr);
#pragma omp simd
          for (int64_t j = 0; j < classes; ++j)
            d[j] = g * expApprox((z[j] - row.max) - row.logSum) - smooth;
          d[t] -= g * (1.0f - eps);
        }
      });
}

} // extern "C"
