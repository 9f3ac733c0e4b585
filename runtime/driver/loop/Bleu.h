//===- Bleu.h - corpus BLEU-4 (Papineni et al. 2002) ------------*- C++ -*-===//
//
// Over a corpus of (hypothesis, reference) word sequences, one reference
// each:
//
//   p_n  = sum of clipped n-gram matches / sum of hypothesis n-grams, n=1..4
//   BP   = 1 if c > r, else exp(1 - r / c)   (c, r: total hypothesis and
//                                             reference lengths)
//   BLEU = 100 * BP * exp(mean_n log p_n)
//
// without smoothing: a p_n of 0 gives BLEU 0 (sacrebleu with
// smooth_method='none', tokenize='none' on the same words computes the
// same). Orders of which the hypotheses have no n-gram at all (a corpus of
// sentences shorter than 4 words has no 4-grams) are left out of the mean,
// as sacrebleu's effective order does; `order` says how many were used. The
// words are the tokenizer's (lowercased, punctuation split).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_BLEU_H
#define TXRT_DRIVER_BLEU_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace txrt::driver {

constexpr int kBleuMaxOrder = 4;

struct BleuScore {
  double bleu = 0;                             ///< 0..100
  std::array<double, kBleuMaxOrder> precisions{}; ///< p_1..p_4 in 0..100
  double brevityPenalty = 0;
  double lengthRatio = 0; ///< c / r
  int order = kBleuMaxOrder; ///< n-gram orders in the mean (effective order)
  int64_t hypothesisLength = 0, referenceLength = 0;
};

/// Accumulates n-gram statistics sentence by sentence.
class BleuAccumulator {
public:
  void add(const std::vector<std::string> &hypothesis,
           const std::vector<std::string> &reference);
  BleuScore score() const;

private:
  std::array<int64_t, kBleuMaxOrder> matches_{}, totals_{};
  int64_t hypothesisLength_ = 0, referenceLength_ = 0;
};

/// "BLEU = 45.67 (82.1/56.0/40.0/30.0, BP 1.000, ratio 1.050, hyp 21, ref 20)".
std::string formatBleu(const BleuScore &score);

} // namespace txrt::driver

#endif // TXRT_DRIVER_BLEU_H
