//===- Optimizer.h - the optimizer a training model was compiled with -*- C++ -*-===//
//
// Metadata version 2's "optimizer" object (ModelAbi.h), typed. The compiled
// train step applies it; the driver only reports it, e.g. the learning rate
// of the step being taken in the progress line and the loss curve:
//
//   noam      lr(step) = factor * d_model^-0.5 * min(step^-0.5,
//                                                    step * warmup^-1.5)
//   constant  lr(step) = value
//
// `step` is 1-based (the update being taken), as txrt_context_set_train_state.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_OPTIMIZER_H
#define TXRT_DRIVER_OPTIMIZER_H

#include <cstdint>
#include <string>

namespace txrt::driver {

/// The learning-rate schedule.
struct LearningRateSchedule {
  enum class Kind { Noam, Constant };
  Kind kind = Kind::Constant;
  double dModel = 0, warmup = 0, factor = 1; ///< noam
  double value = 0;                          ///< constant
};

struct OptimizerInfo {
  std::string name = "adam";
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0;
  double clip = 0; ///< global gradient-norm bound, 0 = none
  LearningRateSchedule lr;
};

/// The learning rate of update `step` (>= 1; step 0 is treated as 1).
double learningRate(const LearningRateSchedule &schedule, int64_t step);

/// "adam(lr = noam(d_model = 64, warmup = 100, factor = 1), beta1 = 0.9,
/// beta2 = 0.98, eps = 1e-09)".
std::string describeOptimizer(const OptimizerInfo &optimizer);

} // namespace txrt::driver

#endif // TXRT_DRIVER_OPTIMIZER_H
