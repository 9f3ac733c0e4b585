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
// smooth_method='none', tokenize='none', use_effective_order=True on the
// same words computes the same). Orders of which the hypotheses have no n-gram at all (a corpus of
// sentences shorter than 4 words has no 4-grams) are left out of the mean,
// as sacrebleu's effective order does; `order` says how many were used. The
// words are the tokenizer's (lowercased, punctuation split).
//
// sacreBleu() is the number people report: sacreBLEU 2.x's corpus_bleu
// with its defaults (`sacrebleu REF < HYP`), on detokenized strings:
//
//   tokenize13a  mteval-v13a as sacreBLEU writes it: drop "<skipped>",
//                join "-\n", newlines to spaces, unescape &quot; &amp; &lt;
//                &gt;; then, on " line ", four regex passes in order:
//                  ([{-~[-` -&(-+:-@/])  -> " \1 "  (punctuation apart from
//                                                  ' , - . becomes a token)
//                  ([^0-9])([.,])       -> "\1 \2 " (. and , split off ...
//                  ([.,])([^0-9])       -> " \1 \2" ... unless inside a number)
//                  ([0-9])(-)           -> "\1 \2 " (a dash after a digit)
//                and whitespace-split. Case is kept (lowercase=False); the
//                hypothesis is right-stripped first, as sacreBLEU does.
//   smoothing    'exp' (the default): the k-th order with 0 matches gets
//                p_n = 100 / (2^k * total_n) instead of 0.
//   order        always 4 (use_effective_order=False for corpus BLEU): an
//                order with no hypothesis n-grams at all stops the loop and
//                leaves p_n = 0, whose log sacreBLEU takes as -9999999999,
//                so the score is 0.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_BLEU_H
#define TXRT_DRIVER_BLEU_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
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
  /// sacreBLEU's corpus score of the same statistics (exp smoothing, no
  /// effective order), for words from tokenize13a.
  BleuScore sacreBleuScore() const;

private:
  std::array<int64_t, kBleuMaxOrder> matches_{}, totals_{};
  int64_t hypothesisLength_ = 0, referenceLength_ = 0;
};

/// sacreBLEU's default tokenization of one detokenized sentence.
std::vector<std::string> tokenize13a(std::string_view line);

/// Corpus BLEU as `sacrebleu REFERENCES < HYPOTHESES` prints it (defaults:
/// 13a, exp smoothing, case-sensitive); one reference per hypothesis.
/// Throws std::invalid_argument when the counts differ.
BleuScore sacreBleu(const std::vector<std::string> &hypotheses,
                    const std::vector<std::string> &references);

/// "BLEU = 45.67 (82.1/56.0/40.0/30.0, BP 1.000, ratio 1.050, hyp 21, ref 20)".
std::string formatBleu(const BleuScore &score);

} // namespace txrt::driver

#endif // TXRT_DRIVER_BLEU_H
