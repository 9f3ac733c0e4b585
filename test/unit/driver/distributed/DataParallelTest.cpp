//===- DataParallelTest.cpp - batch shares and the one-process communicator ===//
#include "distributed/Communicator.h"
#include "distributed/DataParallel.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <cstring>
#include <vector>

using namespace txrt::driver;

namespace {

TEST(DataParallelTest, SharesTileTheBatchMicroBatchMajor) {
  for (int64_t rows : {1, 7, 8, 64, 65}) {
    for (int64_t updateFreq : {1, 2, 3}) {
      for (int ranks : {1, 2, 4}) {
        if (rows < updateFreq * ranks)
          continue;
        int64_t next = 0;
        for (int64_t micro = 0; micro < updateFreq; ++micro)
          for (int rank = 0; rank < ranks; ++rank) {
            RowRange share =
                shareOfBatch(rows, micro, updateFreq, rank, ranks);
            EXPECT_EQ(share.first, next);
            EXPECT_GE(share.count, rows / (updateFreq * ranks));
            EXPECT_LE(share.count, rows / (updateFreq * ranks) + 1);
            next = share.first + share.count;
          }
        EXPECT_EQ(next, rows);
      }
    }
  }
  // --batch 4 --update-freq 2 takes the rows --batch 8 takes, in halves.
  EXPECT_EQ(shareOfBatch(8, 1, 2, 0, 1).first, 4);
  // Two ranks, one micro-batch: rank 1 has the second half.
  RowRange second = shareOfBatch(10, 0, 1, 1, 2);
  EXPECT_EQ(second.first, 5);
  EXPECT_EQ(second.count, 5);
  // Fewer rows than pieces: some share is empty (the driver refuses it).
  EXPECT_EQ(shareOfBatch(3, 0, 2, 0, 2).count, 0);
}

TEST(DataParallelTest, OneProcessCommunicatorIsTheIdentity) {
  Communicator single;
  EXPECT_EQ(single.rank(), 0);
  EXPECT_EQ(single.size(), 1);
  EXPECT_FALSE(single.parallel());
  EXPECT_EQ(single.sum(2.5), 2.5);
  EXPECT_EQ(single.runtimeHooks(), nullptr);
  // Not started by mpirun: the world is this process too.
  EXPECT_EQ(Communicator::world().size(), 1);
}

TEST(DataParallelTest, BatchRowsAreSlicesOfTheBatch) {
  LanguageModelBatches source(
      TokenBlocks({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 3, 0), 4, 0);
  EntryInfo entry;
  entry.name = "train";
  for (const char *role : {"tokens", "targets"}) {
    TensorSig sig;
    sig.name = role;
    sig.role = role;
    sig.dtype = DType::I32;
    entry.inputs.push_back(sig);
  }
  TrainBatch whole = source.batch(entry, 1);
  ASSERT_EQ(source.rowsOfStep(1), 4);
  TrainBatch head = source.batchRows(entry, 1, 0, 1);
  TrainBatch tail = source.batchRows(entry, 1, 1, 3);
  const Tensor &all = *whole.inputs[0];
  std::vector<int32_t> joined(head.inputs[0]->as<int32_t>(),
                              head.inputs[0]->as<int32_t>() + 3);
  joined.insert(joined.end(), tail.inputs[0]->as<int32_t>(),
                tail.inputs[0]->as<int32_t>() + 9);
  EXPECT_EQ(joined, std::vector<int32_t>(all.as<int32_t>(),
                                         all.as<int32_t>() + 12));
  EXPECT_EQ(head.targetTokens + tail.targetTokens, whole.targetTokens);
}

TEST(DataParallelTest, PiecesArePaddedLikeTheWholeBatch) {
  // A batch of 3 rows padded to 4 columns; the piece of rows 1..2 as
  // BatchSource::batchRows makes it, padded to its own 2 columns.
  TrainBatch whole;
  Tensor all(DType::I32, {3, 4});
  for (int32_t i = 0; i < 12; ++i)
    all.as<int32_t>()[i] = i;
  whole.byRole.tensors.emplace_back("source", std::move(all));
  Tensor labels(DType::I32, {3});
  whole.byRole.tensors.emplace_back("label", std::move(labels));

  TrainBatch piece;
  piece.byRole.tensors.emplace_back("source", Tensor(DType::I32, {2, 2}));
  piece.byRole.tensors.emplace_back("label", Tensor(DType::I32, {2}));
  piece.byRole.tensors.emplace_back("extra", Tensor(DType::I32, {2, 2}));
  piece.inputs = {&piece.byRole.tensors[0].second,
                  &piece.byRole.tensors[2].second};
  piece.targetTokens = 5;
  padLikeBatch(whole, {1, 2}, piece);
  const Tensor &source = *piece.inputs[0];
  EXPECT_EQ(source.shape, (Shape{2, 4}));
  EXPECT_EQ(std::vector<int32_t>(source.as<int32_t>(),
                                 source.as<int32_t>() + 8),
            (std::vector<int32_t>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(piece.byRole.tensors[1].second.shape, (Shape{2}));
  // A role the whole batch does not have stays as it was; so do the counts.
  EXPECT_EQ(piece.inputs[1]->shape, (Shape{2, 2}));
  EXPECT_EQ(piece.targetTokens, 5);

  EXPECT_THROW(sliceRows(*whole.byRole.find("source"), {2, 2}), DriverError);
}

TEST(DataParallelTest, OneProcessIsItsOwnRankZero) {
  // Without mpirun there is no other rank to disagree with.
  Communicator one;
  EXPECT_EQ(one.fromRankZero(0x1234u), 0x1234u);
  EXPECT_NO_THROW(requireSameAsRankZero(one, 42, "--data 'x.tsv'"));
}

TEST(DataParallelTest, FingerprintSeesEveryParameterBit) {
  ModelInfo model = ModelInfo::parse(R"({"version": 1, "model": "tiny",
    "dims": [], "param_arena_bytes": 128,
    "params": [
      {"name": "w", "dtype": "f32", "shape": [2, 4], "init": "xavier_uniform", "offset": 0},
      {"name": "b", "dtype": "f32", "shape": [4], "init": "zeros", "offset": 64}],
    "entries": []})");
  ParameterArena a(model), b(model);
  a.initialize(3);
  b.initialize(3);
  EXPECT_EQ(fingerprintOfTrainingState(model, a),
            fingerprintOfTrainingState(model, b));
  // The lowest bit of the last element: a stale copy of a checkpoint on one
  // machine differs by far more.
  float *last = b.param(*model.findParam("b")) + 3;
  uint32_t bits;
  std::memcpy(&bits, last, sizeof(bits));
  bits ^= 1u;
  std::memcpy(last, &bits, sizeof(bits));
  EXPECT_NE(fingerprintOfTrainingState(model, a),
            fingerprintOfTrainingState(model, b));
  b.initialize(4);
  EXPECT_NE(fingerprintOfTrainingState(model, a),
            fingerprintOfTrainingState(model, b));
}

} // namespace
