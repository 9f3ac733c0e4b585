//===- UnigramWatchTest.cpp - the warning for a loss at the unigram entropy ===//
#include "loop/UnigramWatch.h"
#include "TestUtil.h"

#include <cmath>

using namespace txrt::driver;

namespace {

TEST(UnigramWatchTest, EntropyOfCountsInNats) {
  EXPECT_DOUBLE_EQ(unigramEntropy({5, 5}), std::log(2.0));
  EXPECT_DOUBLE_EQ(unigramEntropy({0, 3, 0, 3, 3, 3}), std::log(4.0));
  // p = (1/2, 1/4, 1/4): 1.5 bits.
  EXPECT_NEAR(unigramEntropy({2, 1, 1}), 1.5 * std::log(2.0), 1e-12);
  EXPECT_EQ(unigramEntropy({7}), 0.0);
  EXPECT_EQ(unigramEntropy({}), 0.0);
}

TEST(UnigramWatchTest, WarnsOnceAfterEnoughStepsAtTheEntropy) {
  UnigramWatch watch(5.0);
  // At the entropy, but too early: nothing.
  for (int64_t step = 1; step < 200; ++step)
    EXPECT_FALSE(watch.afterStep(step, 5.05)) << step;
  std::optional<std::string> warning = watch.afterStep(200, 5.05);
  ASSERT_TRUE(warning);
  EXPECT_EQ(*warning, "the loss (5.0500) is at the unigram entropy of the "
                      "targets (5.0000) after 200 steps: the model predicts "
                      "token frequencies only; check the learning-rate "
                      "schedule (warmup)");
  EXPECT_FALSE(watch.afterStep(201, 5.0));
}

TEST(UnigramWatchTest, AClassifierIsToldAboutLabels) {
  UnigramWatch watch(std::log(3.0), "label");
  std::optional<std::string> warning;
  for (int64_t step = 1; step <= 200 && !warning; ++step)
    warning = watch.afterStep(step, std::log(3.0));
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("the model predicts label frequencies only"),
            std::string::npos)
      << *warning;
}

TEST(UnigramWatchTest, ALossBelowTheEntropyOrAResumedRunsFewStepsStaySilent) {
  UnigramWatch learning(5.0);
  for (int64_t step = 1; step <= 400; ++step)
    EXPECT_FALSE(learning.afterStep(step, 4.8)); // 4 % below
  // Only the last 50 losses count: a run that passed the entropy on its
  // way down (8.0 -> 3.0) is silent.
  UnigramWatch leaving(5.0);
  for (int64_t step = 1; step <= 150; ++step)
    leaving.afterStep(step, 8.0);
  for (int64_t step = 151; step <= 199; ++step)
    leaving.afterStep(step, 3.0);
  EXPECT_FALSE(leaving.afterStep(200, 3.0));
  // A resumed run at step 1000 without its curve needs its own 50 losses
  // first.
  UnigramWatch resumed(5.0);
  for (int64_t step = 1000; step < 1049; ++step)
    EXPECT_FALSE(resumed.afterStep(step, 5.0));
  EXPECT_TRUE(resumed.afterStep(1049, 5.0));
  // No entropy (not a seq2seq model): never.
  UnigramWatch none(0.0);
  for (int64_t step = 1; step <= 300; ++step)
    EXPECT_FALSE(none.afterStep(step, 0.0));
}

// A resumed run's window starts with its curve's losses: it warned 50
// updates late, at another mean (a tester's 240 against 200), or not at all.
TEST(UnigramWatchTest, AResumedRunWarnsWhereTheWholeRunWould) {
  auto lossAt = [](int64_t step) { return 5.0 + 0.01 * double(step % 7); };
  UnigramWatch whole(5.0);
  std::optional<std::string> expected;
  int64_t warnedAt = 0;
  for (int64_t step = 1; step <= 300 && !expected; ++step)
    if ((expected = whole.afterStep(step, lossAt(step))))
      warnedAt = step;
  ASSERT_EQ(warnedAt, 200);
  UnigramWatch resumed(5.0);
  for (int64_t step = 1; step <= 190; ++step)
    resumed.seen(lossAt(step));
  std::optional<std::string> warning;
  for (int64_t step = 191; step <= 200; ++step) {
    warning = resumed.afterStep(step, lossAt(step));
    EXPECT_EQ(bool(warning), step == 200) << step;
  }
  ASSERT_TRUE(warning);
  EXPECT_EQ(*warning, *expected);
}

} // namespace
