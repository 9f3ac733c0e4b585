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
                            float eps, float weight_decay, int64_t step,
                            const AdamStepScalars *stepScalars) {
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
      k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, eps, weight_decay,
      stepScalars);
  checkLaunch("adamKernel");
}

const AdamStepScalars *txrt::cuda::capturedAdamScalars(
    txrt_cuda_context &c, int32_t schedule, float lr, float dModel,
    float warmup, float beta1, float beta2) {
  if (!c.capturing)
    return nullptr;
  size_t slot = 0;
  for (; slot < c.adamSettings.size(); ++slot) {
    const txrt_cuda_context::AdamSetting &s = c.adamSettings[slot];
    if (s.schedule == schedule && s.lr == lr && s.dModel == dModel &&
        s.warmup == warmup && s.beta1 == beta1 && s.beta2 == beta2)
      break;
  }
  if (slot == c.adamSettings.size()) {
    if (slot == size_t(kMaxCapturedAdamSettings))
      throw CudaError(TXRT_ERROR_BACKEND,
                      "a captured step uses more than " +
                          std::to_string(kMaxCapturedAdamSettings) +
                          " optimizer settings");
    c.adamSettings.push_back({schedule, lr, dModel, warmup, beta1, beta2});
  }
  return &c.stepState->adam[slot];
}

void txrt::cuda::uploadStepState(txrt_cuda_context &c) {
  if (!c.stepState)
    return;
  StepState host{};
  host.train = {c.trainSeed, c.trainStep};
  // The direct calls' own arithmetic (txrt_cuda_adam_step below): the
  // replay's scalars are theirs bit for bit. Before the first step there
  // is nothing to schedule (no captured step runs then).
  if (c.trainStep >= 1)
    for (size_t i = 0; i < c.adamSettings.size(); ++i) {
      const txrt_cuda_context::AdamSetting &s = c.adamSettings[i];
      const float rate = txrt_learning_rate(s.schedule, s.lr, s.dModel,
                                            s.warmup, c.trainStep);
      const AdamConstants k = adamConstants(rate, s.beta1, s.beta2,
                                            c.trainStep);
      host.adam[i] = {k.stepSize, k.sqrtCorrection2};
    }
  // From pageable memory: the call returns once `host` is staged, and the
  // copy runs in stream order, before the replay queued after it.
  check(cudaMemcpyAsync(c.stepState, &host, sizeof(host),
                        cudaMemcpyHostToDevice, c.stream),
        "cudaMemcpyAsync(step state)");
}

extern "C" {

txrt_status txrt_cuda_adam_update(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, float *param, const float *grad,
                                  float *m, float *v, float lr, float beta1,
                                  float beta2, float eps, float weight_decay,
                                  int64_t step) {
  return runCuda(ctx, "txrt_cuda_adam_update", [&](txrt_cuda_context &c) {
    if (c.capturing)
      throw CudaError(TXRT_ERROR_BACKEND,
                      "cannot be captured in a CUDA graph (its step is an "
                      "argument; txrt_cuda_adam_step reads the context's)");
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
    // Inside a capture: the schedule's scalars from the step state, which
    // each replay's txrt_cuda_context_set_train_state rewrites
    // (txrt_cuda_capture_begin refuses the gradient modes below).
    const AdamStepScalars *stepScalars = capturedAdamScalars(
        c, schedule, lr, d_model, warmup, beta1, beta2);
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
               weight_decay, c.trainStep, stepScalars);
  });
}

} // extern "C"
