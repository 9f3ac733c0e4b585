//===- BatchingTest.cpp - bucketed batches: deterministic and complete ----===//
#include "data/Batching.h"
#include "TestUtil.h"

#include <algorithm>

using namespace txrt::driver;

namespace {

std::vector<std::pair<int64_t, int64_t>> someLengths(int n) {
  std::vector<std::pair<int64_t, int64_t>> lengths;
  for (int i = 0; i < n; ++i)
    lengths.emplace_back(1 + (i * 7) % 5, 1 + (i * 3) % 4);
  return lengths;
}

TEST(BatchingTest, EveryExampleOncePerEpoch) {
  BatchPlan plan(someLengths(37), 4, 9);
  EXPECT_EQ(plan.batchesPerEpoch(), 10);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<size_t> seen;
    auto batches = plan.epoch(epoch);
    EXPECT_EQ(int64_t(batches.size()), plan.batchesPerEpoch());
    for (const auto &batch : batches) {
      EXPECT_LE(batch.size(), 4u);
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    std::sort(seen.begin(), seen.end());
    for (size_t i = 0; i < seen.size(); ++i)
      EXPECT_EQ(seen[i], i);
    EXPECT_EQ(seen.size(), 37u);
  }
}

TEST(BatchingTest, StepOffsetShiftsPositionsAndEpochSteps) {
  // A run resumed from a checkpoint of another cut goes on in that run's
  // epoch: its steps take this plan's batches `offset` updates later.
  BatchPlan plan(someLengths(37), 4, 9);
  plan.setStepOffset(7);
  EXPECT_EQ(plan.positionOfStep(4), std::make_pair(int64_t(1), int64_t(0)));
  EXPECT_EQ(plan.stepOfPosition(1, 0), 4);
  int64_t steps = 0;
  ASSERT_TRUE(plan.stepsOfEpochs(2, 1000, steps));
  EXPECT_EQ(steps, 20 - 7);
  BatchPlan tokens(someLengths(37), 4, 12, 9);
  EXPECT_EQ(tokens.stepOfPosition(2, 1),
            tokens.batchesInEpoch(0) + tokens.batchesInEpoch(1) + 2);
  tokens.setStepOffset(-3);
  EXPECT_EQ(tokens.positionOfStep(tokens.stepOfPosition(2, 1)),
            std::make_pair(int64_t(2), int64_t(1)));
}

TEST(BatchingTest, ResumingAnotherCutTakesEachExampleOnceFromAnEpochStart) {
  // A tester's resume with --batch 2 of a --batch 4 checkpoint took the new
  // cut's batch of the next step: 8 of 18 pairs twice and 4 never in that
  // epoch, without a word.
  BatchPlan before(someLengths(18), 4, 0), now(someLengths(18), 2, 0);
  std::string change;
  // Stopped at the end of epoch 1 (step 5 of 5 batches): the new cut's
  // whole epoch 2, nothing said.
  EXPECT_EQ(resumedBatchIndex(examplesOfBatches(before, 1, 0, 0), 1, now,
                              "pairs", change),
            0);
  EXPECT_EQ(change, "");
  // Stopped after 3 of 5 batches: the batch that repeats and skips the
  // fewest, and what it repeats and skips, counted.
  const int64_t index = resumedBatchIndex(examplesOfBatches(before, 0, 0, 3),
                                          0, now, "pairs", change);
  std::vector<int> times(18, 0);
  auto old = before.epoch(0), cut = now.epoch(0);
  for (int64_t b = 0; b < 3; ++b)
    for (size_t example : old[size_t(b)])
      ++times[example];
  for (int64_t b = index; b < int64_t(cut.size()); ++b)
    for (size_t example : cut[size_t(b)])
      ++times[example];
  const int64_t again = std::count(times.begin(), times.end(), 2);
  const int64_t never = std::count(times.begin(), times.end(), 0);
  ASSERT_GT(again + never, 0);
  EXPECT_EQ(change, "of epoch 1's 18 pairs, " + std::to_string(again) +
                        " the run so far trained on come again before it "
                        "ends, and " +
                        std::to_string(never) +
                        " it had not reached are skipped");
  // No other batch of the new cut does better.
  for (int64_t j = 0; j <= int64_t(cut.size()); ++j) {
    std::vector<int> other(18, 0);
    for (int64_t b = 0; b < 3; ++b)
      for (size_t example : old[size_t(b)])
        ++other[example];
    for (int64_t b = j; b < int64_t(cut.size()); ++b)
      for (size_t example : cut[size_t(b)])
        ++other[example];
    EXPECT_GE(std::count(other.begin(), other.end(), 2) +
                  std::count(other.begin(), other.end(), 0),
              again + never)
        << "batch " << j;
  }
}

TEST(BatchingTest, HugeBatchSizesNeitherOverflowNorHang) {
  // The default batch is the bound of B, which a model may set to 2^62:
  // batch * 16 wrapped to 0 and the epoch never ended.
  for (int64_t batch : {int64_t(1) << 59, int64_t(1) << 62, INT64_MAX}) {
    SCOPED_TRACE(batch);
    BatchPlan plan(someLengths(8), batch, 3);
    EXPECT_EQ(plan.batchesPerEpoch(), 1);
    auto batches = plan.epoch(0);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(batches[0].size(), 8u);
    EXPECT_EQ(plan.positionOfStep(int64_t(1) << 40),
              std::make_pair((int64_t(1) << 40) - 1, int64_t(0)));
  }
}

TEST(BatchingTest, OrderIsAFunctionOfSeedAndEpoch) {
  BatchPlan a(someLengths(50), 4, 1), b(someLengths(50), 4, 1),
      c(someLengths(50), 4, 2);
  EXPECT_EQ(a.epoch(0), b.epoch(0));
  EXPECT_EQ(a.epoch(3), b.epoch(3));
  EXPECT_NE(a.epoch(0), a.epoch(1));
  EXPECT_NE(a.epoch(0), c.epoch(0));
  EXPECT_EQ(a.positionOfStep(1), (std::pair<int64_t, int64_t>{0, 0}));
  EXPECT_EQ(a.positionOfStep(13), (std::pair<int64_t, int64_t>{0, 12}));
  EXPECT_EQ(a.positionOfStep(14), (std::pair<int64_t, int64_t>{1, 0}));
}

TEST(BatchingTest, BatchesWithinAWindowAreSortedByLength) {
  auto lengths = someLengths(64); // one window of 16 batches of 4
  BatchPlan plan(lengths, 4, 5);
  auto batches = plan.epoch(0);
  std::vector<std::pair<int64_t, int64_t>> firsts;
  for (const auto &batch : batches) {
    for (size_t i = 1; i < batch.size(); ++i)
      EXPECT_LE(lengths[batch[i - 1]], lengths[batch[i]]);
    firsts.push_back(lengths[batch.front()]);
  }
  // The batches themselves are shuffled, not left in length order.
  EXPECT_FALSE(std::is_sorted(firsts.begin(), firsts.end()));
}

TEST(BatchingTest, PadsToTheLongestWithSosAndEos) {
  Vocabulary target = Vocabulary::build({{"x", "y"}}, 1, 0);
  std::vector<EncodedPair> pairs = {{{5, 6, 7}, {4}, 1}, {{5}, {4, 5}, 2}};
  Batch batch = makeBatch(pairs, {1, 0}, target, 0);
  EXPECT_EQ(batch.src.shape, (Shape{2, 3}));
  EXPECT_EQ(std::vector<int32_t>(batch.src.as<int32_t>(),
                                 batch.src.as<int32_t>() + 6),
            (std::vector<int32_t>{5, 0, 0, 5, 6, 7}));
  EXPECT_EQ(batch.tgtIn.shape, (Shape{2, 3}));
  EXPECT_EQ(std::vector<int32_t>(batch.tgtIn.as<int32_t>(),
                                 batch.tgtIn.as<int32_t>() + 6),
            (std::vector<int32_t>{2, 4, 5, 2, 4, 0}));
  EXPECT_EQ(std::vector<int32_t>(batch.tgtOut.as<int32_t>(),
                                 batch.tgtOut.as<int32_t>() + 6),
            (std::vector<int32_t>{4, 5, 3, 4, 3, 0}));
  EXPECT_EQ(batch.targetTokens, 5);
}

std::vector<int32_t> idsOf(const Tensor &tensor) {
  return std::vector<int32_t>(tensor.as<int32_t>(),
                              tensor.as<int32_t>() + tensor.numElements());
}

TEST(BatchingTest, FullBatchesCompleteTheLastWithOtherExamples) {
  // A model whose batch is a constant of the spec (i32[4, T]) takes 4 rows
  // every step: 37 examples made a last batch of 1, which it refused.
  BatchPlan plan(someLengths(37), 4, 9, LastBatch::Completed);
  EXPECT_EQ(plan.batchesPerEpoch(), 10);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<size_t> seen;
    for (const auto &batch : plan.epoch(epoch)) {
      ASSERT_EQ(batch.size(), 4u);
      std::vector<size_t> sorted = batch;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
          << "an example twice in one batch";
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    EXPECT_EQ(seen.size(), 37u); // every example, three of them twice
  }
  BatchPlan again(someLengths(37), 4, 9, LastBatch::Completed);
  EXPECT_EQ(plan.epoch(2), again.epoch(2));
}

TEST(BatchingTest, FullBatchesRepeatExamplesWhenThereAreTooFew) {
  BatchPlan plan(someLengths(3), 8, 1, LastBatch::Completed);
  auto batches = plan.epoch(0);
  ASSERT_EQ(batches.size(), 1u);
  ASSERT_EQ(batches[0].size(), 8u);
  std::vector<size_t> counts(3, 0);
  for (size_t index : batches[0])
    ++counts[index];
  for (size_t count : counts) // 8 rows from 3 examples: 2 or 3 each
    EXPECT_TRUE(count == 2 || count == 3) << count;
}

TEST(BatchingTest, PadsToTheLengthsASpecWrites) {
  Vocabulary target = Vocabulary::build({{"x", "y"}}, 1, 0);
  std::vector<EncodedPair> pairs = {{{5, 6, 7}, {4}, 1}, {{5}, {4, 5}, 2}};
  Batch batch = makeBatch(pairs, {1, 0}, target, 0, 6, 5);
  EXPECT_EQ(batch.src.shape, (Shape{2, 6}));
  EXPECT_EQ(batch.tgtIn.shape, (Shape{2, 5}));
  EXPECT_EQ(batch.tgtOut.shape, (Shape{2, 5}));
  EXPECT_EQ(idsOf(batch.tgtOut),
            (std::vector<int32_t>{4, 5, 3, 0, 0, 4, 3, 0, 0, 0}));
  EXPECT_EQ(batch.targetTokens, 5);
  padBatchRows(batch, 0, 3);
  EXPECT_EQ(batch.src.shape, (Shape{3, 6}));
  EXPECT_EQ(batch.tgtIn.shape, (Shape{3, 5}));
  EXPECT_EQ(idsOf(batch.src), (std::vector<int32_t>{5, 0, 0, 0, 0, 0, //
                                                    5, 6, 7, 0, 0, 0, //
                                                    0, 0, 0, 0, 0, 0}));
}

TEST(BatchingTest, PadIdsToGrowsOnlyWhatIsShort) {
  auto ids = [] { return padSequences({{1, 2}, {3}}, 9); };
  Tensor same = padIdsTo(ids(), 9, 1, 1);
  EXPECT_EQ(same.shape, (Shape{2, 2}));
  EXPECT_EQ(idsOf(same), (std::vector<int32_t>{1, 2, 3, 9}));
  Tensor grown = padIdsTo(ids(), 9, 3, 4);
  EXPECT_EQ(grown.shape, (Shape{3, 4}));
  EXPECT_EQ(idsOf(grown),
            (std::vector<int32_t>{1, 2, 9, 9, 3, 9, 9, 9, 9, 9, 9, 9}));
  EXPECT_EQ(padIdsTo(ids(), 9, 1, 3).shape, (Shape{2, 3}));
}

} // namespace
