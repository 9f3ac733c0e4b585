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
}

} // namespace
