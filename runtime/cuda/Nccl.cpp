//===- Nccl.cpp - NCCL through dlopen: the library table, one communicator ===//
//
// The functions are looked up into a table typed from nccl.h (the
// toolkit's, TXC_NCCL), like cuBLASLt's (CublasLt.cpp): nothing links
// libnccl, so the test binary and the executables start without it.
//
//===----------------------------------------------------------------------===//
#include "Nccl.h"
#include "CudaContext.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#ifdef TXC_HAVE_NCCL
#include "DynamicLibrary.h"

#include <nccl.h>
#endif

using namespace txrt::cuda;

#ifdef TXC_HAVE_NCCL

namespace {

struct NcclApi {
  decltype(&::ncclGetVersion) getVersion = nullptr;
  decltype(&::ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&::ncclCommInitRank) commInitRank = nullptr;
  decltype(&::ncclCommDestroy) commDestroy = nullptr;
  decltype(&::ncclCommAbort) commAbort = nullptr;
  decltype(&::ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&::ncclAllReduce) allReduce = nullptr;
  decltype(&::ncclGetErrorString) getErrorString = nullptr;
  /// Since NCCL 2.13; NULL in older libraries.
  decltype(&::ncclGetLastError) getLastError = nullptr;
};

std::string ncclLibraryName() {
  const char *path = std::getenv("TXRT_NCCL");
  return path && *path ? path : "libnccl.so." + std::to_string(NCCL_MAJOR);
}

/// The opened library; CudaError with the reason when it cannot be opened.
const NcclApi &nccl() {
  static std::once_flag once;
  static NcclApi api;
  static std::string failure;
  std::call_once(once, [] {
    try {
      DynamicLibrary library("NCCL", ncclLibraryName(),
                             "install NCCL (it comes with the CUDA toolkit), "
                             "put it on LD_LIBRARY_PATH or set TXRT_NCCL");
      library.lookup("ncclGetVersion", api.getVersion);
      library.lookup("ncclGetUniqueId", api.getUniqueId);
      library.lookup("ncclCommInitRank", api.commInitRank);
      library.lookup("ncclCommDestroy", api.commDestroy);
      library.lookup("ncclCommAbort", api.commAbort);
      library.lookup("ncclCommGetAsyncError", api.commGetAsyncError);
      library.lookup("ncclAllReduce", api.allReduce);
      library.lookup("ncclGetErrorString", api.getErrorString);
      library.lookup("ncclGetLastError", api.getLastError, false);
    } catch (const CudaError &e) {
      failure = e.what();
    }
  });
  if (!failure.empty())
    throw CudaError(TXRT_ERROR_BACKEND, failure);
  return api;
}

const char *resultName(int32_t result) {
  switch (result) {
  case ncclSuccess: return "ncclSuccess";
  case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
  case ncclSystemError: return "ncclSystemError";
  case ncclInternalError: return "ncclInternalError";
  case ncclInvalidArgument: return "ncclInvalidArgument";
  case ncclInvalidUsage: return "ncclInvalidUsage";
  case ncclRemoteError: return "ncclRemoteError";
  case ncclInProgress: return "ncclInProgress";
  default: return "ncclResult_t";
  }
}

/// Throws the message of `result` for `call` unless it is ncclSuccess;
/// `comm` (may be NULL) adds the communicator's own last error.
void checkNccl(ncclResult_t result, const char *call, ncclComm_t comm) {
  if (result == ncclSuccess)
    return;
  std::string message = ncclDescribe(call, result);
  const NcclApi &api = nccl();
  if (api.getLastError) {
    const char *detail = api.getLastError(comm);
    if (detail && *detail)
      message += ": " + std::string(detail);
  }
  throw CudaError(TXRT_ERROR_BACKEND, message);
}

} // namespace

struct NcclCommunicator::Comm {
  ncclComm_t handle = nullptr;
};

int32_t txrt::cuda::ncclVersionCode() {
  int version = 0;
  checkNccl(nccl().getVersion(&version), "ncclGetVersion", nullptr);
  return version;
}

void txrt::cuda::ncclMakeUniqueId(void *out_id, size_t bytes) {
  require(out_id && bytes == sizeof(ncclUniqueId),
          "the id buffer must hold NCCL_UNIQUE_ID_BYTES (128) bytes");
  ncclUniqueId id;
  checkNccl(nccl().getUniqueId(&id), "ncclGetUniqueId", nullptr);
  std::memcpy(out_id, &id, sizeof(id));
}

std::string txrt::cuda::ncclDescribe(const char *call, int32_t result) {
  std::string text = std::string(call) + ": ";
  try {
    text += nccl().getErrorString(ncclResult_t(result));
  } catch (const CudaError &) {
    text += "failed";
  }
  return text + " (" + resultName(result) + ", " + std::to_string(result) +
         ")";
}

NcclCommunicator::NcclCommunicator(int device, int rank, int ranks,
                                   const void *id)
    : comm_(new Comm), ranks_(ranks) {
  require(ranks >= 1 && rank >= 0 && rank < ranks,
          "the rank must be in [0, ranks)");
  require(id, "the NCCL id must not be NULL");
  const NcclApi &api = nccl();
  check(cudaSetDevice(device), "cudaSetDevice");
  ncclUniqueId unique;
  std::memcpy(&unique, id, sizeof(unique));
  ncclResult_t result =
      api.commInitRank(&comm_->handle, ranks, unique, rank);
  if (result != ncclSuccess) {
    delete comm_;
    comm_ = nullptr;
    checkNccl(result, "ncclCommInitRank", nullptr);
  }
}

NcclCommunicator::~NcclCommunicator() {
  if (!comm_)
    return;
  if (comm_->handle && !aborted_)
    nccl().commDestroy(comm_->handle);
  delete comm_;
}

void NcclCommunicator::allReduceSum(float *data, int64_t n,
                                    cudaStream_t stream) {
  require(n >= 0 && (data || n == 0), "the bucket must not be NULL");
  if (aborted_)
    throw CudaError(TXRT_ERROR_BACKEND,
                    "ncclAllReduce: the communicator was aborted after an "
                    "earlier error");
  checkNccl(nccl().allReduce(data, data, size_t(n), ncclFloat, ncclSum,
                             comm_->handle, stream),
            "ncclAllReduce", comm_->handle);
}

void NcclCommunicator::checkAsync() {
  if (aborted_)
    return;
  const NcclApi &api = nccl();
  ncclResult_t state = ncclSuccess;
  checkNccl(api.commGetAsyncError(comm_->handle, &state),
            "ncclCommGetAsyncError", comm_->handle);
  if (state == ncclSuccess || state == ncclInProgress)
    return;
  std::string message = ncclDescribe("ncclAllReduce (asynchronous)", state);
  if (api.getLastError) {
    const char *detail = api.getLastError(comm_->handle);
    if (detail && *detail)
      message += ": " + std::string(detail);
  }
  // Nothing may wait on a failed communicator: abort it (its kernels end).
  api.commAbort(comm_->handle);
  aborted_ = true;
  throw CudaError(TXRT_ERROR_BACKEND, message);
}

#else // !TXC_HAVE_NCCL

namespace {
[[noreturn]] void withoutNccl() {
  throw CudaError(TXRT_ERROR_BACKEND,
                  "this runtime was built without NCCL (TXC_NCCL=OFF, or no "
                  "nccl.h in the CUDA toolkit): rebuild txc with it to train "
                  "on several GPUs");
}
} // namespace

struct NcclCommunicator::Comm {};

int32_t txrt::cuda::ncclVersionCode() { withoutNccl(); }
void txrt::cuda::ncclMakeUniqueId(void *, size_t) { withoutNccl(); }
std::string txrt::cuda::ncclDescribe(const char *call, int32_t result) {
  return std::string(call) + ": NCCL error " + std::to_string(result);
}
NcclCommunicator::NcclCommunicator(int, int, int, const void *) {
  withoutNccl();
}
NcclCommunicator::~NcclCommunicator() = default;
void NcclCommunicator::allReduceSum(float *, int64_t, cudaStream_t) {
  withoutNccl();
}
void NcclCommunicator::checkAsync() {}

#endif
