//===- ModelRunner.h - call compiled entries on in-memory tensors -*- C++ -*-===//
//
// What train, eval, translate and bench share: the txrt context, the
// parameter arena, one activation arena per entry (allocated on first use
// and reused, or up front with reserveArena), and a call that derives the
// dims from the input shapes (bindDims), allocates the outputs and turns a
// failure status into a KernelError naming the entry. Allocations go
// through Memory.h, so running out of memory names the arena or output.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_MODELRUNNER_H
#define TXRT_DRIVER_MODELRUNNER_H

#include "core/ModelAbi.h"
#include "core/ModelInfo.h"
#include "core/Parameters.h"
#include "core/Tensor.h"

#include "txrt/txrt.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace txrt::driver {

struct ContextDeleter {
  void operator()(txrt_context *ctx) const { txrt_context_destroy(ctx); }
};
using ContextPtr = std::unique_ptr<txrt_context, ContextDeleter>;

/// A txrt context with `threads` threads (0: the default); InputError for a
/// bad thread count, KernelError otherwise.
ContextPtr createContext(int32_t threads);

/// A device's side of gradient accumulation and data parallelism
/// (distributed/DataParallel.h): txrt_context_set_gradient_mode and its kin
/// for the device's context, and the ranks joined over the device's own
/// collective library (NCCL). Failures throw KernelError.
class DeviceGradients {
public:
  virtual ~DeviceGradients() = default;
  /// Joins rank `rank` of `ranks`; `broadcast` gives every rank the bytes
  /// rank 0 passes it (the launcher's channel, MPI_Bcast).
  virtual void joinRanks(int rank, int ranks,
                         const std::function<void(void *, size_t)> &broadcast) = 0;
  virtual void setMode(int32_t mode, float scale) = 0;
  virtual void setClip(float clip) = 0;
  /// txrt_context_set_batch_rows: the next calls' rows within the batch.
  virtual void setBatchRows(int64_t firstRow, int64_t rows) = 0;
  /// Waits for the exchange and runs the updates that waited for it.
  virtual void finishUpdate() = 0;
  virtual void stats(double &waitSeconds, int64_t &bytes) = 0;
};

/// A device other than the CPU whose memory a model's entries run on (a
/// --target=cuda executable): its context (what the entries get as ctx),
/// memory and copies. The CUDA one is runtime/cuda/DriverDevice.cpp, linked
/// only into CUDA executables.
class Device {
public:
  virtual ~Device() = default;
  /// "cuda:0 (NVIDIA H100, 79.1 GiB, sm_90)".
  virtual std::string describe() = 0;
  virtual void *context() = 0;
  /// Device memory; ResourceError naming `what` and the size.
  virtual void *allocate(uint64_t bytes, const std::string &what) = 0;
  virtual void release(void *ptr) = 0;
  virtual void toDevice(void *dst, const void *src, uint64_t bytes) = 0;
  virtual void toHost(void *dst, const void *src, uint64_t bytes) = 0;
  virtual void setTrainState(int64_t step, uint64_t seed) = 0;
  /// The message of the last failed call on the context.
  virtual std::string lastError() = 0;
  /// Waits for the queued work; KernelError naming `what` on a failure.
  virtual void finish(const std::string &what) = 0;
  /// Gradient accumulation and exchange on the device; nullptr: none.
  virtual DeviceGradients *gradients() { return nullptr; }
};

/// What a CUDA executable links in (txrt_driver_cuda_backend).
struct CudaSupport {
  /// Opens device `index` (-1: the launcher's local rank modulo the
  /// devices); InputError naming --device and what is missing.
  std::unique_ptr<Device> (*open)(int32_t index);
  /// One line per device (name, memory, compute capability), or one line
  /// saying why there is none.
  void (*list)(std::ostream &out);
};

/// The --device of this run: "cpu", "cuda" or "cuda:N"; empty: the target
/// the executable was compiled for (Driver.cpp sets it).
void setRequestedDevice(const std::string &device);

/// The CUDA backend linked into this executable, or nullptr (a CPU build).
const CudaSupport *cudaSupport();

/// The device `model` runs on for the requested device: nullptr for the
/// CPU. InputError for an unknown name, a device this executable cannot
/// use, or one that is not there.
std::unique_ptr<Device> openDevice(const ModelInfo &model);

class ModelRunner {
public:
  ModelRunner(const ModelInfo &model, const txc_entry_fn *entryTable,
              int32_t threads);
  ~ModelRunner();

  const ModelInfo &model() const { return model_; }
  ParameterArena &params() { return params_; }
  txrt_context *context() { return ctx_.get(); }
  /// The device the entries run on; nullptr: the CPU.
  Device *device() { return device_.get(); }
  /// Copies the device's parameter arena (parameters, gradients, moments)
  /// to the host's, after updates that ran outside a training call.
  void pullParams();

  /// The entry named `name`; ModelError naming `purpose` when absent.
  const EntryInfo &entry(const std::string &name,
                     const std::string &purpose) const;

  /// Runs `entry` on `inputs` (one per entry input, in order, with the
  /// declared dtypes) and returns its outputs.
  std::vector<Tensor> call(const EntryInfo &entry,
                           const std::vector<const Tensor *> &inputs);

  /// Called after every entry call with its start and end on
  /// txrt_profile_clock_ns's clock (loop/Profile.h sets it, with the
  /// context's profiling on); empty: entry calls are not timed.
  std::function<void(const EntryInfo &, int64_t startNs, int64_t endNs)>
      onCall;

  /// txrt_context_set_train_state before a training entry.
  void setTrainState(int64_t step, uint64_t seed);

  /// Allocates the activation arena of `entry` now (call() does on first
  /// use); a ResourceError names the entry and the size.
  void reserveArena(const EntryInfo &entry);

private:
  const ModelInfo &model_;
  const txc_entry_fn *entryTable_;
  ParameterArena params_;
  ContextPtr ctx_;
  std::map<const EntryInfo *, AlignedBuffer> arenas_;
  /// On a device: the parameter arena's copy there (uploaded before every
  /// call, read back after training calls) and each entry's arena.
  std::unique_ptr<Device> device_;
  void *deviceParams_ = nullptr;
  std::map<const EntryInfo *, void *> deviceArenas_;

  std::vector<Tensor> callOnDevice(const EntryInfo &entry,
                                   const std::vector<const Tensor *> &inputs,
                                   const std::vector<int64_t> &dims,
                                   std::vector<Tensor> outputs);
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_MODELRUNNER_H
