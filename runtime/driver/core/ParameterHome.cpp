//===- ParameterHome.cpp - where the parameter arena's current values are -===//
#include "core/ParameterHome.h"

#include <stdexcept>

namespace txrt::driver {

ParameterHome::ParameterHome(const ModelInfo &model, Device *device,
                             txrt_context *ctx)
    : model_(model), host_(model), device_(device), ctx_(ctx) {
  if (!device_)
    return;
  deviceArena_ =
      device_->allocate(uint64_t(model.paramArenaBytes), "the parameter arena");
  deviceStale_ = true; // device memory starts with anything in it
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
  hostStale_ = false;
  ++copiesToHost_;
}

void ParameterHome::pushToDevice() {
  if (!deviceStale_)
    return;
  // data() rounds the bf16 copies first when parameters were written.
  device_->toDevice(deviceArena_, host_.data(),
                    uint64_t(model_.paramArenaBytes));
  deviceStale_ = false;
  ++copiesToDevice_;
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
  pushToDevice();
  // A training entry writes gradients (and its update parameters and
  // moments) on the device; stale from the call on, so a failed call
  // leaves the host reading what the device holds, as on the CPU.
  if (kind != EntryKind::Forward)
    hostStale_ = true;
  return deviceArena_;
}

const void *ParameterHome::onDevice() {
  if (!device_)
    throw std::logic_error("ParameterHome::onDevice on the CPU");
  pushToDevice();
  return deviceArena_;
}

} // namespace txrt::driver
