//===- UnigramWatch.h - a loss stuck at the unigram entropy -----*- C++ -*-===//
//
// A model that predicts only how often each target token occurs reaches a
// loss equal to the entropy of the targets' unigram distribution, and stays
// there: the collapse a too-short warmup causes on real text (issue 16: loss
// 6.6, every translation empty). The training loop feeds every update's
// loss; once at least kMinUpdates updates are done and the mean of the
// last kWindow losses is within kTolerance (relative) of the entropy, the
// watch returns its warning, once per run.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_UNIGRAMWATCH_H
#define TXRT_DRIVER_UNIGRAMWATCH_H

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace txrt::driver {

/// The entropy in nats (the loss's unit) of the distribution `counts`
/// (occurrences per token id); 0 for no tokens.
double unigramEntropy(const std::vector<int64_t> &counts);

class UnigramWatch {
public:
  static constexpr int64_t kMinUpdates = 200;
  static constexpr size_t kWindow = 50;
  static constexpr double kTolerance = 0.02;

  /// `unit`: what the targets are ("token", a classifier's "label"), for
  /// the message; `advice`, what to check, after "; " (the default names
  /// the warmup of a schedule that has one).
  explicit UnigramWatch(
      double entropy, std::string unit = "token",
      std::string advice = "check the learning-rate schedule (warmup)")
      : entropy_(entropy), unit_(std::move(unit)), advice_(std::move(advice)) {}

  /// After update `step` with loss `loss`: the warning line (without
  /// "warning: ") the first time the loss sits at the entropy.
  std::optional<std::string> afterStep(int64_t step, double loss);
  /// A loss of an update before this run (a resumed run's curve, in
  /// order): the window continues across the resume (a resumed run warned
  /// 50 updates late, at another mean, or not at all).
  void seen(double loss);

private:
  double entropy_;
  std::string unit_, advice_;
  std::deque<double> recent_;
  double sum_ = 0;
  bool warned_ = false;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_UNIGRAMWATCH_H
