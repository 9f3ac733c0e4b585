//===- Bleu.cpp - corpus BLEU-4 (Papineni et al. 2002) --------------------===//
#include "loop/Bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace txrt::driver {

namespace {

using NgramCounts = std::map<std::vector<std::string>, int64_t>;

NgramCounts countNgrams(const std::vector<std::string> &words, size_t order) {
  NgramCounts counts;
  for (size_t i = 0; i + order <= words.size(); ++i)
    ++counts[std::vector<std::string>(words.begin() + std::ptrdiff_t(i),
                                      words.begin() +
                                          std::ptrdiff_t(i + order))];
  return counts;
}

} // namespace

void BleuAccumulator::add(const std::vector<std::string> &hypothesis,
                          const std::vector<std::string> &reference) {
  hypothesisLength_ += int64_t(hypothesis.size());
  referenceLength_ += int64_t(reference.size());
  for (size_t n = 1; n <= size_t(kBleuMaxOrder); ++n) {
    NgramCounts hyp = countNgrams(hypothesis, n);
    NgramCounts ref = countNgrams(reference, n);
    for (const auto &[ngram, count] : hyp) {
      auto found = ref.find(ngram);
      if (found != ref.end())
        matches_[n - 1] += std::min(count, found->second);
    }
    if (hypothesis.size() >= n)
      totals_[n - 1] += int64_t(hypothesis.size() - n + 1);
  }
}

BleuScore BleuAccumulator::score() const {
  BleuScore score;
  score.hypothesisLength = hypothesisLength_;
  score.referenceLength = referenceLength_;
  double logSum = 0;
  bool zero = false;
  score.order = 0;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (totals_[n] == 0) // no n-grams of this order anywhere: not counted
      continue;
    ++score.order;
    if (matches_[n] == 0) {
      zero = true;
      continue;
    }
    double p = double(matches_[n]) / double(totals_[n]);
    score.precisions[n] = 100.0 * p;
    logSum += std::log(p);
  }
  if (referenceLength_ > 0)
    score.lengthRatio = double(hypothesisLength_) / double(referenceLength_);
  if (hypothesisLength_ == 0)
    score.brevityPenalty = 0;
  else if (hypothesisLength_ > referenceLength_)
    score.brevityPenalty = 1;
  else
    score.brevityPenalty = std::exp(1.0 - double(referenceLength_) /
                                              double(hypothesisLength_));
  score.bleu = zero || score.order == 0
                   ? 0.0
                   : 100.0 * score.brevityPenalty *
                         std::exp(logSum / double(score.order));
  return score;
}

std::string formatBleu(const BleuScore &score) {
  char text[200];
  std::snprintf(text, sizeof(text),
                "BLEU = %.2f (%.1f/%.1f/%.1f/%.1f, BP %.3f, ratio %.3f, hyp "
                "%lld, ref %lld%s)",
                score.bleu, score.precisions[0], score.precisions[1],
                score.precisions[2], score.precisions[3], score.brevityPenalty,
                score.lengthRatio,
                static_cast<long long>(score.hypothesisLength),
                static_cast<long long>(score.referenceLength),
                score.order == kBleuMaxOrder
                    ? ""
                    : (", effective order " + std::to_string(score.order)).c_str());
  return text;
}

} // namespace txrt::driver
