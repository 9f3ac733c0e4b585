//===- Adam.cpp - the Adam update with bias correction --------------------===//
//
// One streaming pass over (param, grad, m, v), the same arithmetic as
// torch.optim.Adam's single-tensor path: denom = sqrt(v) / sqrt(1 - b2^t) +
// eps, param -= (lr / (1 - b1^t)) * (m / denom), m updated as torch's lerp. By
// default (TXRT_DENORMALS_FLUSH_MOMENTS) moments below FLT_MIN are stored
// as 0 (with eps >= 1e-12): Adam's moments of rarely seen rows otherwise
// decay into the denormal range, where every later step takes x86's slow
// path over them; the update they would make changes no parameter of
// normal size.
// txrt_adam_step_bf16 (--precision=bf16) also stores each updated parameter
// rounded to bf16 in the same pass: the copy the bf16 linears read.
//
//===----------------------------------------------------------------------===//
#include "AdamScalars.h"
#include "Bf16Round.h"
#include "Kernel.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include <omp.h>

using namespace txrt;

namespace {

/// The smallest eps with which TXRT_DENORMALS_FLUSH_MOMENTS flushes (txrt.h).
constexpr float kFlushMomentsMinEps = 1e-12f;

/// One pass of the update over [0, n). With FlushMoments, moments below
/// FLT_MIN are stored as 0 (txrt.h, TXRT_DENORMALS_FLUSH_MOMENTS); with
/// WriteCopy, copy[i] is the updated param[i] rounded to bf16. The loop
/// body has no branch (weight decay and the copy are template parameters)
/// and Adam.cpp is built with -fno-math-errno, so GCC vectorises it for the
/// target ISA (zmm on AVX-512, ymm on AVX2, xmm on x86-64-v2) with the
/// scalar body's arithmetic: sqrt and division are correctly rounded in
/// every lane. A scalar sqrt that could set errno and a branch per element
/// kept it scalar before, and a scalar sqrt and division per parameter made
/// the pass compute-bound at about a quarter of the memory bandwidth.
template <bool FlushMoments, bool WeightDecay, bool WriteCopy>
void adamLoop(Context &c, int64_t n, float *param, const float *grad, float *m,
              float *v, txrt_bf16 *copy, float beta2, float eps,
              float weight_decay, float stepSize, float sqrtCorrection2,
              float oneMinusBeta1, float oneMinusBeta2, float scale) {
#pragma omp parallel for simd num_threads(c.numThreads()) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    float g = grad[i] * scale;
    if (WeightDecay)
      g += weight_decay * param[i];
    // torch's lerp: its second form for a weight >= 0.5 (beta1 <= 0.5),
    // which gives g itself for beta1 = 0 (the first form was an ulp off).
    float mi = oneMinusBeta1 < 0.5f
                   ? m[i] + oneMinusBeta1 * (g - m[i])
                   : g - (g - m[i]) * (1.0f - oneMinusBeta1);
    float vi = beta2 * v[i] + oneMinusBeta2 * g * g;
    // This step's update reads the moments as computed; only the stored
    // ones are flushed (a flushed v beside a normal m made a step of m / eps
    // with a tiny eps, 1e9 times torch's).
    if (FlushMoments) {
      m[i] = std::fabs(mi) < FLT_MIN ? 0.0f : mi;
      v[i] = vi < FLT_MIN ? 0.0f : vi;
    } else {
      m[i] = mi;
      v[i] = vi;
    }
    float denom = std::sqrt(vi) / sqrtCorrection2 + eps;
    const float updated = param[i] - stepSize * (mi / denom);
    param[i] = updated;
    if (WriteCopy)
      copy[i] = roundToBf16(updated);
  }
}

/// sum x[i]^2 in double over [0, n): kLanes independent accumulators, so
/// that the loop vectorises (float -> double conversions and double FMAs,
/// 8 lanes a zmm register). One running double, as `omp simd reduction`
/// left it, was a scalar chain of dependent adds: 4 cycles an element,
/// 150 us for a 512 x 512 gradient (gradient clipping's norm took 7 % of
/// base.tx's step).
double sumOfSquares(const float *x, int64_t n) {
  constexpr int kLanes = 16;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += double(x[i + l]) * double(x[i + l]);
  for (int l = 0; i < n; ++i, ++l)
    lanes[l] += double(x[i]) * double(x[i]);
  double sum = 0.0;
  for (int l = 0; l < kLanes; ++l)
    sum += lanes[l];
  return sum;
}

/// adamLoop for the run-time flags.
template <bool FlushMoments, bool WriteCopy>
void adamLoopDecaying(Context &c, int64_t n, float *param, const float *grad,
                      float *m, float *v, txrt_bf16 *copy, float beta2,
                      float eps, float weight_decay, float stepSize,
                      float sqrtCorrection2, float oneMinusBeta1,
                      float oneMinusBeta2, float scale) {
  if (weight_decay != 0.0f)
    adamLoop<FlushMoments, true, WriteCopy>(
        c, n, param, grad, m, v, copy, beta2, eps, weight_decay, stepSize,
        sqrtCorrection2, oneMinusBeta1, oneMinusBeta2, scale);
  else
    adamLoop<FlushMoments, false, WriteCopy>(
        c, n, param, grad, m, v, copy, beta2, eps, weight_decay, stepSize,
        sqrtCorrection2, oneMinusBeta1, oneMinusBeta2, scale);
}

template <bool FlushMoments>
void adamLoopCopying(Context &c, int64_t n, float *param, const float *grad,
                     float *m, float *v, txrt_bf16 *copy, float beta2,
                     float eps, float weight_decay, float stepSize,
                     float sqrtCorrection2, float oneMinusBeta1,
                     float oneMinusBeta2, float scale) {
  if (copy)
    adamLoopDecaying<FlushMoments, true>(
        c, n, param, grad, m, v, copy, beta2, eps, weight_decay, stepSize,
        sqrtCorrection2, oneMinusBeta1, oneMinusBeta2, scale);
  else
    adamLoopDecaying<FlushMoments, false>(
        c, n, param, grad, m, v, copy, beta2, eps, weight_decay, stepSize,
        sqrtCorrection2, oneMinusBeta1, oneMinusBeta2, scale);
}

/// The update of txrt_adam_update; grad_scale (NULL: 1) multiplies every
/// gradient first (gradient clipping); copy (NULL: none) receives the
/// updated parameters rounded to bf16.
void adamUpdate(Context &c, int64_t n, float *param, const float *grad,
                float *m, float *v, float lr, float beta1, float beta2,
                float eps, float weight_decay, int64_t step,
                const float *grad_scale, txrt_bf16 *copy = nullptr) {
  require(n >= 0, "n must be non-negative");
  require(step >= 1, "step must be >= 1 (the count including this one)");
  require(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
          "betas must be in [0, 1)");
  if (n == 0)
    return;
  require(param && grad && m && v, "param, grad, m and v must not be NULL");
  // A host that froze the parameters and updates them anyway broke its
  // promise (txrt_context_set_frozen_parameters): drop the packed copies.
  c.packedWeights.noteWrite(param, size_t(n) * sizeof(float));
  if (copy)
    c.packedWeights.noteWrite(copy, size_t(n) * sizeof(txrt_bf16));
  const auto [stepSize, sqrtCorrection2, oneMinusBeta1, oneMinusBeta2] =
      adamScalars(lr, beta1, beta2, step);
  const float scale = grad_scale ? *grad_scale : 1.0f;
  // Flushing changes no update only where eps dwarfs what a denormal moment
  // gives (sqrt(v) < 1.1e-19, m / eps below 1e-25 of lr): with a smaller
  // eps, a flushed v or m moved later steps far from torch's (a tester's
  // eps = 1e-20 step: 30 against 0.3), so the moments are kept.
  if (c.flushMoments() && eps >= kFlushMomentsMinEps)
    adamLoopCopying<true>(c, n, param, grad, m, v, copy, beta2, eps,
                          weight_decay, stepSize, sqrtCorrection2,
                          oneMinusBeta1, oneMinusBeta2, scale);
  else
    adamLoopCopying<false>(c, n, param, grad, m, v, copy, beta2, eps,
                           weight_decay, stepSize, sqrtCorrection2,
                           oneMinusBeta1, oneMinusBeta2, scale);
}

/// txrt_adam_step outside TXRT_GRADIENTS_UPDATE mode: the gradient joins
/// the site's accumulator (GradientExchange.h), and Adam runs on the sum
/// when the update is applied.
void accumulateOrApply(Context &c, int64_t site, int64_t n, float *param,
                       const float *grad, float *m, float *v,
                       const float *grad_scale, float rate, float beta1,
                       float beta2, float eps, float weight_decay,
                       txrt_bf16 *copy) {
  // The compiled step's grad_scale is of this call's part of the gradient:
  // the exchange computes the whole update's factor instead.
  int64_t step = c.trainStep;
  c.gradients.add(site, n, grad, grad_scale != nullptr,
                  [=, &c](const float *sum, const float *clipScale) {
                    adamUpdate(c, n, param, sum, m, v, rate, beta1, beta2,
                               eps, weight_decay, step, clipScale, copy);
                  });
}

/// txrt_adam_step and txrt_adam_step_bf16 (copy non-NULL).
void adamStep(Context &c, int64_t site, int64_t n, float *param,
              const float *grad, float *m, float *v, const float *grad_scale,
              int32_t schedule, float lr, float d_model, float warmup,
              float beta1, float beta2, float eps, float weight_decay,
              txrt_bf16 *copy) {
  require(schedule == TXRT_LR_CONSTANT ||
              (schedule == TXRT_LR_NOAM && d_model > 0 && warmup > 0),
          "schedule must be constant, or noam with positive d_model "
          "and warmup");
  require(c.trainStep >= 1, "the training step is not set (call "
                            "txrt_context_set_train_state with step >= 1)");
  float rate = txrt_learning_rate(schedule, lr, d_model, warmup, c.trainStep);
  if (c.gradients.mode != TXRT_GRADIENTS_UPDATE) {
    accumulateOrApply(c, site, n, param, grad, m, v, grad_scale, rate, beta1,
                      beta2, eps, weight_decay, copy);
    return;
  }
  adamUpdate(c, n, param, grad, m, v, rate, beta1, beta2, eps, weight_decay,
             c.trainStep, grad_scale, copy);
}

} // namespace

extern "C" {

txrt_status txrt_adam_update(txrt_context *ctx, int64_t site, int64_t n,
                             float *param, const float *grad, float *m,
                             float *v, float lr, float beta1, float beta2,
                             float eps, float weight_decay, int64_t step) {
  return runKernel(
      ctx, site, "txrt_adam_update", [&] { return shapes("n", n, "step", step); },
      [&](Context &c) {
        adamUpdate(c, n, param, grad, m, v, lr, beta1, beta2, eps,
                   weight_decay, step, nullptr);
      });
}

float txrt_learning_rate(int32_t schedule, double lr, double d_model,
                         double warmup, int64_t step) {
  if (schedule != TXRT_LR_NOAM)
    return float(lr);
  double s = double(step < 1 ? 1 : step);
  return float(lr / std::sqrt(d_model) *
               std::min(1.0 / std::sqrt(s), s * std::pow(warmup, -1.5)));
}

txrt_status txrt_adam_step(txrt_context *ctx, int64_t site, int64_t n,
                           float *param, const float *grad, float *m, float *v,
                           const float *grad_scale, int32_t schedule, float lr,
                           float d_model, float warmup, float beta1,
                           float beta2, float eps, float weight_decay) {
  return runKernel(
      ctx, site, "txrt_adam_step",
      [&] { return shapes("n", n, "step", ctx ? ctx->trainStep : 0); },
      [&](Context &c) {
        adamStep(c, site, n, param, grad, m, v, grad_scale, schedule, lr,
                 d_model, warmup, beta1, beta2, eps, weight_decay, nullptr);
      });
}

txrt_status txrt_adam_step_bf16(txrt_context *ctx, int64_t site, int64_t n,
                                float *param, const float *grad, float *m,
                                float *v, const float *grad_scale,
                                int32_t schedule, float lr, float d_model,
                                float warmup, float beta1, float beta2,
                                float eps, float weight_decay,
                                txrt_bf16 *param_bf16) {
  return runKernel(
      ctx, site, "txrt_adam_step_bf16",
      [&] { return shapes("n", n, "step", ctx ? ctx->trainStep : 0); },
      [&](Context &c) {
        require(param_bf16 != nullptr || n == 0, "param_bf16 is NULL");
        adamStep(c, site, n, param, grad, m, v, grad_scale, schedule, lr,
                 d_model, warmup, beta1, beta2, eps, weight_decay,
                 param_bf16);
      });
}

txrt_status txrt_sum_squares(txrt_context *ctx, int64_t site, int64_t n,
                             const float *x, float *accumulator) {
  return runKernel(
      ctx, site, "txrt_sum_squares", [&] { return shapes("n", n); },
      [&](Context &c) {
        require(n >= 0, "n must be non-negative");
        require((x || n == 0) && accumulator,
                "x and accumulator must not be NULL");
        double sum = 0.0;
#pragma omp parallel num_threads(c.numThreads()) if (n > 32768) reduction(+ : sum)
        {
          const int64_t team = omp_get_num_threads();
          const int64_t chunk = (n + team - 1) / team;
          const int64_t begin = std::min(n, chunk * omp_get_thread_num());
          sum += sumOfSquares(x + begin, std::min(n, begin + chunk) - begin);
        }
        *accumulator += float(sum);
      });
}

} // extern "C"
