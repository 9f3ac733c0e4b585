//===- ParameterHome.cpp - where the parameter arena's current values are -===//
#include "core/ParameterHome.h"

#include <algorithm>

namespace txrt::driver {

ParameterHome::ParameterHome(const ModelInfo &model, Device *device,
                             txrt_context *ctx)
    : model_(model), host_(model), device_(device), ctx_(ctx) {
  if (!device_)
    return;
  deviceArena_ =
      device_->allocate(uint64_t(model.paramArenaBytes), "the parameter arena");
  deviceStale_ = true; // device memory starts with anything in it
  std::vector<Range> ranges;
  for (const ParamInfo &param : model.params)
    ranges.push_back({param.offset, param.byteSize});
  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.offset < b.offset; });
  for (const Range &range : ranges) {
    if (!parameterRanges_.empty() &&
        parameterRanges_.back().offset + parameterRanges_.back().bytes ==
            range.offset)
      parameterRanges_.back().bytes += range.bytes;
    else
      parameterRanges_.push_back(range);
  }
}

ParameterHome::~ParameterHome() {
  thaw();
  if (device_)
    device_->release(deviceArena_);
}

void ParameterHome::pullToHost() {
  if (!hostStale_)
    return;
  // The updates queued on the device (and an exchange's deferred ones)
  // end before the copy; a failure names what was running.
  device_->finish("the parameter update");
  device_->toHost(host_.bytes(), deviceArena_,
                  uint64_t(model_.paramArenaBytes));
  hostStale_ = hostParamsStale_ = false;
  ++copiesToHost_;
}

ParameterValues ParameterHome::readParameters() {
  if (hostParamsStale_) {
    device_->finish("the parameter update");
    char *host = static_cast<char *>(host_.bytes());
    for (const Range &range : parameterRanges_)
      device_->toHost(host + range.offset,
                      static_cast<char *>(deviceArena_) + range.offset,
                      uint64_t(range.bytes));
    hostParamsStale_ = false;
    ++parameterCopiesToHost_;
  }
  return ParameterValues(host_);
}

const ParameterArena &ParameterHome::read() {
  pullToHost();
  return host_;
}

void ParameterHome::thaw() {
  if (frozen_)
    txrt_context_set_frozen_parameters(ctx_, nullptr, 0);
  frozen_ = false;
}

ParameterArena &ParameterHome::write() {
  thaw();
  pullToHost();
  if (device_)
    deviceStale_ = true;
  return host_;
}

void *ParameterHome::forEntry(EntryKind kind) {
  if (!device_) {
    if (kind != EntryKind::Forward) {
      thaw(); // the entry updates parameters (or leaves gradients)
      return host_.data();
    }
    void *arena = host_.data(); // rounds bf16 copies first, if any are due
    if (!frozen_ && ctx_) {
      txrt_context_set_frozen_parameters(ctx_, arena,
                                         size_t(model_.paramArenaBytes));
      frozen_ = true;
    }
    return arena;
  }
  if (deviceStale_) {
    // data() rounds the bf16 copies first when parameters were written.
    device_->toDevice(deviceArena_, host_.data(),
                      uint64_t(model_.paramArenaBytes));
    deviceStale_ = false;
    ++copiesToDevice_;
  }
  // A training entry writes gradients (and its update parameters and
  // moments) on the device; stale from the call on, so a failed call
  // leaves the host reading what the device holds, as on the CPU.
  if (kind != EntryKind::Forward)
    hostStale_ = hostParamsStale_ = true;
  return deviceArena_;
}

} // namespace txrt::driver
