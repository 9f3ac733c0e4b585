//===- Divergence.cpp - non-finite training state, first bad step ---------===//
#include "loop/Divergence.h"
#include "core/Error.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

namespace txrt::driver {

std::string Divergence::describe() const {
  // (A loss of 3e35 in "%.4f" filled the buffer and lost its magnitude.)
  char loss[32];
  std::snprintf(loss, sizeof(loss),
                std::fabs(lossBefore) < 1e9 ? "%.4f" : "%.6e", lossBefore);
  if (exact() && !std::isfinite(lossBefore))
    // The parameters were finite before this update (the replay found it),
    // yet the step's forward already overflowed ("-nan" read as a value).
    return "the update of step " + std::to_string(step) + " made " + tensor +
           " non-finite (" + value + "); that step's loss was already " +
           (std::isnan(lossBefore) ? "nan"
            : lossBefore > 0       ? "inf"
                                   : "-inf") +
           ", computed from finite parameters: the forward overflowed (lower "
           "the learning rate) or computed an undefined value on this batch "
           "(log or sqrt of a negative, 0 / 0: at step 1 the parameters "
           "are the initial ones, and the cause is the spec's arithmetic)";
  if (exact())
    return "the update of step " + std::to_string(step) + " made " + tensor +
           " non-finite (" + value + "; the loss before it was " + loss + ")";
  return tensor + " became non-finite (" + value + ") in one of the updates " +
         "of steps " + std::to_string(earliestStep) + ".." +
         std::to_string(step);
}

DivergenceWatch::DivergenceWatch(ArenaView params, int64_t startStep,
                                 StepFunction replayStep,
                                 RestoreFunction restore, double budget)
    : params_(std::move(params)), replayStep_(std::move(replayStep)),
      restore_(std::move(restore)), budget_(budget), restoreStep_(startStep),
      cleanStep_(startStep) {}

std::optional<Divergence>
DivergenceWatch::afterStep(int64_t step, double seconds, double loss) {
  stepSeconds_ += seconds;
  if (scanSeconds_ > budget_ * stepSeconds_)
    return std::nullopt;
  return check(step, loss);
}

std::optional<Divergence> DivergenceWatch::check(int64_t step, double loss) {
  auto start = std::chrono::steady_clock::now();
  std::optional<ParameterArena::NonFiniteValue> found =
      params_().findNonFinite();
  scanSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ++scans_;
  if (!found) {
    cleanStep_ = step;
    return std::nullopt;
  }
  return locate(step, loss, *found);
}

void DivergenceWatch::savedAt(int64_t step) {
  restoreStep_ = step;
  cleanStep_ = step;
}

std::optional<Divergence>
DivergenceWatch::locate(int64_t step, double loss,
                        const ParameterArena::NonFiniteValue &found) {
  Divergence divergence{step, cleanStep_ + 1, found.tensor, found.value, loss};
  if (divergence.exact())
    return divergence;
  // Replay from the restore point; only updates after the last clean scan
  // can be the first bad one.
  try {
    restore_();
    for (int64_t replayed = restoreStep_ + 1; replayed <= step; ++replayed) {
      double replayedLoss = replayStep_(replayed);
      if (replayed <= cleanStep_)
        continue;
      if (std::optional<ParameterArena::NonFiniteValue> bad =
              params_().findNonFinite())
        return Divergence{replayed, replayed, bad->tensor, bad->value,
                          replayedLoss};
    }
  } catch (const DriverError &) {
    // The replay failed (e.g. the restore point became unreadable): report
    // what the scan found, with the range of steps.
  }
  return divergence;
}

} // namespace txrt::driver
