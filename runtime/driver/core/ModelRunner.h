//===- ModelRunner.h - call compiled entries on in-memory tensors -*- C++ -*-===//
//
// What train, eval, translate and bench share: the txrt context, the
// parameter arena (ParameterHome.h: on a device it lives there, and the host
// reaches it only through read() and write()), one activation arena per
// entry (allocated on first use and reused, or up front with reserveArena),
// and a call that derives the dims from the input shapes (bindDims),
// allocates the outputs and turns a failure status into a KernelError
// naming the entry. Allocations go through Memory.h, so running out of
// memory names the arena or output. An entry's inputs and outputs may also
// be ResidentTensors (ResidentTensor.h), which stay on the device between
// calls: callWith takes them as inputs, callKeeping leaves the outputs so.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_MODELRUNNER_H
#define TXRT_DRIVER_MODELRUNNER_H

#include "core/Device.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"
#include "core/ParameterHome.h"
#include "core/ResidentTensor.h"
#include "core/Tensor.h"

#include "txrt/txrt.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace txrt::driver {

struct ContextDeleter {
  void operator()(txrt_context *ctx) const { txrt_context_destroy(ctx); }
};
using ContextPtr = std::unique_ptr<txrt_context, ContextDeleter>;

/// A txrt context with `threads` threads (0: the default); InputError for a
/// bad thread count, KernelError otherwise.
ContextPtr createContext(int32_t threads);

/// The --device of this run: "cpu", "cuda" or "cuda:N"; empty: the target
/// the executable was compiled for (Driver.cpp sets it).
void setRequestedDevice(const std::string &device);

/// --allow-tf32 for this run: every device openDevice opens allows TF32
/// matrix products; openDevice refuses it for the CPU.
void setAllowTf32(bool allow);

/// The CUDA backend linked into this executable, or nullptr (a CPU build).
const CudaSupport *cudaSupport();

/// Whether `model` runs on a device (not the CPU) for the requested device,
/// without opening it (dispatch has checked that openDevice can).
bool runsOnDevice(const ModelInfo &model);

/// Checks --device and --allow-tf32 against `model` without opening a
/// device (InputError as openDevice); returns the CUDA device index (-1:
/// the MPI rank's), nullopt for the CPU. info and export, which open none,
/// check them too (they took any value).
std::optional<int32_t> checkDeviceRequest(const ModelInfo &model);

/// The device `model` runs on for the requested device: nullptr for the
/// CPU. InputError for an unknown name, a device this executable cannot
/// use, or one that is not there.
std::unique_ptr<Device> openDevice(const ModelInfo &model);

/// An input of ModelRunner::callWith: a host tensor (on a device, copied
/// in for the call, and a cache input copied back after it) or a resident
/// one (passed where it is; a cache input the entry writes in place stays
/// written there).
struct EntryInput {
  EntryInput(const Tensor *tensor) : host(tensor) {}
  EntryInput(ResidentTensor *tensor) : resident(tensor) {}
  const Tensor *host = nullptr;
  ResidentTensor *resident = nullptr;
};

class ModelRunner {
public:
  ModelRunner(const ModelInfo &model, const txc_entry_fn *entryTable,
              int32_t threads);
  ~ModelRunner();

  const ModelInfo &model() const { return model_; }
  /// The parameter arena: params().read() / params().write() on the host.
  ParameterHome &params() { return params_; }
  txrt_context *context() { return ctx_.get(); }
  /// The device the entries run on; nullptr: the CPU.
  Device *device() { return device_.get(); }

  /// The entry named `name`; ModelError naming `purpose` when absent.
  const EntryInfo &entry(const std::string &name,
                     const std::string &purpose) const;

  /// Runs `entry` on `inputs` (one per entry input, in order, with the
  /// declared dtypes) and returns its outputs; `dims` gives the dims no
  /// input determines (run --dim).
  std::vector<Tensor> call(const EntryInfo &entry,
                           const std::vector<const Tensor *> &inputs,
                           const std::vector<std::pair<std::string, int64_t>>
                               &dims = {});

  /// call() with inputs that may be resident tensors of this runner's
  /// device (ResidentTensor.h; std::logic_error for one of another device);
  /// the outputs come back to the host.
  std::vector<Tensor> callWith(const EntryInfo &entry,
                               const std::vector<EntryInput> &inputs);
  /// callWith whose outputs stay where the entry wrote them: on a device
  /// they never come to the host.
  std::vector<ResidentTensor> callKeeping(const EntryInfo &entry,
                                          const std::vector<EntryInput> &inputs);
  /// callKeeping into `outputs`: tensors of an earlier call keep their
  /// storage when it holds the new shapes (ResidentTensor::assign), so a
  /// batch after batch writes to the same addresses; others are made.
  void callKeeping(const EntryInfo &entry,
                   const std::vector<EntryInput> &inputs,
                   std::vector<ResidentTensor> &outputs);

  /// Called after every entry call with its start and end on
  /// txrt_profile_clock_ns's clock (loop/Profile.h sets it, with the
  /// context's profiling on); empty: entry calls are not timed.
  std::function<void(const EntryInfo &, int64_t startNs, int64_t endNs)>
      onCall;

  /// txrt_context_set_train_state before a training entry.
  void setTrainState(int64_t step, uint64_t seed);

  /// CUDA graphs on a device (docs/cuda.md "CUDA graphs"): a train_step,
  /// train_grad, decode_step or lm_step call whose dims and buffers were
  /// seen before is captured once and replayed after that.
  struct GraphStats {
    int64_t captured = 0; ///< graphs made
    int64_t replays = 0;  ///< calls that ran as a replay
    int64_t refused = 0;  ///< captures the device refused (run directly)
    std::string lastRefusal;
    /// "CUDA graphs: N captured, M steps replayed[, R refused (last:
    /// WHY)]".
    std::string describe() const;
  };
  const GraphStats &graphStats() const { return graphStats_; }

  /// Allocates the activation arena of `entry` now (call() does on first
  /// use); a ResourceError names the entry and the size.
  void reserveArena(const EntryInfo &entry);

private:
  const ModelInfo &model_;
  const txc_entry_fn *entryTable_;
  ContextPtr ctx_;
  std::map<const EntryInfo *, AlignedBuffer> arenas_;
  /// On a device: the device, then (destroyed before it) the parameter
  /// arena's home and each entry's activation arena there.
  std::unique_ptr<Device> device_;
  ParameterHome params_;
  std::map<const EntryInfo *, void *> deviceArenas_;
  /// Each entry's input and output buffers on the device, and the pinned
  /// host memory their copies go through (nullptr: the device gives none),
  /// in the order of its inputs then outputs: kept between calls, grown
  /// when too small.
  struct DeviceBuffer {
    void *device = nullptr;
    void *pinned = nullptr;
    uint64_t bytes = 0;
  };
  std::map<const EntryInfo *, std::vector<DeviceBuffer>> callBuffers_;

  /// An entry's call as a graph sees it: the dims and the call's buffers,
  /// which the captured launches keep (the entry's host code reads these
  /// copies while it is captured). graph nullptr: seen once, not captured
  /// yet (the first call makes the lazy allocations, loads and plans a
  /// capture may not); refused: the capture failed, run directly.
  struct StepGraph {
    std::vector<int64_t> dims;
    std::vector<void *> inputs, outputs;
    void *graph = nullptr;
    bool refused = false;
    uint64_t lastUse = 0;
  };
  /// The dims, then the inputs' and outputs' addresses, of a call.
  using GraphKey = std::vector<uintptr_t>;
  /// At most this many a training entry (batch shapes differ; the least
  /// recently used goes), and a decoding step's (a graph a position and
  /// batch shape: 512 positions of one shape, or fewer of several).
  static constexpr size_t kMaxGraphsPerEntry = 8;
  static constexpr size_t kMaxGraphsPerDecodingEntry = 512;
  std::map<const EntryInfo *, std::map<GraphKey, StepGraph>> graphs_;
  uint64_t graphClock_ = 0;
  GraphStats graphStats_;
  bool graphsWanted_ = true; ///< TXRT_CUDA_GRAPHS is not 0
  /// Runs the entry on the device: directly, or captured and replayed.
  int32_t runOnDevice(const EntryInfo &entry, txc_entry_fn function,
                      const std::vector<int64_t> &dims,
                      std::vector<void *> &inputs,
                      std::vector<void *> &outputs, void *params);

  void reserveCallBuffer(DeviceBuffer &buffer, uint64_t bytes,
                         const std::string &what);
  void copyIn(DeviceBuffer &buffer, const void *src, uint64_t bytes);
  void copyOut(void *dst, DeviceBuffer &buffer, uint64_t bytes);

  /// What call, callWith and callKeeping share: runs `entry` on `inputs`
  /// and writes its outputs to `hostOutputs` (keep false) or
  /// `keptOutputs` (keep true).
  void invoke(const EntryInfo &entry, const std::vector<EntryInput> &inputs,
              const std::vector<std::pair<std::string, int64_t>> &dims,
              bool keep,
              std::vector<Tensor> &hostOutputs,
              std::vector<ResidentTensor> &keptOutputs);
  void invokeOnDevice(const EntryInfo &entry, txc_entry_fn function,
                      const std::vector<EntryInput> &inputs,
                      const std::vector<int64_t> &dims,
                      std::vector<void *> &outputPointers,
                      std::vector<Tensor> &hostOutputs);
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_MODELRUNNER_H
