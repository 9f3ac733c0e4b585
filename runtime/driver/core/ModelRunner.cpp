//===- ModelRunner.cpp - call compiled entries on in-memory tensors -------===//
#include "core/ModelRunner.h"
#include "core/Error.h"
#include "core/Memory.h"
#include "data/InputValidation.h"
#include "loop/Profile.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace txrt::driver {

ContextPtr createContext(int32_t threads) {
  txrt_context *ctx = nullptr;
  txrt_status status = txrt_context_create_with_threads(threads, &ctx);
  if (status != TXRT_OK) {
    std::string message = std::string("cannot create the txrt context: ") +
                          txrt_last_error(nullptr);
    if (status == TXRT_ERROR_INVALID_ARGUMENT) {
      // A bad TXRT_* value: the variable's own words, without the call's
      // "txrt_context_create(num_threads=0): invalid argument: " (the 0,
      // "the default", read as a bad thread count beside
      // TXRT_NUM_THREADS=1).
      const std::string prefix = "invalid argument: ";
      const std::string::size_type at = message.find(prefix);
      if (at != std::string::npos)
        message = "cannot create the txrt context: " +
                  message.substr(at + prefix.size());
      throw InputError(message);
    }
    throw KernelError(message);
  }
  return ContextPtr(ctx);
}

// The CUDA executable's backend (runtime/cuda/DriverDevice.cpp); a CPU
// executable does not link it and the weak reference stays null.
extern "C" const CudaSupport *txrt_driver_cuda_backend() __attribute__((weak));

namespace {
std::string &requested() {
  static std::string device;
  return device;
}
} // namespace

void setRequestedDevice(const std::string &device) { requested() = device; }

namespace {
bool &tf32Allowed() {
  static bool allowed = false;
  return allowed;
}
} // namespace

void setAllowTf32(bool allow) { tf32Allowed() = allow; }

const CudaSupport *cudaSupport() {
  return txrt_driver_cuda_backend ? txrt_driver_cuda_backend() : nullptr;
}

bool runsOnDevice(const ModelInfo &model) {
  return (requested().empty() ? model.target : requested()) != "cpu";
}

std::optional<int32_t> checkDeviceRequest(const ModelInfo &model) {
  std::string device = requested().empty() ? model.target : requested();
  std::string flag = "--device " + device;
  if (device.empty())
    throw InputError("--device needs a value: cpu, cuda or cuda:N");
  if (device == "cpu") {
    if (tf32Allowed())
      throw InputError("--allow-tf32: this run is on the CPU, whose matrix "
                       "products are always fp32 (TF32 is a mode of NVIDIA "
                       "GPUs' tensor cores; leave the flag out)");
    if (model.target == "cuda")
      throw InputError(flag + ": this executable was compiled with "
                              "--target=cuda and runs on CUDA devices only "
                              "(compile the spec without --target for the CPU)");
    return std::nullopt;
  }
  // "cuda" under an MPI launcher: one GPU per rank of a machine.
  int32_t index = device == "cuda" && std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")
                      ? -1
                      : 0;
  if (device.rfind("cuda:", 0) == 0) {
    std::string number = device.substr(5);
    if (number.empty())
      throw InputError(flag + ": a device number follows 'cuda:', as in "
                              "cuda:1");
    if (number.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(flag + ": '" + number +
                       "' is not a device number (one device a run: cuda:0, "
                       "cuda:1, ...)");
    if (number.size() > 4)
      throw InputError(flag + ": device number " + number +
                       " is too large (at most 9999)");
    index = std::stoi(number);
  } else if (device != "cuda") {
    throw InputError(flag + ": unknown device; the devices are cpu and "
                            "cuda[:N]");
  }
  if (!cudaSupport() || model.target != "cuda")
    throw InputError(flag + ": this executable was compiled for the CPU "
                            "(compile the spec with txc --target=cuda to run "
                            "it on a GPU)");
  return index;
}

std::unique_ptr<Device> openDevice(const ModelInfo &model) {
  std::optional<int32_t> index = checkDeviceRequest(model);
  if (!index)
    return nullptr;
  std::unique_ptr<Device> opened = cudaSupport()->open(*index);
  if (tf32Allowed())
    opened->allowTf32();
  return opened;
}

ModelRunner::ModelRunner(const ModelInfo &model,
                         const txc_entry_fn *entryTable, int32_t threads)
    : model_(model), entryTable_(entryTable), ctx_(createContext(threads)),
      device_(openDevice(model)), params_(model, device_.get(), ctx_.get()) {
  // TXRT_CUDA_GRAPHS=0 runs every call directly.
  const char *graphs = std::getenv("TXRT_CUDA_GRAPHS");
  graphsWanted_ = !graphs || std::string(graphs) != "0";
}

ModelRunner::~ModelRunner() {
  if (!device_)
    return;
  for (auto &[entry, graphs] : graphs_)
    for (auto &[key, graph] : graphs)
      if (graph.graph)
        device_->releaseGraph(graph.graph);
  for (auto &[entry, arena] : deviceArenas_)
    device_->release(arena);
  for (auto &[entry, buffers] : callBuffers_)
    for (DeviceBuffer &buffer : buffers) {
      if (buffer.device)
        device_->release(buffer.device);
      if (buffer.pinned)
        device_->releasePinned(buffer.pinned);
    }
}

const EntryInfo &ModelRunner::entry(const std::string &name,
                                    const std::string &purpose) const {
  const EntryInfo *found = model_.findEntry(name);
  if (!found)
    throw InputError("model '" + model_.model + "' has no entry '" + name +
                     "', which " + purpose + " needs");
  return *found;
}

void ModelRunner::reserveArena(const EntryInfo &entry) {
  if (device_) {
    if (!deviceArenas_.count(&entry))
      deviceArenas_[&entry] = device_->allocate(
          uint64_t(entry.arenaBytes),
          "the activation arena of entry '" + entry.name + "'");
    return;
  }
  if (arenas_.count(&entry))
    return;
  arenas_.emplace(&entry, allocateBuffer(uint64_t(entry.arenaBytes),
                                         "the activation arena of entry '" +
                                             entry.name + "'"));
}

void ModelRunner::setTrainState(int64_t step, uint64_t seed) {
  txrt_context_set_train_state(ctx_.get(), step, seed);
  if (device_)
    device_->setTrainState(step, seed);
}

std::vector<Tensor> ModelRunner::call(const EntryInfo &entry,
                                      const std::vector<const Tensor *> &inputs,
                                      const DimOverrides &dimOverrides) {
  std::vector<EntryInput> hostInputs(inputs.begin(), inputs.end());
  std::vector<Tensor> outputs;
  std::vector<ResidentTensor> unused;
  invoke(entry, hostInputs, dimOverrides, false, outputs, unused);
  return outputs;
}

std::vector<Tensor> ModelRunner::callWith(const EntryInfo &entry,
                                          const std::vector<EntryInput> &inputs) {
  std::vector<Tensor> outputs;
  std::vector<ResidentTensor> unused;
  invoke(entry, inputs, {}, false, outputs, unused);
  return outputs;
}

std::vector<ResidentTensor>
ModelRunner::callKeeping(const EntryInfo &entry,
                         const std::vector<EntryInput> &inputs) {
  std::vector<ResidentTensor> outputs;
  callKeeping(entry, inputs, outputs);
  return outputs;
}

void ModelRunner::callKeeping(const EntryInfo &entry,
                              const std::vector<EntryInput> &inputs,
                              std::vector<ResidentTensor> &outputs) {
  std::vector<Tensor> unused;
  invoke(entry, inputs, {}, true, unused, outputs);
}

void ModelRunner::invoke(const EntryInfo &entry,
                         const std::vector<EntryInput> &inputs,
                         const DimOverrides &dimOverrides, bool keep,
                         std::vector<Tensor> &hostOutputs,
                         std::vector<ResidentTensor> &keptOutputs) {
  if (inputs.size() != entry.inputs.size())
    throw ModelError("entry '" + entry.name + "' takes " +
                     std::to_string(entry.inputs.size()) + " inputs, not " +
                     std::to_string(inputs.size()));
  txc_entry_fn function =
      entryTable_[size_t(&entry - model_.entries.data())];
  if (!function)
    throw ModelError("the entry table has no function for '" + entry.name +
                     "'");
  // bindDims only reads dtype and shape: check them on light copies.
  std::vector<InputSource> sources;
  std::vector<Tensor> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    sources.push_back({entry.inputs[i].name, "(in memory)"});
    const EntryInput &input = inputs[i];
    if (input.resident && input.resident->device() != device_.get())
      throw std::logic_error("input '" + entry.inputs[i].name +
                             "' of entry '" + entry.name +
                             "' is resident on another device than the "
                             "entry runs on");
    Tensor shapeOnly;
    shapeOnly.dtype = input.host ? input.host->dtype : input.resident->dtype();
    shapeOnly.shape = input.host ? input.host->shape : input.resident->shape();
    views.push_back(std::move(shapeOnly));
  }
  std::vector<int64_t> dims =
      bindDims(model_, entry, views, sources, dimOverrides);

  reserveArena(entry);
  if (keep)
    keptOutputs.resize(std::min(keptOutputs.size(), entry.outputs.size()));
  std::vector<void *> outputPointers;
  for (const TensorSig &sig : entry.outputs) {
    std::string what =
        "output '" + sig.name + "' of entry '" + entry.name + "'";
    if (keep) {
      const size_t index = outputPointers.size();
      if (index < keptOutputs.size())
        // On a device no zeros first (a memset launch a decoded token):
        // the entry writes every element of its outputs there, as it does
        // into the call buffers it reuses uncleared (callWith).
        keptOutputs[index].assign(device_.get(), sig.dtype,
                                  concreteShape(sig, dims), what,
                                  /*zeroed=*/!device_);
      else
        keptOutputs.emplace_back(device_.get(), sig.dtype,
                                 concreteShape(sig, dims), what);
      outputPointers.push_back(keptOutputs[index].data());
    } else {
      hostOutputs.push_back(
          allocateTensor(sig.dtype, concreteShape(sig, dims), what));
      outputPointers.push_back(hostOutputs.back().data());
    }
  }
  if (device_) {
    invokeOnDevice(entry, function, inputs, dims, outputPointers, hostOutputs);
    return;
  }
  std::vector<void *> inputPointers;
  for (const EntryInput &input : inputs)
    inputPointers.push_back(input.host
                                ? const_cast<void *>(input.host->data())
                                : input.resident->data());
  auto arena = arenas_.find(&entry);
  // The entry's own loops run in the context's denormal mode, as its
  // txrt_ calls do (txrt.h, txrt_denormals_enter).
  uint32_t savedFloatMode = txrt_denormals_enter(ctx_.get());
  int64_t startNs = onCall ? txrt_profile_clock_ns() : 0;
  int32_t status = function(ctx_.get(), params_.forEntry(entry.kind),
                            arena->second.data(),
                            dims.data(), inputPointers.data(),
                            outputPointers.data());
  int64_t endNs = onCall ? txrt_profile_clock_ns() : 0;
  txrt_denormals_leave(savedFloatMode);
  if (onCall && status == TXRT_OK)
    onCall(entry, startNs, endNs);
  if (status != TXRT_OK)
    throw KernelError(
        "entry '" + entry.name + "' failed (" + txrt_status_string(status) +
        ")" +
        siteLocation(model_.metadataJson, txrt_last_error_site(ctx_.get())) +
        ": " + txrt_last_error(ctx_.get()));
}

void ModelRunner::reserveCallBuffer(DeviceBuffer &buffer, uint64_t bytes,
                                    const std::string &what) {
  if (buffer.device && bytes <= buffer.bytes)
    return;
  // Grown to at least twice what it held: an input that grows a little at
  // every call (lm_step's cache_ids, a position a token) is not allocated
  // again at every call, and keeps its address for a graph's replays.
  if (buffer.device) {
    bytes = std::max(bytes, 2 * buffer.bytes);
    device_->release(buffer.device);
  }
  if (buffer.pinned)
    device_->releasePinned(buffer.pinned);
  buffer = DeviceBuffer(); // a failed allocation leaves none to release
  buffer.device = device_->allocate(bytes, what);
  buffer.pinned = device_->allocatePinned(bytes);
  buffer.bytes = bytes;
}

void ModelRunner::copyIn(DeviceBuffer &buffer, const void *src,
                         uint64_t bytes) {
  if (buffer.pinned && bytes) {
    std::memcpy(buffer.pinned, src, bytes);
    src = buffer.pinned;
  }
  device_->toDevice(buffer.device, src, bytes);
}

void ModelRunner::copyOut(void *dst, DeviceBuffer &buffer, uint64_t bytes) {
  if (buffer.pinned && bytes) {
    device_->toHost(buffer.pinned, buffer.device, bytes);
    std::memcpy(dst, buffer.pinned, bytes);
    return;
  }
  device_->toHost(dst, buffer.device, bytes);
}

void ModelRunner::invokeOnDevice(const EntryInfo &entry,
                                 txc_entry_fn function,
                                 const std::vector<EntryInput> &inputs,
                                 const std::vector<int64_t> &dims,
                                 std::vector<void *> &outputPointers,
                                 std::vector<Tensor> &hostOutputs) {
  Device &device = *device_;
  // Each host input and output has its buffer on the device, and one in
  // pinned host memory to copy through, kept from call to call and grown
  // when a call needs more: the inputs' first, then the outputs'. Resident
  // inputs and kept outputs are where the entry reads and writes them.
  std::vector<DeviceBuffer> &slots = callBuffers_[&entry];
  slots.resize(inputs.size() + outputPointers.size());
  std::vector<void *> inputPointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].resident) {
      inputPointers.push_back(inputs[i].resident->data());
      continue;
    }
    uint64_t bytes = inputs[i].host->byteSize();
    reserveCallBuffer(slots[i], bytes,
                      "input '" + entry.inputs[i].name + "' of entry '" +
                          entry.name + "'");
    copyIn(slots[i], inputs[i].host->data(), bytes);
    inputPointers.push_back(slots[i].device);
  }
  for (size_t i = 0; i < hostOutputs.size(); ++i) {
    DeviceBuffer &slot = slots[inputs.size() + i];
    reserveCallBuffer(slot, hostOutputs[i].byteSize(),
                      "output '" + entry.outputs[i].name + "' of entry '" +
                          entry.name + "'");
    outputPointers[i] = slot.device;
  }
  // The parameter arena stays on the device (ParameterHome.h): copied in
  // only when the host wrote it, never back here.
  void *deviceParams = params_.forEntry(entry.kind);
  int64_t startNs = onCall ? txrt_profile_clock_ns() : 0;
  int32_t status = runOnDevice(entry, function, dims, inputPointers,
                               outputPointers, deviceParams);
  if (status != TXRT_OK) {
    std::string message = "entry '" + entry.name + "' failed (" +
                          txrt_status_string(status) + ") on " +
                          device.describe() + ": " + device.lastError();
    // The inputs' copies may still read the pinned buffers: wait for them
    // (the call's own error is the one to report).
    try {
      device.finish("entry '" + entry.name + "'");
    } catch (const DriverError &) {
    }
    throw KernelError(message);
  }
  device.finish("entry '" + entry.name + "'");
  int64_t endNs = onCall ? txrt_profile_clock_ns() : 0;
  if (onCall)
    onCall(entry, startNs, endNs);
  for (size_t i = 0; i < hostOutputs.size(); ++i)
    copyOut(hostOutputs[i].data(), slots[inputs.size() + i],
            hostOutputs[i].byteSize());
  // Caches are inputs updated in place (decode_step, lm_step: ModelAbi.h);
  // a host one goes back, a resident one is already where it belongs.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (entry.inputs[i].role == "cache" && inputs[i].host)
      copyOut(const_cast<void *>(inputs[i].host->data()), slots[i],
              inputs[i].host->byteSize());
}

std::string ModelRunner::GraphStats::describe() const {
  std::string text = "CUDA graphs: " + std::to_string(captured) +
                     " captured, " + std::to_string(replays) +
                     " steps replayed";
  if (refused)
    text += ", " + std::to_string(refused) + " refused (last: " +
            lastRefusal + ")";
  return text;
}

int32_t ModelRunner::runOnDevice(const EntryInfo &entry, txc_entry_fn function,
                                 const std::vector<int64_t> &dims,
                                 std::vector<void *> &inputs,
                                 std::vector<void *> &outputs, void *params) {
  Device &device = *device_;
  const EntryCall direct{function,    device.context(),
                         params,      deviceArenas_.at(&entry),
                         dims.data(), inputs.data(),
                         outputs.data()};
  // Training steps repeat their plan, buffers and shapes step after step.
  // A decoding step's dims change with the position at every call, but
  // repeat batch after batch: the caches (ResidentTensor.h) and the
  // call's buffers keep their addresses, so each position gets its graph.
  const bool training = entry.kind == EntryKind::TrainStep ||
                        entry.kind == EntryKind::TrainGrad;
  const bool decoding = entry.role == "decode_step" || entry.role == "lm_step";
  if ((!training && !decoding) || !graphsWanted_)
    return direct.run();
  const size_t limit =
      training ? kMaxGraphsPerEntry : kMaxGraphsPerDecodingEntry;
  // The parameter and activation arenas are the entry's for the runner's
  // life: the dims and the call's buffers tell its calls apart.
  GraphKey key;
  key.reserve(dims.size() + inputs.size() + outputs.size());
  for (int64_t dim : dims)
    key.push_back(uintptr_t(dim));
  for (void *buffer : inputs)
    key.push_back(reinterpret_cast<uintptr_t>(buffer));
  for (void *buffer : outputs)
    key.push_back(reinterpret_cast<uintptr_t>(buffer));
  std::map<GraphKey, StepGraph> &graphs = graphs_[&entry];
  auto found = graphs.find(key);
  if (found == graphs.end()) {
    if (graphs.size() >= limit) {
      auto oldest = std::min_element(
          graphs.begin(), graphs.end(), [](const auto &a, const auto &b) {
            return a.second.lastUse < b.second.lastUse;
          });
      if (oldest->second.graph)
        device.releaseGraph(oldest->second.graph);
      graphs.erase(oldest);
    }
    StepGraph &fresh = graphs[std::move(key)];
    fresh.dims = dims;
    fresh.inputs = inputs;
    fresh.outputs = outputs;
    fresh.lastUse = ++graphClock_;
    return direct.run(); // the first call: lazy loads and allocations
  }
  StepGraph *slot = &found->second;
  slot->lastUse = ++graphClock_;
  if (slot->refused)
    return direct.run();
  if (!slot->graph) {
    // The slot's own copies of dims and buffers: they stay put while the
    // graph lives (a map's entries do not move).
    EntryCall call = direct;
    call.dims = slot->dims.data();
    call.inputs = slot->inputs.data();
    call.outputs = slot->outputs.data();
    std::string why;
    slot->graph = device.captureGraph(call, why);
    if (!slot->graph) {
      slot->refused = true;
      ++graphStats_.refused;
      graphStats_.lastRefusal = why;
      return direct.run();
    }
    ++graphStats_.captured;
  }
  if (!device.launchGraph(slot->graph))
    return direct.run(); // accumulation or ranks now: the graph waits
  ++graphStats_.replays;
  return TXRT_OK;
}

} // namespace txrt::driver
