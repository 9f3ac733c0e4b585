//===- BatchSource.h - the train entry's inputs, by role, per model kind -*- C++ -*-===//
//
// The training loop (TrainCommand.cpp) asks a BatchSource for the inputs of
// update `step`; one source per model kind makes the tensors of a batch,
// each under its role, and batch() lays them out in the train entry's input
// order. Which examples form the batch of a step is a BatchPlan (Batching.h)
// over the examples' lengths: a pure function of (seed, step).
//
//   Seq2SeqBatches     sentence pairs -> source, target_in ([SOS] + target),
//                      target_out (target + [EOS]), padded to the longest
//   LanguageModelBatches  next-token blocks (TextCorpus.h) -> tokens,
//                      targets
//   ClassifierBatches  labeled texts -> tokens ([SOS] as the first, [CLS]
//                      position, then the words, padded to the longest),
//                      segments (zeros), label (i32[rows])
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_BATCHSOURCE_H
#define TXRT_DRIVER_BATCHSOURCE_H

#include "core/ModelInfo.h"
#include "core/Tensor.h"
#include "data/Batching.h"
#include "data/TextCorpus.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace txrt::driver {

/// The tensors of one batch under their roles.
struct RoleTensors {
  std::vector<std::pair<std::string, Tensor>> tensors;
  int64_t targetTokens = 0; ///< what the loss averages over
  const Tensor *find(std::string_view role) const;
};

/// What a spec writes as constants instead of dims, which every batch then
/// has: the lengths of the token inputs (source or tokens, and target) and
/// a batch whose every row is an example (BatchPlan's fullBatches).
struct BatchShape {
  int64_t sourceLength = 1; ///< seq2seq source; a classifier's tokens
  int64_t targetLength = 1; ///< seq2seq target_in / target_out
  bool fullBatches = false;
};

/// One update's inputs, in the train entry's order.
struct TrainBatch {
  RoleTensors byRole;
  std::vector<const Tensor *> inputs;
  int64_t targetTokens = 0;
};

class BatchSource {
public:
  /// `maxTokens` > 0: batches by padded tokens (TokenBatches.h), at most
  /// `batchSize` rows; else `batchSize` rows.
  BatchSource(std::vector<std::pair<int64_t, int64_t>> lengths,
              int64_t batchSize, uint64_t seed, int64_t maxTokens = 0,
              bool fullBatches = false);
  virtual ~BatchSource() = default;

  const BatchPlan &plan() const { return plan_; }
  /// BatchPlan::setStepOffset (a resume of another cut's checkpoint).
  void setStepOffset(int64_t offset) { plan_.setStepOffset(offset); }
  int64_t examples() const { return examples_; }

  /// The batch of update `step` for `entry`; ModelError naming the input
  /// when the entry has an input whose role this source does not make.
  TrainBatch batch(const EntryInfo &entry, int64_t step);
  /// Rows [first, first + count) of that batch (gradient accumulation and
  /// data-parallel ranks take a share each, distributed/DataParallel.h).
  TrainBatch batchRows(const EntryInfo &entry, int64_t step, int64_t first,
                       int64_t count);
  /// The number of examples in the batch of update `step`.
  int64_t rowsOfStep(int64_t step);

  /// The tensors of the examples `indices`, by role.
  virtual RoleTensors make(const std::vector<size_t> &indices) const = 0;
  /// The roles make() fills ("source, target_in, target_out").
  virtual std::string roles() const = 0;

private:
  const std::vector<size_t> &indicesOfStep(int64_t step);

  BatchPlan plan_;
  int64_t examples_;
  int64_t cachedEpoch_ = -1;
  std::vector<std::vector<size_t>> epochBatches_;
};

/// Fills `batch.inputs` from `batch.byRole` in `entry`'s input order.
void bindInputsByRole(const EntryInfo &entry, const std::string &roles,
                      TrainBatch &batch);

/// The (source, target + [EOS]) widths of every pair.
ExampleLengths pairLengths(const PairIds &pairs);

class Seq2SeqBatches : public BatchSource {
public:
  Seq2SeqBatches(PairIds pairs, Vocabulary target, int32_t pad,
                 int64_t batchSize, uint64_t seed, int64_t maxTokens = 0,
                 BatchShape shape = {});
  RoleTensors make(const std::vector<size_t> &indices) const override;
  std::string roles() const override {
    return "source, target_in, target_out";
  }
  const PairIds &pairs() const { return pairs_; }

private:
  PairIds pairs_;
  Vocabulary target_;
  int32_t pad_;
  BatchShape shape_;
};

class LanguageModelBatches : public BatchSource {
public:
  LanguageModelBatches(TokenBlocks blocks, int64_t batchSize, uint64_t seed,
                       int64_t maxTokens = 0, bool fullBatches = false);
  RoleTensors make(const std::vector<size_t> &indices) const override;
  std::string roles() const override { return "tokens, targets"; }
  const TokenBlocks &blocks() const { return blocks_; }

private:
  TokenBlocks blocks_;
};

/// A labeled text, encoded: the token ids (with the leading [SOS]) and the
/// class id.
struct EncodedExample {
  std::vector<int32_t> tokens;
  int32_t label = 0;
};

/// (tokens, 0) of each example: its --max-tokens lengths.
ExampleLengths exampleLengths(const std::vector<EncodedExample> &examples);

class ClassifierBatches : public BatchSource {
public:
  ClassifierBatches(std::vector<EncodedExample> examples, int32_t pad,
                    int64_t batchSize, uint64_t seed, int64_t maxTokens = 0,
                    BatchShape shape = {});
  RoleTensors make(const std::vector<size_t> &indices) const override;
  std::string roles() const override { return "tokens, segments, label"; }

private:
  std::vector<EncodedExample> examples_;
  int32_t pad_;
  BatchShape shape_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_BATCHSOURCE_H
