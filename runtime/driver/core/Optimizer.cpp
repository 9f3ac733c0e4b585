//===- Optimizer.cpp - learning-rate schedules and the optimizer's text ---===//
#include "core/Optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace txrt::driver {

double learningRate(const LearningRateSchedule &schedule, int64_t step) {
  if (schedule.kind == LearningRateSchedule::Kind::Constant)
    return schedule.value;
  double t = double(std::max<int64_t>(step, 1));
  double warmup = std::max(schedule.warmup, 1.0);
  return schedule.factor / std::sqrt(schedule.dModel) *
         std::min(1.0 / std::sqrt(t), t * std::pow(warmup, -1.5));
}

namespace {
/// %g's form, with the digits the value needs to read back (a beta1 of
/// 0.99999994 was printed "1", which is refused).
std::string number(double value) {
  char text[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}
} // namespace

std::string describeOptimizer(const OptimizerInfo &optimizer) {
  std::string lr;
  if (optimizer.lr.kind == LearningRateSchedule::Kind::Noam)
    lr = "noam(d_model = " + number(optimizer.lr.dModel) +
         ", warmup = " + number(optimizer.lr.warmup) +
         ", factor = " + number(optimizer.lr.factor) + ")";
  else
    lr = number(optimizer.lr.value);
  std::string text = optimizer.name + "(lr = " + lr +
                     ", beta1 = " + number(optimizer.beta1) +
                     ", beta2 = " + number(optimizer.beta2) +
                     ", eps = " + number(optimizer.eps);
  if (optimizer.weightDecay != 0)
    text += ", weight_decay = " + number(optimizer.weightDecay);
  if (optimizer.clip != 0)
    text += ", clip = " + number(optimizer.clip);
  return text + ")";
}

} // namespace txrt::driver
