//===- UnigramWatch.cpp - a loss stuck at the unigram entropy -------------===//
#include "loop/UnigramWatch.h"

#include <cmath>
#include <cstdio>

namespace txrt::driver {

double unigramEntropy(const std::vector<int64_t> &counts) {
  double total = 0;
  for (int64_t count : counts)
    total += double(count);
  double entropy = 0;
  for (int64_t count : counts)
    if (count > 0) {
      double p = double(count) / total;
      entropy -= p * std::log(p);
    }
  return entropy;
}

void UnigramWatch::seen(double loss) {
  if (!std::isfinite(loss))
    return;
  recent_.push_back(loss);
  sum_ += loss;
  if (recent_.size() > kWindow) {
    sum_ -= recent_.front();
    recent_.pop_front();
  }
}

std::optional<std::string> UnigramWatch::afterStep(int64_t step, double loss) {
  if (warned_ || !std::isfinite(loss) || !(entropy_ > 0))
    return std::nullopt;
  seen(loss);
  if (step < kMinUpdates || recent_.size() < kWindow)
    return std::nullopt;
  double mean = sum_ / double(recent_.size());
  if (std::fabs(mean - entropy_) > kTolerance * entropy_)
    return std::nullopt;
  warned_ = true;
  char line[320];
  std::snprintf(line, sizeof(line),
                "the loss (%.4f) is at the unigram entropy of the targets "
                "(%.4f) after %lld steps: the model predicts %s "
                "frequencies only; ",
                mean, entropy_, static_cast<long long>(step), unit_.c_str());
  return std::string(line) + advice_;
}

} // namespace txrt::driver
