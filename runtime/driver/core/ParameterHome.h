//===- ParameterHome.h - where the parameter arena is current ---*- C++ -*-===//
//
// A run's parameter arena (parameters, gradients, Adam moments: ModelInfo.h)
// and, on a device (a --target=cuda executable), its copy in device memory.
// On the CPU there is one arena and nothing to track. On a device the
// device copy is the home of the values while the run trains: it is
// allocated once, entries read and update it in place, and the host copy
// is brought up to date only when the driver asks for host values. Two
// flags say which side is behind:
//
//   host stale    a training entry (train_step, train_grad) ran on the
//                 device since the host copy was last brought back
//   device stale  the host copy was written (--init, --load, --resume, an
//                 EMA swap, a replay's restore) since it was last copied in
//
// There is no other way to the arena than these, so a missed copy
// cannot be written:
//
//   read()      the host arena, current (copies the device's back first
//               when the host is stale): checkpoints, the divergence scan
//   write()     the same, and the device copy becomes stale: whatever the
//               caller writes reaches the device before the next entry
//   forEntry()  the arena an entry gets: the host's on the CPU; on a device
//               the device's, copied in first when stale; a training entry
//               makes the host stale
//   onDevice()  on a device, the device's arena for a call of the driver's
//               own that reads the parameters there (--ema's update after
//               a step, loop/Ema.h), copied in first when stale
//
// The references read() and write() return are for the statement (or the
// block without entry calls) that asks for them; code that looks at the
// arena again after entry calls asks again (DivergenceWatch keeps a
// function that calls read(), not the arena). On the CPU read() and write()
// return the one arena and copy nothing, so the CPU path is what it was.
//
// Because these are the only ways in, they also say when the arena is
// constant: on the CPU, forEntry() of a forward entry freezes the arena in
// the txrt context (txrt_context_set_frozen_parameters: the linears then
// read their weights from copies packed once), and write() or a training
// entry thaws it first, which drops the copies before anything can change
// the values they were made from.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PARAMETERHOME_H
#define TXRT_DRIVER_PARAMETERHOME_H

#include "core/Device.h"
#include "core/ModelInfo.h"
#include "core/Parameters.h"

#include "txrt/txrt.h"

#include <cstdint>

namespace txrt::driver {

class ParameterHome {
public:
  /// The host arena, and with `device` (not owned; nullptr: the CPU) its
  /// device copy, allocated now (a ResourceError names it and the size).
  /// The device copy starts stale: the first entry copies the host's in.
  /// `ctx` (not owned; may be nullptr): the context whose entries read the
  /// host arena, told when it is frozen (the CPU only).
  ParameterHome(const ModelInfo &model, Device *device,
                txrt_context *ctx = nullptr);
  ~ParameterHome();
  ParameterHome(const ParameterHome &) = delete;
  ParameterHome &operator=(const ParameterHome &) = delete;

  /// The host arena with the current values, to read.
  const ParameterArena &read();
  /// The host arena with the current values, to write; the device copy is
  /// stale until the next entry call.
  ParameterArena &write();
  /// The parameter arena to pass to an entry of `kind` now.
  void *forEntry(EntryKind kind);
  /// On a device: its arena with the current values, for a device call
  /// that reads them (and writes none of the arena).
  const void *onDevice();

  /// The device the arena lives on; nullptr: the CPU.
  Device *device() const { return device_; }

  /// Whether the host copy is current (always on the CPU).
  bool hostCurrent() const { return !hostStale_; }
  /// Whether the device copy is current (always on the CPU).
  bool deviceCurrent() const { return !deviceStale_; }
  /// The whole-arena copies made so far, each way; 0 on the CPU.
  int64_t copiesToDevice() const { return copiesToDevice_; }
  int64_t copiesToHost() const { return copiesToHost_; }
  /// Whether the host arena is frozen in the context now.
  bool frozen() const { return frozen_; }

private:
  void pullToHost();
  /// Copies the host arena in when the device copy is stale.
  void pushToDevice();
  /// Ends the context's promise that the host arena is constant.
  void thaw();

  const ModelInfo &model_;
  ParameterArena host_;
  Device *device_;
  void *deviceArena_ = nullptr;
  bool hostStale_ = false, deviceStale_ = false;
  txrt_context *ctx_;
  bool frozen_ = false;
  int64_t copiesToDevice_ = 0, copiesToHost_ = 0;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_PARAMETERHOME_H
