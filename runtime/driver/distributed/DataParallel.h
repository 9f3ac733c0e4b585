//===- DataParallel.h - one update over micro-batches and ranks -*- C++ -*-===//
//
// An update is the batch of its step (--batch examples, the global batch)
// cut into updateFreq x ranks contiguous pieces, micro-batch major: rank r
// trains micro-batch k on piece k * ranks + r. Every piece's gradient is
// scaled by its share of the positions the whole batch's loss averages over
// (a cross-entropy's targets that are not its ignore_index; for another
// loss the target tokens, which is near but not exact), so the accumulated
// (and, over ranks, summed) gradient is the gradient of the whole batch's
// mean loss: the first updateFreq - 1 calls accumulate
// (TXRT_GRADIENTS_ACCUMULATE), the last applies (TXRT_GRADIENTS_APPLY), and
// with several ranks the runtime sums the buckets over them before Adam.
// Every piece is padded to the whole batch's lengths and trains with its
// rows' place in the batch set on the context, so its dropout masks are
// those the whole batch draws for its rows.
// One micro-batch on one rank is the plain train step, untouched. On a GPU
// (a --target=cuda executable) the same modes go to the device context's
// exchange, and the ranks sum the buckets over NCCL, not MPI (MPI hands
// rank 0's NCCL id to the others and sums the two scalars per update).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_DATAPARALLEL_H
#define TXRT_DRIVER_DATAPARALLEL_H

#include "core/ModelRunner.h"
#include "data/BatchSource.h"
#include "distributed/Communicator.h"

#include <cstdint>
#include <string>

namespace txrt::driver {

/// Rows [first, first + count) of a batch.
struct RowRange {
  int64_t first = 0;
  int64_t count = 0;
};

/// The rows of a batch of `rows` examples that micro-batch `micro` (of
/// `updateFreq`) of rank `rank` (of `ranks`) trains on.
RowRange shareOfBatch(int64_t rows, int64_t micro, int64_t updateFreq,
                      int rank, int ranks);

/// How many ids of `targets` (i32) are not `ignoreIndex`: the positions a
/// cross-entropy with that ignore_index averages over.
int64_t countNotIgnored(const Tensor &targets, int64_t ignoreIndex);

/// Rows `rows` of `tensor` (its leading dimension), copied.
Tensor sliceRows(const Tensor &tensor, RowRange rows);

/// The piece of `whole` (the batch of an update) that `share` names, with
/// the tokens `piece` (the same rows, from BatchSource::batchRows) counts:
/// every tensor of `piece` is replaced by the rows of `whole`'s tensor of the
/// same role, so the piece is padded to the whole batch's lengths and its row
/// b holds what row share.first + b of the batch holds, element for element
/// (what keys the dropout masks alike, txrt_context_set_batch_rows).
void padLikeBatch(const TrainBatch &whole, RowRange share, TrainBatch &piece);

/// Every rank must train the same steps on the same data: checks this
/// rank's `fingerprint` of `what` (a hash of its data, or of its plan of
/// steps) against rank 0's. InputError on a rank whose value differs
/// ("`what` is not rank 0's (fingerprint X here, Y on rank 0)"), before any
/// update: a rank with other data or other steps would train another model
/// in silence, or wait forever for an allreduce the others never start.
/// Every rank calls it; with one rank it checks nothing.
/// `detail`, when given, is this rank's value in words (an option, a plan):
/// the error shows it beside rank 0's (every rank exchanges it).
void requireSameAsRankZero(Communicator &ranks, uint64_t fingerprint,
                           const std::string &what,
                           const std::string &detail = "");

/// A hash of what the compiled program computes: its metadata (spec name
/// and kind, config, optimizer, precision, dims, parameters, entries) less
/// what may differ between builds of one program (the spec's path, also
/// where messages name it, `compile_flags` such as --mcpu, the call-site
/// table). Ranks running
/// builds with another -D, optimizer or --precision would each step by
/// their own rule and sum gradients taken at different points.
uint64_t fingerprintOfProgram(const ModelInfo &model);

/// A hash of every parameter and Adam moment of `model` in `arena`, bit for
/// bit: what every rank must start from (checked with
/// requireSameAsRankZero, so that a stale copy of --resume on one machine
/// is an error, not a rank that trains other weights).
uint64_t fingerprintOfTrainingState(const ModelInfo &model,
                                    const ParameterArena &arena);

class DataParallelUpdate {
public:
  DataParallelUpdate(ModelRunner &runner, const EntryInfo &entry,
                     int64_t updateFreq, Communicator &communicator);

  /// The whole batch's mean loss and loss-counted tokens (all ranks).
  struct Result {
    double loss = 0.0;
    int64_t targetTokens = 0;
  };
  /// Runs update `step` with dropout seed `seed`. InputError (on every
  /// rank alike) when the batch has fewer rows than pieces.
  Result run(BatchSource &source, int64_t step, uint64_t seed);

  /// "allreduce: 12 updates, 3.4 MB each, 0.52 s waiting (43 ms per
  /// update)": what the ranks exchanged and how long this rank waited.
  std::string trafficSummary() const;

  /// One micro-batch on one rank: the train entry as it is (on a GPU
  /// under an MPI launcher, never: NCCL joins even one rank).
  bool plain() const;

private:
  /// The gradient mode on the device the entries run on.
  void setMode(int32_t mode, float scale);

  ModelRunner &runner_;
  const EntryInfo &entry_;
  int64_t updateFreq_;
  Communicator &communicator_;
  int64_t updates_ = 0;
  /// The device's exchange (NCCL on a GPU); nullptr: the CPU's context.
  DeviceGradients *device_ = nullptr;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_DATAPARALLEL_H
