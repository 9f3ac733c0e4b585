//===- BatchSourceTest.cpp - the train entry's inputs by role, per kind ---===//
#include "data/BatchSource.h"
#include "TestUtil.h"
#include "core/Error.h"

using namespace txrt::driver;

namespace {

std::vector<int32_t> ids(const Tensor &tensor) {
  return std::vector<int32_t>(tensor.as<int32_t>(),
                              tensor.as<int32_t>() + tensor.numElements());
}

EntryInfo entryWithRoles(std::vector<std::pair<std::string, std::string>>
                             nameRoles) {
  EntryInfo entry;
  entry.name = "train";
  for (auto &[name, role] : nameRoles) {
    TensorSig sig;
    sig.name = name;
    sig.role = role;
    sig.dtype = DType::I32;
    entry.inputs.push_back(sig);
  }
  return entry;
}

TEST(BatchSourceTest, LanguageModelBlocksFillTokensAndTargetsInEntryOrder) {
  // 9 tokens, blocks of 4: two blocks (8 predicted positions), batch 2.
  LanguageModelBatches source(TokenBlocks({1, 2, 3, 4, 5, 6, 7, 8, 9}, 4, 0),
                              2, 0);
  EXPECT_EQ(source.plan().batchesPerEpoch(), 1);
  // Declared targets first: the order follows the entry, not the source.
  EntryInfo entry = entryWithRoles({{"labels", "targets"}, {"ids", "tokens"}});
  TrainBatch batch = source.batch(entry, 1);
  ASSERT_EQ(batch.inputs.size(), 2u);
  std::vector<int32_t> tokens = ids(*batch.inputs[1]),
                       targets = ids(*batch.inputs[0]);
  ASSERT_EQ(tokens.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(targets[i], tokens[i] + 1) << i;
  EXPECT_EQ(batch.targetTokens, 8);
}

TEST(BatchSourceTest, ClassifierBatchesPadTokensZeroSegmentsAndLabels) {
  std::vector<EncodedExample> examples = {{{2, 7, 8}, 1}, {{2, 9}, 0}};
  ClassifierBatches source(examples, 0, 2, 0);
  EntryInfo entry = entryWithRoles(
      {{"ids", "tokens"}, {"segments", "segments"}, {"labels", "label"}});
  TrainBatch batch = source.batch(entry, 1);
  ASSERT_EQ(batch.inputs.size(), 3u);
  const Tensor &tokens = *batch.inputs[0], &segments = *batch.inputs[1],
               &labels = *batch.inputs[2];
  ASSERT_EQ(tokens.shape, (Shape{2, 3}));
  EXPECT_EQ(segments.shape, tokens.shape);
  for (int32_t id : ids(segments))
    EXPECT_EQ(id, 0);
  ASSERT_EQ(labels.shape, (Shape{2}));
  // Rows in the plan's order; each row's label goes with its tokens.
  for (int64_t row = 0; row < 2; ++row) {
    int32_t first = tokens.as<int32_t>()[row * 3 + 1];
    EXPECT_EQ(labels.as<int32_t>()[row], first == 7 ? 1 : 0);
  }
  EXPECT_EQ(batch.targetTokens, 2);
}

TEST(BatchSourceTest, Seq2SeqBatchesByRole) {
  Vocabulary target = Vocabulary::build({{"a", "b"}}, 1, 0);
  Seq2SeqBatches source(PairIds::fromPairs({{{5, 6}, {target.id("a")}, 1}}),
                        target, 0, 1, 0);
  EntryInfo entry = entryWithRoles({{"x", "source"},
                                    {"y_in", "target_in"},
                                    {"y_out", "target_out"}});
  TrainBatch batch = source.batch(entry, 1);
  EXPECT_EQ(ids(*batch.inputs[0]), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(ids(*batch.inputs[1]),
            (std::vector<int32_t>{target.sosId(), target.id("a")}));
  EXPECT_EQ(ids(*batch.inputs[2]),
            (std::vector<int32_t>{target.id("a"), target.eosId()}));
}

TEST(BatchSourceTest, AnInputWithAnotherRoleIsAModelError) {
  LanguageModelBatches source(TokenBlocks({1, 2, 3}, 2, 0), 1, 0);
  EntryInfo entry = entryWithRoles({{"ids", "tokens"}, {"seg", "segments"}});
  EXPECT_THROW_MESSAGE(source.batch(entry, 1), ModelError,
                       "input 'seg' of entry 'train' has role 'segments'; "
                       "the driver feeds this model kind's roles tokens, "
                       "targets");
}

} // namespace
