//===- TokenBatchesTest.cpp - --max-tokens batches: bounded, complete, replayable ===//
#include "data/Batching.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <algorithm>

using namespace txrt::driver;

namespace {

ExampleLengths variedLengths(int n) {
  ExampleLengths lengths;
  for (int i = 0; i < n; ++i)
    lengths.emplace_back(1 + (i * 7) % 13, 2 + (i * 5) % 11);
  return lengths;
}

/// The batches of steps first..last, as the training loop takes them.
std::vector<std::vector<size_t>> batchesOfSteps(const BatchPlan &plan,
                                                int64_t first, int64_t last) {
  std::vector<std::vector<size_t>> taken;
  for (int64_t step = first; step <= last; ++step) {
    auto [epoch, index] = plan.positionOfStep(step);
    taken.push_back(plan.epoch(epoch)[size_t(index)]);
  }
  return taken;
}

} // namespace

TEST(TokenBatchesTest, PaddedTokensCountTheWiderSide) {
  EXPECT_EQ(paddedTokens(3, {4, 7}), 21);
  EXPECT_EQ(paddedTokens(3, {0, 0}), 3); // a side is at least one wide
  EXPECT_EQ(paddedTokens(INT64_MAX, {2, 2}), INT64_MAX);
}

TEST(TokenBatchesTest, BatchesStayWithinTokensAndRows) {
  ExampleLengths lengths = variedLengths(300);
  BatchPlan plan(lengths, /*maxRows=*/6, /*maxTokens=*/40, 7);
  bool someBatchFilledByTokens = false;
  for (int64_t epoch = 0; epoch < 3; ++epoch)
    for (const auto &batch : plan.epoch(epoch)) {
      std::pair<int64_t, int64_t> longest{0, 0};
      for (size_t index : batch)
        longest = {std::max(longest.first, lengths[index].first),
                   std::max(longest.second, lengths[index].second)};
      EXPECT_LE(int64_t(batch.size()), 6);
      EXPECT_LE(paddedTokens(int64_t(batch.size()), longest), 40);
      someBatchFilledByTokens |= batch.size() < 6 && longest.second > 6;
    }
  EXPECT_TRUE(someBatchFilledByTokens);
}

TEST(TokenBatchesTest, EveryExampleExactlyOncePerEpoch) {
  BatchPlan plan(variedLengths(203), 8, 50, 3);
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    std::vector<size_t> seen;
    auto batches = plan.epoch(epoch);
    EXPECT_EQ(int64_t(batches.size()), plan.batchesInEpoch(epoch));
    for (const auto &batch : batches)
      seen.insert(seen.end(), batch.begin(), batch.end());
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), 203u);
    for (size_t i = 0; i < seen.size(); ++i)
      EXPECT_EQ(seen[i], i);
  }
}

TEST(TokenBatchesTest, OrderIsAFunctionOfSeedAndEpoch) {
  BatchPlan a(variedLengths(120), 8, 50, 1), b(variedLengths(120), 8, 50, 1),
      c(variedLengths(120), 8, 50, 2);
  EXPECT_EQ(a.epoch(2), b.epoch(2));
  EXPECT_NE(a.epoch(0), a.epoch(1));
  EXPECT_NE(a.epoch(0), c.epoch(0));
  // Within a batch the pool's length order shows.
  ExampleLengths lengths = variedLengths(120);
  for (const auto &batch : a.epoch(0))
    for (size_t i = 1; i < batch.size(); ++i)
      EXPECT_LE(lengths[batch[i - 1]], lengths[batch[i]]);
}

TEST(TokenBatchesTest, AResumedPlanTakesTheSameBatches) {
  // The resumed run's plan has counted no epoch yet; it must find step 40
  // where the unbroken run is when it gets there (epochs of varying size).
  BatchPlan unbroken(variedLengths(90), 8, 45, 11);
  BatchPlan resumed(variedLengths(90), 8, 45, 11);
  EXPECT_NE(unbroken.batchesInEpoch(0), 0);
  auto whole = batchesOfSteps(unbroken, 1, 80);
  auto tail = batchesOfSteps(resumed, 41, 80);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), whole.begin() + 40));
  int64_t steps = 0;
  ASSERT_TRUE(unbroken.stepsOfEpochs(3, 1000, steps));
  EXPECT_EQ(steps, unbroken.batchesInEpoch(0) + unbroken.batchesInEpoch(1) +
                       unbroken.batchesInEpoch(2));
  EXPECT_EQ(unbroken.positionOfStep(steps + 1),
            (std::pair<int64_t, int64_t>{3, 0}));
  EXPECT_FALSE(unbroken.stepsOfEpochs(3, steps - 1, steps));
}

TEST(TokenBatchesTest, AnExampleLargerThanTheBudgetIsAnInputError) {
  // Every one named (the first alone was).
  ExampleLengths lengths = {{3, 4}, {30, 5}, {2, 2}, {25, 1}};
  try {
    BatchPlan plan(lengths, 8, 20, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError &error) {
    EXPECT_NE(std::string(error.what()).find("example 4 of the training data"),
              std::string::npos)
        << error.what();
  }
  lengths = {{3, 4}, {30, 5}};
  try {
    BatchPlan plan(lengths, 8, 20, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError &error) {
    EXPECT_NE(std::string(error.what())
                  .find("--max-tokens 20 is smaller than example 2 of the "
                        "training data"),
              std::string::npos)
        << error.what();
  }
}
