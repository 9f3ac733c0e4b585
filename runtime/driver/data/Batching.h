//===- Batching.h - deterministic, length-bucketed batches ------*- C++ -*-===//
//
// The order of an epoch is a pure function of (seed, epoch), so the batch of
// update `step` is a pure function of (seed, step) and --resume continues
// exactly where a run stopped:
//
//   1. shuffle the example indices (Fisher-Yates, generator keyed by seed,
//      epoch and "examples");
//   2. cut them into windows of kBucketWindowBatches * batch examples; sort
//      each window by (source length, target length), stable;
//   3. cut each window into batches of `batch` (the last one of the epoch may
//      be smaller: for a model whose batch is a constant of the spec it is
//      completed with examples it does not hold, in step 1's order);
//      shuffle the list of batches (keyed by seed, epoch and
//      "batches").
//
// With a token budget (`train --max-tokens`, TokenBatches.h) step 3 cuts each
// window by padded tokens instead of rows, windows hold kBucketWindowBatches
// token budgets (the examples' own padded tokens, in step 1's order: so
// `--max-tokens N --update-freq K` batches as `--max-tokens K*N` does, up to
// the row bound), and the number of batches varies by epoch.
//
// A batch becomes three [b, len] i32 tensors padded with the pad id to the
// batch's longest sentence (or to the length the spec writes, when it writes
// one): src, tgt_in = [SOS] + target, tgt_out = target + [EOS].
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_BATCHING_H
#define TXRT_DRIVER_BATCHING_H

#include "data/PairIds.h"
#include "data/ParallelText.h"
#include "data/TokenBatches.h"
#include "core/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace txrt::driver {

constexpr int64_t kBucketWindowBatches = 16;

/// Uniform integer in [0, n) from draw `index` of stream `key`.
uint64_t uniformBelow(uint64_t key, uint64_t index, uint64_t n);

/// Whether the last batch of an epoch may have fewer examples than the
/// others, or is completed to the same number (BatchPlan).
enum class LastBatch { MayBeShort, Completed };

class BatchPlan {
public:
  /// `lengths[i]` = (source, target) lengths of example i.
  /// LastBatch::Completed: every batch has `batchSize` examples (a model
  /// whose batch is a constant); the last one of an epoch is completed
  /// with other examples of the epoch, repeated only when there are fewer
  /// than `batchSize` in all.
  BatchPlan(std::vector<std::pair<int64_t, int64_t>> lengths, int64_t batchSize,
            uint64_t seed, LastBatch last = LastBatch::MayBeShort);
  /// Batches of at most `maxTokens` padded tokens per side and `maxRows`
  /// rows; InputError when an example alone exceeds `maxTokens`.
  BatchPlan(std::vector<std::pair<int64_t, int64_t>> lengths, int64_t maxRows,
            int64_t maxTokens, uint64_t seed);

  /// The examples an epoch holds (each once; the last batch may repeat
  /// some when completed).
  size_t examples() const { return lengths_.size(); }
  /// The batches of epoch 0 (with a token budget other epochs may differ).
  int64_t batchesPerEpoch() const { return batchesInEpoch(0); }
  int64_t batchesInEpoch(int64_t epoch) const;
  /// The updates of `epochs` whole epochs; false when over `limit`.
  bool stepsOfEpochs(int64_t epochs, int64_t limit, int64_t &steps) const;
  /// The batches of `epoch` (0-based), each a list of example indices.
  std::vector<std::vector<size_t>> epoch(int64_t epoch) const;
  /// Epoch and batch index of update `step` (1-based).
  std::pair<int64_t, int64_t> positionOfStep(int64_t step) const;
  /// The update that takes batch `index` of `epoch` (the inverse).
  int64_t stepOfPosition(int64_t epoch, int64_t index) const;
  /// Update `step` takes the batch this plan gives update `step + offset`:
  /// a run resumed from a checkpoint of another cut (another --batch,
  /// --max-tokens, --update-freq or --seed) goes on in the epoch where
  /// that run stopped, at the batch it chose (TrainCommand), and the
  /// checkpoints it saves record that position, from which the offset of
  /// their own resumes follows.
  void setStepOffset(int64_t offset) { stepOffset_ = offset; }
  /// The same examples cut with another batch size (the row cap with a
  /// token budget), token budget (0: none) and seed: the plan a resumed
  /// checkpoint's run followed.
  BatchPlan rebatched(int64_t batchSize, int64_t maxTokens,
                      uint64_t seed) const;

private:
  /// Completes the epoch's partial `batch` from `shuffled`
  /// (LastBatch::Completed).
  void completeBatch(std::vector<size_t> &batch,
                     const std::vector<size_t> &shuffled) const;

  std::vector<std::pair<int64_t, int64_t>> lengths_;
  int64_t batchSize_;
  int64_t maxTokens_ = 0; ///< 0: fixed rows
  bool fullBatches_ = false;
  uint64_t seed_;
  int64_t batchesPerEpoch_;
  int64_t stepOffset_ = 0;
  /// Batches per epoch with a token budget, counted as epochs are asked.
  mutable std::vector<int64_t> epochCounts_;
};

/// Marks (1) the examples of batches [first, last) of `epoch` of `plan`,
/// one entry per example: what a run took of that epoch.
std::vector<char> examplesOfBatches(const BatchPlan &plan, int64_t epoch,
                                    int64_t first, int64_t last);

/// Where in `now`'s `epoch` a resumed run goes on when the examples marked
/// in `seen` were trained on in it already (by another cut): the batch
/// index that shows the fewest of the epoch's examples twice or never in
/// the rest of it (0 when none were seen: the new cut's whole epoch).
/// `change` gets "" when each example of the epoch comes once, else which
/// come twice or never ("of epoch 2's 18 examples, 8 ... come again ...";
/// `unit` names them).
int64_t resumedBatchIndex(const std::vector<char> &seen, int64_t epoch,
                          const BatchPlan &now, const std::string &unit,
                          std::string &change);

/// The tensors of one batch.
struct Batch {
  Tensor src, tgtIn, tgtOut;
  int64_t targetTokens = 0; ///< non-pad tokens of tgt_out
  int64_t sourceTokens = 0; ///< non-pad tokens of src
};

/// Pads the examples `indices` of `pairs` into a Batch: to the longest
/// source and target, and to at least `sourceLength` / `targetLength`
/// positions (the lengths a spec writes as constants).
Batch makeBatch(const PairIds &pairs, const std::vector<size_t> &indices,
                const Vocabulary &target, int32_t pad, int64_t sourceLength = 1,
                int64_t targetLength = 1);
Batch makeBatch(const std::vector<EncodedPair> &pairs,
                const std::vector<size_t> &indices, const Vocabulary &target,
                int32_t pad, int64_t sourceLength = 1,
                int64_t targetLength = 1);

/// A [rows, longest] i32 tensor of `sequences` right-padded with `pad`.
Tensor padSequences(const std::vector<std::vector<int32_t>> &sequences,
                    int32_t pad, int64_t minLength = 1);

/// `ids` ([rows, length] i32) grown with `pad` to at least `rows` rows and
/// `length` positions: what an input takes whose spec writes those sizes
/// as constants (LengthBound::padTo; 1 leaves an axis as it is). The added
/// rows are all pad, so they hold no target token.
Tensor padIdsTo(Tensor ids, int32_t pad, int64_t rows, int64_t length = 1);

/// A batch's three tensors grown to at least `rows` rows (padIdsTo).
void padBatchRows(Batch &batch, int32_t pad, int64_t rows);

} // namespace txrt::driver

#endif // TXRT_DRIVER_BATCHING_H
