//===- Adam.cu - Adam over a parameter arena in one pass ------------------===//
//
// The host side of AdamKernels.cuh: checks and the launch.
// txrt_cuda_adam_step takes Adam's t from the context's training state and
// the learning rate of txrt_learning_rate (the CPU library's, so both
// devices schedule alike); grad_scale is read on the device. Outside
// TXRT_GRADIENTS_UPDATE mode the gradient goes to the context's
// GradientExchange, which runs this update later on the sum.
//
//===----------------------------------------------------------------------===//
#include "AdamKernels.cuh"
#include "CudaContext.h"
#include "GradientExchange.h"

using namespace txrt::cuda;
using namespace txrt::cuda::adam;

void txrt::cuda::adamUpdate(txrt_cuda_context &c, int64_t n, float *param,
                            const float *grad, const float *gradScale, float *m,
                            float *v, float lr, float beta1, float beta2,
                            float eps, float weight_decay, int64_t step) {
  require(n >= 0, "n must be non-negative");
  require(step >= 1, "step must be >= 1 (the count including this one)");
  require(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
          "betas must be in [0, 1)");
  if (n == 0)
    return;
  require(param && grad && m && v, "param, grad, m and v must not be NULL");
  const AdamConstants k = adamConstants(lr, beta1, beta2, step);
  const KernelLaunch elements = adamLaunch(n);
  adamKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
      n, param, grad, gradScale, m, v, k.stepSize, k.sqrtCorrection2,
      k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, eps, weight_decay);
  checkLaunch("adamKernel");
}

extern "C" {

txrt_status txrt_cuda_adam_update(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, float *param, const float *grad,
                                  float *m, float *v, float lr, float beta1,
                                  float beta2, float eps, float weight_decay,
                                  int64_t step) {
  return runCuda(ctx, "txrt_cuda_adam_update", [&](txrt_cuda_context &c) {
    adamUpdate(c, n, param, grad, nullptr, m, v, lr, beta1, beta2, eps,
               weight_decay, step);
  });
}

txrt_status txrt_cuda_adam_step(txrt_cuda_context *ctx, int64_t site, int64_t n,
                                float *param, const float *grad, float *m,
                                float *v, const float *grad_scale,
                                int32_t schedule, float lr, float d_model,
                                float warmup, float beta1, float beta2,
                                float eps, float weight_decay) {
  return runCuda(ctx, "txrt_cuda_adam_step", [&](txrt_cuda_context &c) {
    require(schedule == TXRT_LR_CONSTANT ||
                (schedule == TXRT_LR_NOAM && d_model > 0 && warmup > 0),
            "schedule must be constant, or noam with positive d_model and "
            "warmup");
    require(c.trainStep >= 1, "the training step is not set (call "
                              "txrt_cuda_context_set_train_state with step "
                              ">= 1)");
    float rate = txrt_learning_rate(schedule, lr, d_model, warmup, c.trainStep);
    if (c.gradients && c.gradients->mode != TXRT_GRADIENTS_UPDATE) {
      // The gradient joins the site's bucket (GradientExchange.h); the
      // compiled step's grad_scale is of this call's part of it, so the
      // exchange computes the whole update's clipping factor instead.
      const int64_t step = c.trainStep;
      c.gradients->add(site, n, grad, grad_scale != nullptr,
                       [=, &c](const float *sum, const float *clipScale) {
                         adamUpdate(c, n, param, sum, clipScale, m, v, rate,
                                    beta1, beta2, eps, weight_decay, step);
                       });
      return;
    }
    adamUpdate(c, n, param, grad, grad_scale, m, v, rate, beta1, beta2, eps,
               weight_decay, c.trainStep);
  });
}

} // extern "C"
