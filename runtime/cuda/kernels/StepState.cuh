//===- StepState.cuh - what a captured step reads on the device -*- CUDA -*-===//
//
// A CUDA graph replays its kernels with the arguments they had when the
// step was captured. The values that change from step to step inside a
// training step are the training step and seed (dropout's Philox keys) and
// Adam's step-dependent scalars (the learning rate of the schedule and the
// bias corrections); a captured step's kernels read them from one device
// buffer of the context instead (txrt_cuda_context::stepState), which
// txrt_cuda_context_set_train_state rewrites before each replay. Adam's
// scalars are computed on the host by the direct calls' own code
// (adamConstants, txrt_learning_rate), one slot per optimizer setting the
// captured step uses, so a replay updates the parameters bit for bit as
// the direct calls do. No CUDA header: the emulated tests use it too.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_STEPSTATE_CUH
#define TXRT_CUDA_KERNELS_STEPSTATE_CUH

#include "PhiloxDevice.h"

#include <cstdint>

namespace txrt::cuda {

/// Adam's scalars of one optimizer setting at one step.
struct AdamStepScalars {
  float stepSize;        ///< lr(t) / (1 - beta1^t)
  float sqrtCorrection2; ///< sqrt(1 - beta2^t)
};

/// Optimizer settings one captured step may use (a spec has one optimizer:
/// one setting; more is an error at capture).
constexpr int kMaxCapturedAdamSettings = 8;

/// The device buffer a captured step reads.
struct StepState {
  DeviceTrainState train;
  AdamStepScalars adam[kMaxCapturedAdamSettings];
};

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_STEPSTATE_CUH
