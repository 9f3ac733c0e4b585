//===- TokenStatsTest.cpp - eval's and validation's token loss / accuracy -===//
#include "TestUtil.h"
#include "commands/EvalCommand.h"

#include <cmath>
#include <limits>

using namespace txrt::driver;

namespace {

// Accuracy takes torch.argmax's choice: the first NaN wins (a NaN past id 0
// was skipped, so a row with a NaN logit counted a correct token where its
// loss was NaN), and pad targets are skipped.
TEST(TokenStatsTest, AccuracyTakesTheFirstNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor logits(DType::F32, {1, 3, 4}), targets(DType::I32, {1, 3});
  const float values[12] = {0, 1,   9, 2,  // argmax 2
                            0, nan, 9, 2,  // NaN at 1 wins over 9
                            1, 1,   1, 1}; // target pad: skipped
  std::copy(values, values + 12, logits.as<float>());
  const int32_t ids[3] = {2, 2, 0};
  std::copy(ids, ids + 3, targets.as<int32_t>());
  TokenStats stats;
  accumulateTokenStats(logits, targets, /*pad=*/0, stats);
  EXPECT_EQ(stats.tokens, 2);
  EXPECT_EQ(stats.correct, 1);
  EXPECT_TRUE(std::isnan(stats.lossSum));
  // The first row whose loss is not finite (eval names its example); a
  // later call keeps it.
  EXPECT_EQ(stats.firstNonFiniteRow, 0);
  accumulateTokenStats(logits, targets, /*pad=*/0, stats);
  EXPECT_EQ(stats.firstNonFiniteRow, 0);
  // Two rows, the NaN in the second: row 1.
  Tensor two(DType::F32, {2, 1, 4}), twoTargets(DType::I32, {2, 1});
  const float twoValues[8] = {0, 1, 9, 2, 0, nan, 9, 2};
  std::copy(twoValues, twoValues + 8, two.as<float>());
  twoTargets.as<int32_t>()[0] = twoTargets.as<int32_t>()[1] = 2;
  TokenStats second;
  accumulateTokenStats(two, twoTargets, /*pad=*/0, second);
  EXPECT_EQ(second.firstNonFiniteRow, 1);
}

} // namespace
