//===- ModelRunner.cpp - call compiled entries on in-memory tensors -------===//
#include "core/ModelRunner.h"
#include "core/Error.h"
#include "data/InputValidation.h"
#include "core/Memory.h"

#include <algorithm>

namespace txrt::driver {

ContextPtr createContext(int32_t threads) {
  txrt_context *ctx = nullptr;
  txrt_status status = txrt_context_create_with_threads(threads, &ctx);
  if (status != TXRT_OK) {
    std::string message = std::string("cannot create the txrt context: ") +
                          txrt_last_error(nullptr);
    if (status == TXRT_ERROR_INVALID_ARGUMENT)
      throw InputError(message);
    throw KernelError(message);
  }
  return ContextPtr(ctx);
}

ModelRunner::ModelRunner(const ModelInfo &model,
                         const txc_entry_fn *entryTable, int32_t threads)
    : model_(model), entryTable_(entryTable), params_(model),
      ctx_(createContext(threads)) {}

const EntryInfo &ModelRunner::entry(const std::string &name,
                                    const std::string &purpose) const {
  const EntryInfo *found = model_.findEntry(name);
  if (!found)
    throw InputError("model '" + model_.model + "' has no entry '" + name +
                     "', which " + purpose + " needs");
  return *found;
}

void ModelRunner::reserveArena(const EntryInfo &entry) {
  if (arenas_.count(&entry))
    return;
  arenas_.emplace(&entry, allocateBuffer(uint64_t(entry.arenaBytes),
                                         "the activation arena of entry '" +
                                             entry.name + "'"));
}

void ModelRunner::setTrainState(int64_t step, uint64_t seed) {
  txrt_context_set_train_state(ctx_.get(), step, seed);
}

std::vector<Tensor> ModelRunner::call(const EntryInfo &entry,
                                      const std::vector<const Tensor *> &inputs) {
  if (inputs.size() != entry.inputs.size())
    throw ModelError("entry '" + entry.name + "' takes " +
                     std::to_string(entry.inputs.size()) + " inputs, not " +
                     std::to_string(inputs.size()));
  txc_entry_fn function =
      entryTable_[size_t(&entry - model_.entries.data())];
  if (!function)
    throw ModelError("the entry table has no function for '" + entry.name +
                     "'");
  std::vector<InputSource> sources;
  std::vector<Tensor> views; // bindDims takes tensors; shapes suffice
  for (size_t i = 0; i < inputs.size(); ++i)
    sources.push_back({entry.inputs[i].name, "(in memory)"});
  // bindDims only reads dtype and shape: check them on light copies.
  for (const Tensor *input : inputs) {
    Tensor shapeOnly;
    shapeOnly.dtype = input->dtype;
    shapeOnly.shape = input->shape;
    views.push_back(std::move(shapeOnly));
  }
  std::vector<int64_t> dims = bindDims(model_, entry, views, sources);

  reserveArena(entry);
  std::vector<Tensor> outputs;
  std::vector<void *> inputPointers, outputPointers;
  for (const Tensor *input : inputs)
    inputPointers.push_back(const_cast<void *>(input->data()));
  for (const TensorSig &sig : entry.outputs) {
    outputs.push_back(allocateTensor(sig.dtype, concreteShape(sig, dims),
                                     "output '" + sig.name + "' of entry '" +
                                         entry.name + "'"));
    outputPointers.push_back(outputs.back().data());
  }
  auto arena = arenas_.find(&entry);
  // The entry's own loops run in the context's denormal mode, as its
  // txrt_ calls do (txrt.h, txrt_denormals_enter).
  uint32_t savedFloatMode = txrt_denormals_enter(ctx_.get());
  int64_t startNs = onCall ? txrt_profile_clock_ns() : 0;
  int32_t status = function(ctx_.get(), params_.data(), arena->second.data(),
                            dims.data(), inputPointers.data(),
                            outputPointers.data());
  int64_t endNs = onCall ? txrt_profile_clock_ns() : 0;
  txrt_denormals_leave(savedFloatMode);
  if (onCall && status == TXRT_OK)
    onCall(entry, startNs, endNs);
  if (status != TXRT_OK)
    throw KernelError("entry '" + entry.name + "' failed (" +
                      txrt_status_string(status) +
                      "): " + txrt_last_error(ctx_.get()));
  return outputs;
}

} // namespace txrt::driver
