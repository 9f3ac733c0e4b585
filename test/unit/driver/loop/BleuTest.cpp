//===- BleuTest.cpp - corpus BLEU-4 against hand-computed values ----------===//
#include "loop/Bleu.h"
#include "TestUtil.h"
#include "data/Tokenizer.h"

#include <cmath>

using namespace txrt::driver;

namespace {

double bleuOf(const std::vector<std::pair<std::string, std::string>> &pairs) {
  BleuAccumulator bleu;
  for (const auto &[hyp, ref] : pairs)
    bleu.add(splitWords(hyp), splitWords(ref));
  return bleu.score().bleu;
}

TEST(BleuTest, IdenticalIsOneHundred) {
  EXPECT_DOUBLE_EQ(bleuOf({{"the cat sat on the mat", "the cat sat on the mat"}}),
                   100.0);
}

TEST(BleuTest, ModifiedPrecisionsGeometricMean) {
  // p1 = 4/5, p2 = 3/4, p3 = 2/3, p4 = 1/2, BP = 1: (0.2)^(1/4).
  BleuAccumulator bleu;
  bleu.add(splitWords("a b c d e"), splitWords("a b c d f"));
  BleuScore score = bleu.score();
  EXPECT_NEAR(score.bleu, 100.0 * std::pow(0.2, 0.25), 1e-9);
  EXPECT_NEAR(score.precisions[0], 80.0, 1e-9);
  EXPECT_NEAR(score.precisions[3], 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(score.brevityPenalty, 1.0);
}

TEST(BleuTest, BrevityPenalty) {
  // All precisions 1, c = 4, r = 6: exp(1 - 6/4).
  EXPECT_NEAR(bleuOf({{"a b c d", "a b c d e f"}}), 100.0 * std::exp(-0.5),
              1e-9);
}

TEST(BleuTest, ClippingAndZeroPrecision) {
  // Papineni's example: "the" x7 against a reference with two "the": p1 =
  // 2/7 and no bigram matches, so BLEU is 0 without smoothing.
  BleuAccumulator bleu;
  bleu.add(splitWords("the the the the the the the"),
           splitWords("the cat is on the mat"));
  BleuScore score = bleu.score();
  EXPECT_NEAR(score.precisions[0], 100.0 * 2 / 7, 1e-9);
  EXPECT_EQ(score.bleu, 0.0);
}

TEST(BleuTest, CorpusStatisticsArePooled) {
  // Sentence 1: 4/4, 3/3, 2/2, 1/1; sentence 2: 2/3, 1/2, 0/1, 0/0.
  // Pooled: 6/7, 4/5, 2/3, 1/1; c = 7, r = 7.
  double expected =
      100.0 * std::exp((std::log(6.0 / 7) + std::log(4.0 / 5) +
                        std::log(2.0 / 3) + std::log(1.0)) /
                       4);
  EXPECT_NEAR(bleuOf({{"a b c d", "a b c d"}, {"x y q", "x y z"}}), expected,
              1e-9);
  EXPECT_EQ(formatBleu(BleuScore{}).rfind("BLEU = 0.00", 0), 0u);
}

TEST(BleuTest, OrdersWithoutNgramsAreLeftOut) {
  // Three-word sentences have no 4-grams: the mean runs over orders 1..3
  // (sacrebleu's effective order) instead of giving 0.
  BleuAccumulator bleu;
  bleu.add(splitWords("te amo mucho"), splitWords("te amo mucho"));
  bleu.add(splitWords("me ves hoy"), splitWords("me ves ya"));
  BleuScore score = bleu.score();
  EXPECT_EQ(score.order, 3);
  double expected = 100.0 * std::exp((std::log(5.0 / 6) + std::log(3.0 / 4) +
                                      std::log(1.0 / 2)) /
                                     3);
  EXPECT_NEAR(score.bleu, expected, 1e-9);
  EXPECT_NE(formatBleu(score).find("effective order 3"), std::string::npos);
}

} // namespace
