//===- DataParallel.cpp - one update over micro-batches and ranks ---------===//
#include "distributed/DataParallel.h"
#include "core/Error.h"
#include "core/Init.h"
#include "core/Optimizer.h"
#include "formats/Json.h"

#include <cstdio>
#include <cstring>
#include <optional>

#include <string>
#include <vector>

namespace txrt::driver {

namespace {

void check(txrt_context *ctx, txrt_status status, const char *what) {
  if (status != TXRT_OK)
    throw KernelError(std::string(what) + " failed: " + txrt_last_error(ctx));
}

} // namespace

int64_t countNotIgnored(const Tensor &targets, int64_t ignoreIndex) {
  if (targets.dtype != DType::I32)
    return 0;
  const int32_t *ids = targets.as<int32_t>();
  const int64_t n = targets.numElements();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i)
    count += int64_t(ids[i]) != ignoreIndex;
  return count;
}

RowRange shareOfBatch(int64_t rows, int64_t micro, int64_t updateFreq,
                      int rank, int ranks) {
  const int64_t pieces = updateFreq * ranks;
  const int64_t piece = micro * ranks + rank;
  int64_t first = piece * rows / pieces;
  int64_t end = (piece + 1) * rows / pieces;
  return {first, end - first};
}

Tensor sliceRows(const Tensor &tensor, RowRange rows) {
  Shape shape = tensor.shape;
  const int64_t total = shape.empty() ? 0 : shape[0];
  if (rows.first < 0 || rows.count < 0 || rows.first + rows.count > total)
    throw DriverError("rows out of range of a tensor of " +
                          formatShape(tensor.shape),
                      kExitFailure);
  const size_t rowBytes = total ? tensor.byteSize() / size_t(total) : 0;
  shape[0] = rows.count;
  Tensor out(tensor.dtype, shape);
  if (rows.count)
    std::memcpy(out.data(),
                static_cast<const char *>(tensor.data()) +
                    size_t(rows.first) * rowBytes,
                size_t(rows.count) * rowBytes);
  return out;
}

void padLikeBatch(const TrainBatch &whole, RowRange share, TrainBatch &piece) {
  for (auto &[role, tensor] : piece.byRole.tensors) {
    const Tensor *all = whole.byRole.find(role);
    if (!all || all->shape.empty() || tensor.shape.empty() ||
        all->shape.size() != tensor.shape.size() ||
        tensor.shape[0] != share.count)
      continue;
    // Assigned in place: piece.inputs still point at the same elements.
    tensor = sliceRows(*all, share);
  }
}

void requireSameAsRankZero(Communicator &ranks, uint64_t fingerprint,
                           const std::string &what, const std::string &detail) {
  const uint64_t rankZeros = ranks.fromRankZero(fingerprint);
  // Every rank takes part, also where its value matches: rank 0 cannot
  // know which rank differs.
  const std::string rankZerosDetail =
      detail.empty() ? std::string() : ranks.fromRankZero(detail);
  if (rankZeros == fingerprint)
    return;
  if (!detail.empty() && rankZerosDetail != detail)
    throw InputError(what + " is not rank 0's (here: " + detail +
                     "; rank 0: " + rankZerosDetail +
                     "): every rank must be given the same data and "
                     "options");
  char values[80];
  std::snprintf(values, sizeof(values), "%016llx here, %016llx on rank 0",
                static_cast<unsigned long long>(fingerprint),
                static_cast<unsigned long long>(rankZeros));
  throw InputError(what + " is not rank 0's (fingerprint " + values +
                   "): every rank must be given the same data and "
                   "options");
}

uint64_t fingerprintOfProgram(const ModelInfo &model) {
  Json metadata = parseJson(model.metadataJson);
  // What differs between builds of one spec for other machines: its path,
  // the flags (--mcpu) and the CPU features they give.
  for (const char *key : {"source", "compile_flags", "sites", "cpu_features"})
    metadata.erase(key);
  // The entries' messages name spec locations (`model.tx:39:7`).
  std::string text = toJson(metadata);
  if (!model.source.empty())
    for (size_t at = text.find(model.source); at != std::string::npos;
         at = text.find(model.source, at + 1))
      text.replace(at, model.source.size(), "<spec>");
  return fnv1a64(text);
}

uint64_t fingerprintOfTrainingState(const ModelInfo &model,
                                    const ParameterArena &arena) {
  // FNV-1a's constants over 32-bit words: one pass, a fraction of a second
  // for hundreds of megabytes.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto add = [&](const float *values, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &values[i], sizeof(bits));
      hash = (hash ^ bits) * 0x100000001b3ull;
    }
  };
  for (const ParamInfo &info : model.params) {
    add(arena.param(info), info.numElements);
    if (info.hasTrainingState()) {
      add(arena.expAvg(info), info.numElements);
      add(arena.expAvgSq(info), info.numElements);
    }
  }
  return hash;
}

DataParallelUpdate::DataParallelUpdate(ModelRunner &runner,
                                       const EntryInfo &entry,
                                       int64_t updateFreq,
                                       Communicator &communicator)
    : runner_(runner), entry_(entry), updateFreq_(updateFreq),
      communicator_(communicator),
      device_(runner.device() ? runner.device()->gradients() : nullptr) {
  if (runner.device() && !device_ && !plain())
    throw InputError("--update-freq and mpirun: " +
                     runner.device()->describe() +
                     " has no gradient accumulation");
  const std::optional<OptimizerInfo> &optimizer = runner.model().optimizer;
  if (!plain() && optimizer && optimizer->clip > 0) {
    if (device_)
      device_->setClip(float(optimizer->clip));
    else
      check(runner_.context(),
            txrt_context_set_gradient_clip(runner_.context(),
                                           float(optimizer->clip)),
            "setting the gradient clip");
  }
  if (device_ && communicator_.launched())
    // NCCL between the GPUs, MPI only to hand rank 0's id to the others.
    device_->joinRanks(communicator_.rank(), communicator_.size(),
                       [&](void *data, size_t bytes) {
                         communicator_.broadcast(data, bytes);
                       });
  else
    txrt_context_set_communicator(runner_.context(),
                                  communicator_.runtimeHooks());
}

bool DataParallelUpdate::plain() const {
  // A GPU under an MPI launcher takes the NCCL path even as one rank (a
  // one-GPU communicator: what a machine with one GPU can test).
  return updateFreq_ == 1 && !communicator_.parallel() &&
         !(device_ && communicator_.launched());
}

void DataParallelUpdate::setMode(int32_t mode, float scale) {
  if (device_) {
    device_->setMode(mode, scale);
    return;
  }
  check(runner_.context(),
        txrt_context_set_gradient_mode(runner_.context(), mode, scale),
        "setting the gradient mode");
}

DataParallelUpdate::Result
DataParallelUpdate::run(BatchSource &source, int64_t step, uint64_t seed) {
  txrt_context *ctx = runner_.context();
  if (plain()) {
    TrainBatch batch = source.batch(entry_, step);
    runner_.setTrainState(step, seed);
    std::vector<Tensor> outputs = runner_.call(entry_, batch.inputs);
    return {double(outputs[0].as<float>()[0]), batch.targetTokens};
  }
  const TrainBatch whole = source.batch(entry_, step);
  const int64_t rows = source.rowsOfStep(step);
  std::vector<TrainBatch> pieces;
  std::vector<RowRange> shares;
  // What each piece's loss averages over: with a cross-entropy loss the
  // positions whose target is not its ignore_index, counted in the piece
  // (padded like the whole batch); those shares make the pieces' losses sum
  // to the whole batch's whatever the pad and ignore ids. Another loss: the
  // target tokens (EntryInfo::lossTargets; train warns that the update is
  // then near, not equal to, the whole batch's). A filler piece counts 0.
  std::vector<double> counted;
  double localCounted = 0.0;
  int64_t localTokens = 0;
  for (int64_t micro = 0; micro < updateFreq_; ++micro) {
    RowRange share = shareOfBatch(rows, micro, updateFreq_,
                                  communicator_.rank(), communicator_.size());
    if (share.count == 0) {
      // A batch with fewer rows than pieces (the last of an epoch, or a
      // token batch of a few long rows): this piece runs one real row with
      // weight 0, so every rank still takes part in every allreduce.
      share = {0, 1};
      TrainBatch filler = source.batchRows(entry_, step, 0, 1);
      padLikeBatch(whole, share, filler);
      filler.targetTokens = 0;
      pieces.push_back(std::move(filler));
      shares.push_back(share);
      counted.push_back(0.0);
      continue;
    }
    pieces.push_back(source.batchRows(entry_, step, share.first, share.count));
    padLikeBatch(whole, share, pieces.back());
    shares.push_back(share);
    localTokens += pieces.back().targetTokens;
    counted.push_back(
        entry_.lossTargets >= 0
            ? double(countNotIgnored(
                  *pieces.back().inputs[size_t(entry_.lossTargets)],
                  entry_.lossIgnoreIndex))
            : double(pieces.back().targetTokens));
    localCounted += counted.back();
  }
  const double tokens = communicator_.sum(double(localTokens));
  const double total =
      entry_.lossTargets >= 0 ? communicator_.sum(localCounted) : tokens;
  double weightedLoss = 0.0;
  for (int64_t micro = 0; micro < updateFreq_; ++micro) {
    const TrainBatch &piece = pieces[size_t(micro)];
    const double share = total > 0 ? counted[size_t(micro)] / total : 0;
    setMode(micro + 1 == updateFreq_ ? TXRT_GRADIENTS_APPLY
                                     : TXRT_GRADIENTS_ACCUMULATE,
            float(share));
    runner_.setTrainState(step, seed);
    txrt_context_set_batch_rows(ctx, shares[size_t(micro)].first,
                                shares[size_t(micro)].count);
    if (device_)
      device_->setBatchRows(shares[size_t(micro)].first,
                            shares[size_t(micro)].count);
    std::vector<Tensor> outputs = runner_.call(entry_, piece.inputs);
    weightedLoss += double(outputs[0].as<float>()[0]) * share;
  }
  txrt_context_set_batch_rows(ctx, 0, 0);
  if (device_) {
    device_->setBatchRows(0, 0);
    // The updates wait for the exchange; they stay on the device with the
    // arena (the next host read waits for them: ParameterHome.h).
    device_->finishUpdate();
  } else {
    check(ctx, txrt_context_finish_update(ctx), "the gradient allreduce");
  }
  ++updates_;
  setMode(TXRT_GRADIENTS_UPDATE, 1.0f);
  return {communicator_.sum(weightedLoss), int64_t(tokens)};
}

std::string DataParallelUpdate::trafficSummary() const {
  double waited = 0.0;
  int64_t bytes = 0;
  if (device_)
    device_->stats(waited, bytes);
  else
    txrt_context_allreduce_stats(runner_.context(), &waited, &bytes);
  char text[160];
  std::snprintf(text, sizeof(text),
                "allreduce: %lld updates, %.1f MB each, %.3f s waiting "
                "(%.1f ms per update)",
                static_cast<long long>(updates_),
                updates_ ? double(bytes) / double(updates_) / 1e6 : 0.0,
                waited, updates_ ? 1e3 * waited / double(updates_) : 0.0);
  return text;
}

} // namespace txrt::driver
