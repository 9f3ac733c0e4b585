//===- Nccl.h - NCCL, opened when a data-parallel run needs it --*- C++ -*-===//
//
// The GPU side of a data-parallel run (docs/distributed.md): one ncclComm_t
// per process, over the context's device, that sums gradient buckets in
// place on a stream. libnccl.so.2 (or the path in TXRT_NCCL) is opened with
// dlopen on the first use, so a CUDA executable starts, and trains on one
// process, on a machine without NCCL; a missing library is one error when a
// run over several ranks starts. Every NCCL failure is a CudaError whose
// message names the call and NCCL's ncclGetErrorString (and the
// communicator's ncclGetLastError where it says more). Built without NCCL
// (TXC_NCCL=OFF), every function here throws saying so.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_NCCL_H
#define TXRT_CUDA_NCCL_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace txrt::cuda {

/// Bytes of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES).
constexpr size_t kNcclIdBytes = 128;

/// NCCL's version code (2.28.9: 22809); CudaError when the library cannot
/// be opened.
int32_t ncclVersionCode();

/// A fresh ncclUniqueId (what rank 0 makes and every rank joins with).
void ncclMakeUniqueId(void *out_id, size_t bytes);

/// "ncclAllReduce: invalid argument (run with NCCL_DEBUG=WARN for details)
/// (ncclInvalidArgument, 4)" for a result code of NCCL (the opened
/// library's string; without the library, "failed").
std::string ncclDescribe(const char *call, int32_t result);

class NcclCommunicator {
public:
  /// Rank `rank` of `ranks`, on `device` (made current), with the id rank
  /// 0 made. Blocks until every rank has joined (ncclCommInitRank).
  NcclCommunicator(int device, int rank, int ranks, const void *id);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  int ranks() const { return ranks_; }
  /// data[0..n) = its sum over the ranks, enqueued on `stream`.
  void allReduceSum(float *data, int64_t n, cudaStream_t stream);
  /// Throws for an error NCCL found after a call returned (a peer that
  /// failed or went away), aborting the communicator so nothing waits on it.
  void checkAsync();

private:
  struct Comm; // ncclComm_t
  Comm *comm_ = nullptr;
  int ranks_ = 0;
  bool aborted_ = false;
};

} // namespace txrt::cuda

#endif // TXRT_CUDA_NCCL_H
