//===- DriverDevice.cpp - the executable driver's CUDA device -------------===//
//
// What a --target=cuda executable links besides the kernels: the driver's
// Device (core/ModelRunner.h) on a txrt_cuda_context, and the device list
// of `info`. ModelRunner finds it through the weak txrt_driver_cuda_backend
// (txc links this library with -Wl,--undefined=txrt_driver_cuda_backend), so
// a CPU executable needs no CUDA library. Errors are the driver's: no
// driver or device is an InputError naming --device and what is missing
// (exit 2), running out of device memory a ResourceError with the sizes.
// Its updateAverage is txrt_cuda_update_average (train --ema's update,
// kernels/Ema.cu). Its DeviceGradients is the context's NCCL gradient
// exchange (GradientExchange.h, docs/distributed.md); its pinned memory (the
// staging buffers of each call's inputs and outputs) comes from
// cudaHostAlloc, and a refusal there leaves the copies to ordinary memory.
//
//===----------------------------------------------------------------------===//
#include "core/Error.h"
#include "core/ModelRunner.h"

#include "txrt/txrt_cuda.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace txrt::driver {
namespace {

std::string formatGiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", double(bytes) / (1ull << 30));
  return text;
}

/// "NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90".
std::string describeContext(txrt_cuda_context *ctx) {
  char name[256] = {};
  uint64_t bytes = 0;
  int32_t major = 0, minor = 0;
  if (txrt_cuda_device_info(ctx, name, sizeof(name), &bytes, &major, &minor) !=
      TXRT_OK)
    return std::string("(no device information: ") +
           txrt_cuda_last_error(ctx) + ")";
  return std::string(name) + ", " + formatGiB(bytes) + ", sm_" +
         std::to_string(major) + std::to_string(minor);
}

/// Throws KernelError "WHAT failed on cuda:N: <the context's last error>"
/// unless `status` is TXRT_OK.
void checkCuda(txrt_status status, const std::string &what, int32_t index,
               txrt_cuda_context *ctx) {
  if (status != TXRT_OK)
    throw KernelError(what + " failed on cuda:" + std::to_string(index) +
                      ": " + txrt_cuda_last_error(ctx));
}

/// The gradient exchange of a txrt_cuda_context (GradientExchange.h): NCCL
/// between the ranks, bootstrapped by the driver's launcher (MPI_Bcast of
/// rank 0's id).
class CudaGradients : public DeviceGradients {
public:
  CudaGradients(int32_t index, txrt_cuda_context *ctx)
      : index_(index), ctx_(ctx) {}

  void joinRanks(int rank, int ranks,
                 const std::function<void(void *, size_t)> &broadcast) override {
    char id[TXRT_CUDA_NCCL_ID_BYTES] = {};
    // Every rank learns whether rank 0 could make the id (a byte before
    // it), so a missing NCCL ends every rank with rank 0's reason instead
    // of leaving the others waiting in ncclCommInitRank.
    char made = 1;
    std::string failure;
    if (rank == 0 && txrt_cuda_nccl_unique_id(id, sizeof(id)) != TXRT_OK) {
      made = 0;
      failure = txrt_cuda_last_error(nullptr);
    }
    broadcast(&made, 1);
    if (!made)
      throw KernelError(rank == 0 ? failure
                                  : "rank 0 could not start NCCL (its "
                                    "error says why)");
    broadcast(id, sizeof(id));
    check(txrt_cuda_context_join_ranks(ctx_, rank, ranks, id, sizeof(id)),
          "joining the ranks over NCCL");
  }
  void setMode(int32_t mode, float scale) override {
    check(txrt_cuda_context_set_gradient_mode(ctx_, mode, scale),
          "setting the gradient mode");
  }
  void setBatchRows(int64_t firstRow, int64_t rows) override {
    txrt_cuda_context_set_batch_rows(ctx_, firstRow, rows);
  }
  void setClip(float clip) override {
    check(txrt_cuda_context_set_gradient_clip(ctx_, clip),
          "setting the gradient clip");
  }
  void finishUpdate() override {
    check(txrt_cuda_context_finish_update(ctx_), "the gradient allreduce");
  }
  void stats(double &waitSeconds, int64_t &bytes) override {
    txrt_cuda_context_allreduce_stats(ctx_, &waitSeconds, &bytes);
  }

private:
  void check(txrt_status status, const std::string &what) {
    checkCuda(status, what, index_, ctx_);
  }

  int32_t index_;
  txrt_cuda_context *ctx_;
};

class CudaDevice : public Device {
public:
  CudaDevice(int32_t index, txrt_cuda_context *ctx)
      : index_(index), ctx_(ctx), gradients_(index, ctx) {}
  ~CudaDevice() override {
    if (ids_)
      txrt_cuda_free(ctx_, ids_);
    if (idsPinned_)
      cudaFreeHost(idsPinned_);
    txrt_cuda_context_destroy(ctx_);
  }

  std::string describe() override {
    return "cuda:" + std::to_string(index_) + " (" + describeContext(ctx_) +
           ")";
  }
  void *context() override {
    txrt_cuda_context_make_current(ctx_);
    return ctx_;
  }
  std::string lastError() override { return txrt_cuda_last_error(ctx_); }
  void allowTf32() override {
    if (txrt_cuda_context_set_option(ctx_, TXRT_CUDA_OPTION_ALLOW_TF32, 1) !=
        TXRT_OK)
      throw KernelError("--allow-tf32 on " + describe() + ": " +
                        txrt_cuda_last_error(ctx_));
  }

  void *allocate(uint64_t bytes, const std::string &what) override {
    void *pointer = nullptr;
    if (txrt_cuda_malloc(ctx_, size_t(bytes), &pointer) != TXRT_OK)
      throw ResourceError("cannot allocate " + what + " on cuda:" +
                          std::to_string(index_) + ": " +
                          txrt_cuda_last_error(ctx_));
    return pointer;
  }
  void release(void *pointer) override { txrt_cuda_free(ctx_, pointer); }
  void *allocatePinned(uint64_t bytes) override {
    if (bytes == 0)
      return nullptr;
    txrt_cuda_context_make_current(ctx_);
    void *pointer = nullptr;
    if (cudaHostAlloc(&pointer, size_t(bytes), cudaHostAllocPortable) !=
        cudaSuccess) {
      (void)cudaGetLastError(); // not sticky: the copies go from ordinary
      return nullptr;           // memory instead
    }
    return pointer;
  }
  void releasePinned(void *pointer) override { cudaFreeHost(pointer); }
  void toDevice(void *dst, const void *src, uint64_t bytes) override {
    check(txrt_cuda_copy_to_device(ctx_, dst, src, size_t(bytes)),
          "a copy to the device");
  }
  void toHost(void *dst, const void *src, uint64_t bytes) override {
    check(txrt_cuda_copy_to_host(ctx_, dst, src, size_t(bytes)),
          "a copy from the device");
  }
  void copyRows(const std::vector<RowCopy> &copies) override {
    std::vector<txrt_cuda_row_copy> rows;
    rows.reserve(copies.size());
    for (const RowCopy &copy : copies)
      rows.push_back({copy.dst, copy.src, size_t(copy.dstPitch),
                      size_t(copy.srcPitch), size_t(copy.width),
                      size_t(copy.height)});
    check(txrt_cuda_copy_rows(ctx_, rows.data(), int64_t(rows.size())),
          "copies within the device");
  }
  void zeroRows(void *dst, uint64_t pitch, uint64_t width,
                uint64_t height) override {
    check(txrt_cuda_zero_rows(ctx_, dst, size_t(pitch), size_t(width),
                              size_t(height)),
          "zeroing device memory");
  }
  bool argmaxRows(const float *logits, int64_t rows, int64_t vocab,
                  int64_t rowStride, int64_t emittable,
                  const std::vector<int32_t> &excluded,
                  int32_t *ids) override {
    if (excluded.size() > TXRT_CUDA_ARGMAX_MAX_EXCLUDED)
      return false;
    if (rows == 0)
      return true;
    const uint64_t bytes = uint64_t(rows) * sizeof(int32_t);
    if (bytes > idsBytes_) {
      if (ids_)
        txrt_cuda_free(ctx_, ids_);
      if (idsPinned_)
        cudaFreeHost(idsPinned_);
      ids_ = nullptr;
      idsPinned_ = nullptr;
      idsBytes_ = 0;
      ids_ = static_cast<int32_t *>(allocate(bytes, "greedy decoding's ids"));
      idsPinned_ = allocatePinned(bytes);
      idsBytes_ = bytes;
    }
    check(txrt_cuda_argmax_rows(ctx_, logits, rows, vocab, rowStride,
                                emittable, excluded.data(),
                                int64_t(excluded.size()), ids_),
          "greedy decoding's choice");
    // Through pinned memory when there is some: the copy then needs no
    // staging by the driver.
    toHost(idsPinned_ ? idsPinned_ : ids, ids_, bytes);
    if (idsPinned_)
      std::memcpy(ids, idsPinned_, bytes);
    return true;
  }
  void setTrainState(int64_t step, uint64_t seed) override {
    txrt_cuda_context_set_train_state(ctx_, step, seed);
  }
  void updateAverage(float *average, const float *params, int64_t count,
                     float decay) override {
    check(txrt_cuda_update_average(ctx_, average, params, count, decay),
          "the --ema update");
  }
  void finish(const std::string &what) override {
    check(txrt_cuda_synchronize(ctx_), what);
  }
  DeviceGradients *gradients() override { return &gradients_; }

  void *captureGraph(const EntryCall &call, std::string &why) override {
    txrt_cuda_context_make_current(ctx_);
    if (txrt_cuda_capture_begin(ctx_) != TXRT_OK) {
      why = txrt_cuda_last_error(ctx_);
      return nullptr;
    }
    const int32_t status = call.run();
    std::string callError = status == TXRT_OK ? "" : txrt_cuda_last_error(ctx_);
    txrt_cuda_graph *graph = nullptr;
    const txrt_status ended = txrt_cuda_capture_end(ctx_, &graph);
    if (status != TXRT_OK || ended != TXRT_OK) {
      // A call the capture refused (or that failed): the graph, if one was
      // made, holds part of the step. The direct call reports a real error.
      why = status != TXRT_OK ? callError : txrt_cuda_last_error(ctx_);
      txrt_cuda_graph_destroy(graph);
      return nullptr;
    }
    return graph;
  }
  bool launchGraph(void *graph) override {
    if (!txrt_cuda_graph_replayable(ctx_))
      return false;
    check(txrt_cuda_graph_launch(ctx_, static_cast<txrt_cuda_graph *>(graph)),
          "a CUDA graph's replay");
    return true;
  }
  void releaseGraph(void *graph) override {
    txrt_cuda_graph_destroy(static_cast<txrt_cuda_graph *>(graph));
  }

private:
  void check(txrt_status status, const std::string &what) {
    checkCuda(status, what, index_, ctx_);
  }

  int32_t index_;
  txrt_cuda_context *ctx_;
  CudaGradients gradients_;
  /// argmaxRows's ids on the device and their pinned host copy (nullptr
  /// when none was given), grown when too small.
  int32_t *ids_ = nullptr;
  void *idsPinned_ = nullptr;
  uint64_t idsBytes_ = 0;
};

std::unique_ptr<Device> openCuda(int32_t index) {
  if (index < 0) {
    // Under mpirun: the rank's place on its machine picks the GPU.
    int32_t devices = 0;
    if (txrt_cuda_probe(&devices) != TXRT_OK)
      throw InputError("--device cuda: " +
                       std::string(txrt_cuda_last_error(nullptr)));
    const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    index = devices > 0 && local ? int32_t(std::atoi(local) % devices) : 0;
  }
  txrt_cuda_context *ctx = nullptr;
  if (txrt_cuda_context_create(index, &ctx) != TXRT_OK)
    throw InputError("--device cuda:" + std::to_string(index) + ": " +
                     txrt_cuda_last_error(nullptr));
  return std::make_unique<CudaDevice>(index, ctx);
}

/// "  nccl 2.28.9 (mpirun -np N: one rank per GPU)", or why there is none.
void listNccl(std::ostream &out) {
  int32_t code = 0;
  if (txrt_cuda_nccl_version(&code) != TXRT_OK) {
    out << "  nccl: unavailable (" << txrt_cuda_last_error(nullptr) << ")\n";
    return;
  }
  out << "  nccl " << code / 10000 << "." << code % 10000 / 100 << "."
      << code % 100 << " (mpirun -np N: one rank per GPU)\n";
}

void listCuda(std::ostream &out) {
  int32_t devices = 0;
  if (txrt_cuda_probe(&devices) != TXRT_OK) {
    out << "  none: " << txrt_cuda_last_error(nullptr) << "\n";
    listNccl(out);
    return;
  }
  for (int32_t i = 0; i < devices; ++i) {
    txrt_cuda_context *ctx = nullptr;
    if (txrt_cuda_context_create(i, &ctx) != TXRT_OK) {
      out << "  cuda:" << i << "  unusable: " << txrt_cuda_last_error(nullptr)
          << "\n";
      continue;
    }
    out << "  cuda:" << i << "  " << describeContext(ctx) << "\n";
    txrt_cuda_context_destroy(ctx);
  }
  listNccl(out);
}

const CudaSupport kCudaSupport = {openCuda, listCuda};

} // namespace
} // namespace txrt::driver

extern "C" const txrt::driver::CudaSupport *txrt_driver_cuda_backend() {
  return &txrt::driver::kCudaSupport;
}
