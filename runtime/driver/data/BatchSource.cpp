//===- BatchSource.cpp - the train entry's inputs, by role, per model kind ===//
#include "data/BatchSource.h"
#include "core/Error.h"

namespace txrt::driver {

ExampleLengths pairLengths(const PairIds &pairs) {
  std::vector<std::pair<int64_t, int64_t>> lengths;
  lengths.reserve(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i)
    lengths.emplace_back(int64_t(pairs.source(i).size()),
                         int64_t(pairs.target(i).size()) + 1); // + [EOS]
  return lengths;
}

ExampleLengths exampleLengths(const std::vector<EncodedExample> &examples) {
  ExampleLengths lengths;
  for (const EncodedExample &example : examples)
    lengths.emplace_back(int64_t(example.tokens.size()), 0);
  return lengths;
}

const Tensor *RoleTensors::find(std::string_view role) const {
  for (const auto &[name, tensor] : tensors)
    if (name == role)
      return &tensor;
  return nullptr;
}

BatchSource::BatchSource(std::vector<std::pair<int64_t, int64_t>> lengths,
                         int64_t batchSize, uint64_t seed, int64_t maxTokens,
                         bool fullBatches)
    : plan_(maxTokens ? BatchPlan(lengths, batchSize, maxTokens, seed)
                      : BatchPlan(lengths, batchSize, seed,
                                  fullBatches ? LastBatch::Completed
                                              : LastBatch::MayBeShort)),
      examples_(int64_t(lengths.size())) {}

void bindInputsByRole(const EntryInfo &entry, const std::string &roles,
                      TrainBatch &batch) {
  batch.inputs.clear();
  for (const TensorSig &sig : entry.inputs) {
    const Tensor *tensor = batch.byRole.find(sig.role);
    if (!tensor)
      throw ModelError("input '" + sig.name + "' of entry '" + entry.name +
                       "' has role '" + sig.role +
                       "'; the driver feeds this model kind's roles " + roles);
    batch.inputs.push_back(tensor);
  }
}

const std::vector<size_t> &BatchSource::indicesOfStep(int64_t step) {
  auto [epoch, index] = plan_.positionOfStep(step);
  if (epoch != cachedEpoch_) {
    epochBatches_ = plan_.epoch(epoch);
    cachedEpoch_ = epoch;
  }
  return epochBatches_[size_t(index)];
}

int64_t BatchSource::rowsOfStep(int64_t step) {
  return int64_t(indicesOfStep(step).size());
}

TrainBatch BatchSource::batchRows(const EntryInfo &entry, int64_t step,
                                  int64_t first, int64_t count) {
  const std::vector<size_t> &all = indicesOfStep(step);
  std::vector<size_t> rows(all.begin() + first, all.begin() + first + count);
  TrainBatch batch;
  batch.byRole = make(rows);
  batch.targetTokens = batch.byRole.targetTokens;
  bindInputsByRole(entry, roles(), batch);
  return batch;
}

TrainBatch BatchSource::batch(const EntryInfo &entry, int64_t step) {
  TrainBatch batch;
  batch.byRole = make(indicesOfStep(step));
  batch.targetTokens = batch.byRole.targetTokens;
  bindInputsByRole(entry, roles(), batch);
  return batch;
}

Seq2SeqBatches::Seq2SeqBatches(PairIds pairs, Vocabulary target, int32_t pad,
                               int64_t batchSize, uint64_t seed,
                               int64_t maxTokens, BatchShape shape)
    : BatchSource(pairLengths(pairs), batchSize, seed, maxTokens,
                  shape.fullBatches),
      pairs_(std::move(pairs)), target_(std::move(target)), pad_(pad),
      shape_(shape) {}

RoleTensors Seq2SeqBatches::make(const std::vector<size_t> &indices) const {
  Batch batch = makeBatch(pairs_, indices, target_, pad_, shape_.sourceLength,
                          shape_.targetLength);
  RoleTensors out;
  out.tensors.emplace_back("source", std::move(batch.src));
  out.tensors.emplace_back("target_in", std::move(batch.tgtIn));
  out.tensors.emplace_back("target_out", std::move(batch.tgtOut));
  out.targetTokens = batch.targetTokens;
  return out;
}

LanguageModelBatches::LanguageModelBatches(TokenBlocks blocks,
                                           int64_t batchSize, uint64_t seed,
                                           int64_t maxTokens, bool fullBatches)
    : BatchSource(std::vector<std::pair<int64_t, int64_t>>(
                      size_t(blocks.size()),
                      {blocks.blockLength(), blocks.blockLength()}),
                  batchSize, seed, maxTokens, fullBatches),
      blocks_(std::move(blocks)) {}

RoleTensors
LanguageModelBatches::make(const std::vector<size_t> &indices) const {
  RoleTensors out;
  out.tensors.emplace_back("tokens", blocks_.tokens(indices));
  out.tensors.emplace_back("targets", blocks_.targets(indices));
  out.targetTokens = blocks_.targetCount(indices);
  return out;
}

ClassifierBatches::ClassifierBatches(std::vector<EncodedExample> examples,
                                     int32_t pad, int64_t batchSize,
                                     uint64_t seed, int64_t maxTokens,
                                     BatchShape shape)
    : BatchSource(exampleLengths(examples), batchSize, seed, maxTokens,
                  shape.fullBatches),
      examples_(std::move(examples)), pad_(pad), shape_(shape) {}

RoleTensors ClassifierBatches::make(const std::vector<size_t> &indices) const {
  std::vector<std::vector<int32_t>> tokens;
  Tensor labels(DType::I32, {int64_t(indices.size())});
  for (size_t row = 0; row < indices.size(); ++row) {
    tokens.push_back(examples_[indices[row]].tokens);
    labels.as<int32_t>()[row] = examples_[indices[row]].label;
  }
  RoleTensors out;
  Tensor ids = padSequences(tokens, pad_, shape_.sourceLength);
  Tensor segments(DType::I32, ids.shape); // zero-filled: one segment
  out.tensors.emplace_back("tokens", std::move(ids));
  out.tensors.emplace_back("segments", std::move(segments));
  out.tensors.emplace_back("label", std::move(labels));
  out.targetTokens = int64_t(indices.size());
  return out;
}

} // namespace txrt::driver
