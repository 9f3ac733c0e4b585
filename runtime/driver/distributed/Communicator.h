//===- Communicator.h - the ranks of a data-parallel run --------*- C++ -*-===//
//
// The processes `mpirun -np N ./model train ...` starts, as the training
// loop sees them: this process's rank, their number, a blocking sum of a
// number over all of them, and the txrt_communicator the runtime sums the
// gradient buckets with (MPI_Iallreduce, in place, MPI_FLOAT, MPI_SUM), or,
// on a GPU, the broadcast that gives every rank NCCL's id.
// Built without MPI (TXC_MPI=OFF, or no MPI found), or started without
// mpirun, it is one process: rank 0 of 1, sums are the value itself, and
// the runtime gets no communicator.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_COMMUNICATOR_H
#define TXRT_DRIVER_COMMUNICATOR_H

#include "txrt/txrt.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace txrt::driver {

class Communicator {
public:
  /// The ranks this process belongs to. The first call initializes MPI
  /// when the process was started by an MPI launcher; MPI is finalized at
  /// exit.
  static Communicator &world();
  /// Whether this executable was built with MPI.
  static bool builtWithMpi();
  /// How many copies an MPI launcher started and which one this is, from
  /// the launcher's environment (Open MPI, PMI, PMIx), without initializing
  /// MPI; {0, 1} when none did or it does not say.
  static std::pair<int, int> launchedRankAndSize();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool parallel() const { return size_ > 1; }
  /// Whether MPI was initialized (an MPI launcher started this process, one
  /// rank or more, and the executable has MPI).
  bool launched() const { return launched_; }

  /// Gives every rank rank 0's `bytes` bytes at `data` (blocking; every
  /// rank calls it): how the ranks share NCCL's id.
  void broadcast(void *data, size_t bytes);

  /// The sum of `value` over every rank (blocking; every rank calls it).
  double sum(double value);
  /// Rank 0's `value` on every rank (blocking; every rank calls it); the
  /// value itself with one rank.
  uint64_t fromRankZero(uint64_t value);
  /// Rank 0's `text` on every rank (blocking; every rank calls it).
  std::string fromRankZero(std::string text);
  /// The callbacks txrt_context_set_communicator takes; NULL with one rank.
  const txrt_communicator *runtimeHooks() const {
    return parallel() ? &hooks_ : nullptr;
  }
  /// InputError when an MPI launcher started several copies of an
  /// executable built without MPI (each would train alone).
  void requireMpiIfLaunched() const;
  /// Ends every rank with `code` (MPI_Abort); exit(code) with one rank.
  [[noreturn]] void abort(int code);

  /// One process, whatever the build: what tests and a plain run see.
  Communicator() = default;

private:
  void initialize();

  int rank_ = 0;
  int size_ = 1;
  int copiesWithoutMpi_ = 0;
  bool launched_ = false;
  txrt_communicator hooks_{};
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_COMMUNICATOR_H
