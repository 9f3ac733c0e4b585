//===- ParameterHome.cpp - where the parameter arena's current values are -===//
#include "core/ParameterHome.h"

namespace txrt::driver {

ParameterHome::ParameterHome(const ModelInfo &model, Device *device)
    : model_(model), host_(model), device_(device) {
  if (!device_)
    return;
  deviceArena_ =
      device_->allocate(uint64_t(model.paramArenaBytes), "the parameter arena");
  deviceStale_ = true; // device memory starts with anything in it
}

ParameterHome::~ParameterHome() {
  if (device_)
    device_->release(deviceArena_);
}

void ParameterHome::pullToHost() {
  if (!hostStale_)
    return;
  // The updates queued on the device (and an exchange's deferred ones)
  // end before the copy; a failure names what was running.
  device_->finish("the parameter update");
  device_->toHost(host_.data(), deviceArena_, uint64_t(model_.paramArenaBytes));
  hostStale_ = false;
  ++copiesToHost_;
}

const ParameterArena &ParameterHome::read() {
  pullToHost();
  return host_;
}

ParameterArena &ParameterHome::write() {
  pullToHost();
  if (device_)
    deviceStale_ = true;
  return host_;
}

void *ParameterHome::forEntry(EntryKind kind) {
  if (!device_)
    return host_.data();
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
    hostStale_ = true;
  return deviceArena_;
}

} // namespace txrt::driver
