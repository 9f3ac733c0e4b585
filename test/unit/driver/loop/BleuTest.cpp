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

//===----------------------------------------------------------------------===//
// sacreBLEU (13a tokenization, exp smoothing). The expected numbers come
// from an independent Python implementation of sacreBLEU 2.x's
// tokenizer_13a (its four re.sub passes) and compute_bleu, and the
// arithmetic is spelled out beside each.
//===----------------------------------------------------------------------===//

TEST(BleuTest, Tokenize13aSplitsPunctuationButNotNumbers) {
  std::vector<std::string> expected = {
      "Hello", ",", "world", "!", "It's", "3.14", "and", "1,000", "e-mail",
      "5",     "-", "6",     "(", "x",    ")",    "\"",  "q",     "\"",
      "a",     ".", "b",     "\"", "tú",  ".",    "\""};
  EXPECT_EQ(tokenize13a("Hello, world! It's 3.14 and 1,000 e-mail 5-6 (x) "
                        "&quot;q&quot; a.b \"tú.\""),
            expected);
  EXPECT_EQ(tokenize13a("a<skipped>b  c\u00a0d"),
            (std::vector<std::string>{"ab", "c", "d"}));
  EXPECT_TRUE(tokenize13a(" \t ").empty());
}

TEST(BleuTest, SacreBleuIsCaseSensitiveOn13aTokens) {
  // 13a tokens: "The cat sat on the mat ." / "A dog barked loudly at 3pm !"
  // against "The cat sat on a mat ." / "The dog barked at 3 pm !":
  // matches 10/14, 5/12, 2/10, 1/8; c = r = 14, BP 1;
  // BLEU = 100 * (10/14 * 5/12 * 2/10 * 1/8)^(1/4) = 29.369745473496...
  BleuScore score = sacreBleu(
      {"The cat sat on the mat.", "A dog barked loudly at 3pm!  "},
      {"The cat sat on a mat.", "The dog barked at 3 pm!"});
  EXPECT_NEAR(score.bleu, 29.369745473496074, 1e-9);
  EXPECT_NEAR(score.precisions[0], 100.0 * 10 / 14, 1e-9);
  EXPECT_NEAR(score.precisions[3], 12.5, 1e-9);
  EXPECT_EQ(score.hypothesisLength, 14);
  EXPECT_EQ(score.referenceLength, 14);
}

TEST(BleuTest, SacreBleuExpSmoothing) {
  // One unigram matches, no longer n-gram: the k-th zero gets
  // 100 / (2^k * total): p = 20, 100/(2*4), 100/(4*3), 100/(8*2) = 20,
  // 12.5, 8.3333, 6.25; c = 5, r = 7: BP = exp(1 - 7/5).
  BleuScore score = sacreBleu({"a y z w v"}, {"a b c d e f g"});
  EXPECT_NEAR(score.bleu, 7.160476144948853, 1e-9);
  EXPECT_NEAR(score.precisions[2], 100.0 / 12, 1e-9);
  EXPECT_NEAR(score.brevityPenalty, std::exp(-0.4), 1e-12);
}

TEST(BleuTest, SacreBleuWithoutAnyMatchIsZero) {
  // sacreBLEU stops early when no n-gram of any order matches: BLEU 0 and
  // zero precisions (the smoothing gave 3.58 here before).
  BleuScore score = sacreBleu({"x y z w v"}, {"a b c d e f g"});
  EXPECT_EQ(score.bleu, 0.0);
  for (double precision : score.precisions)
    EXPECT_EQ(precision, 0.0);
  EXPECT_NEAR(score.brevityPenalty, std::exp(-0.4), 1e-12);
}

TEST(BleuTest, SacreBleuHasNoEffectiveOrder) {
  // Perfect matches but no 4-grams in the corpus: sacreBLEU's corpus score
  // keeps order 4, p_4 = 0 and log 0 taken as -9999999999: BLEU 0 (the
  // word-level score() leaves the order out instead).
  BleuScore score = sacreBleu({"the cat sat", "a b"}, {"the cat sat", "a b"});
  EXPECT_EQ(score.bleu, 0.0);
  EXPECT_NEAR(score.precisions[2], 100.0, 1e-12);
  EXPECT_EQ(score.precisions[3], 0.0);
  EXPECT_DOUBLE_EQ(sacreBleu({"the cat sat on the mat"},
                             {"the cat sat on the mat"})
                       .bleu,
                   100.0);
}

TEST(BleuTest, SacreBleuNeedsOneReferencePerHypothesis) {
  EXPECT_THROW(sacreBleu({"a"}, {}), std::invalid_argument);
}

} // namespace
