//===- FakeDevice.h - a stand-in for a GPU, on host memory ------*- C++ -*-===//
//
// What the driver's tests use for a --target=cuda executable's device,
// with no GPU: this binary links a CUDA backend (txrt_driver_cuda_backend,
// FakeDevice.cpp) whose "device" memory is host memory apart from the
// runner's, whose context is a CPU txrt_context, and which counts every
// copy, telling the parameter arena's and train --ema's average's apart
// from the per-call ones. Fresh device memory is filled with 0xff bytes
// (NaN as f32), as cudaMalloc's is garbage, so an entry that reads an arena
// nobody copied in goes wrong visibly. Its updateAverage runs the CUDA
// kernel's device code (runtime/cuda/kernels/EmaKernels.cuh) under the
// host emulation of test/unit/cuda/emulated/CudaEmulation.h, with Ema.cu's
// launch, and checks that both pointers lie in the buffers they should.
// Any model whose metadata says "target": "cuda" runs on it.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TEST_FAKEDEVICE_H
#define TXRT_DRIVER_TEST_FAKEDEVICE_H

#include "core/Device.h"

#include "txrt/txrt.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace txrt_driver_test {

/// What the fake devices did since the last reset (fakeDeviceCounts() = {}).
struct FakeDeviceCounts {
  /// Copies into or out of the parameter arena (all of it or a part),
  /// host to device and back, and the bytes copied back.
  int64_t arenaToDevice = 0, arenaToHost = 0, arenaBytesToHost = 0;
  /// The same for train --ema's average, and its updates (calls of
  /// updateAverage, one a run of adjacent parameters) and the elements
  /// they updated.
  int64_t averageToDevice = 0, averageToHost = 0, averageBytesToHost = 0;
  int64_t averageUpdateCalls = 0, averageElementsUpdated = 0;
  /// Every other copy (a call's inputs, outputs and caches), and those of
  /// them from or to pinned memory (allocatePinned).
  int64_t otherToDevice = 0, otherToHost = 0, otherPinned = 0;
  int64_t otherBytesToDevice = 0, otherBytesToHost = 0;
  /// Calls of copyRows (each any number of copies) and zeroRows, and the
  /// bytes they moved.
  int64_t withinDevice = 0, withinDeviceBytes = 0;
  /// Pinned host buffers not yet released.
  int64_t livePinned = 0;
  /// Device allocations made, and those not yet released.
  int64_t allocations = 0, liveAllocations = 0;
  int64_t opened = 0;
  /// Devices told --allow-tf32 (Device::allowTf32).
  int64_t tf32Allowed = 0;
  /// Greedy choices made on the device (argmaxRows calls) and the rows
  /// they chose for; their ids' copies back count in otherToHost.
  int64_t argmaxCalls = 0, argmaxRows = 0;
  /// Graphs captured, refused, replayed, and not yet released.
  int64_t graphsCaptured = 0, graphsRefused = 0, graphLaunches = 0;
  int64_t liveGraphs = 0;
};
FakeDeviceCounts &fakeDeviceCounts();

/// How the next opened fake device makes its gradients() from its context;
/// empty (the default): it has none.
using FakeGradientsMaker =
    std::function<std::unique_ptr<txrt::driver::DeviceGradients>(
        txrt_context *)>;
void setFakeDeviceGradients(FakeGradientsMaker maker);

/// What the fake devices do with CUDA graphs: capture and replay (the
/// default), refuse every capture, or capture but find the state not
/// replayable at each launch (as gradient accumulation makes the CUDA
/// device).
enum class FakeGraphs { Replay, Refuse, NotReplayable };
void setFakeDeviceGraphs(FakeGraphs mode);

/// Makes the fake devices refuse the allocations whose
/// description starts with `what` (a ResourceError as the CUDA device's,
/// "cannot allocate WHAT on cuda:0 (host stand-in): out of device
/// memory"); empty (the default): none.
void setFakeDeviceAllocationFailure(std::string what);

/// Whether the fake devices make greedy choices (Device::argmaxRows, the
/// default) or refuse them, as a device that cannot does (the driver then
/// reads the logits).
void setFakeDeviceArgmax(bool enabled);

/// argmaxRows's device code (txrt_cuda_argmax_rows) run on the host with
/// Argmax.cu's launch (FakeDeviceKernels.cpp); `ids` in host memory.
void emulateArgmaxRows(const float *logits, int64_t rows, int64_t vocab,
                       int64_t rowStride, int64_t emittable,
                       const std::vector<int32_t> &excluded, int32_t *ids);

/// copyRows's device code (txrt_cuda_copy_rows) run on the host, with
/// CopyRows.cu's batching and launches (FakeDeviceKernels.cpp).
void emulateCopyRows(const std::vector<txrt::driver::RowCopy> &copies);

/// updateAverage's device code run on the host (FakeDeviceKernels.cpp).
void emulateUpdateAverage(float *average, const float *params, int64_t count,
                          float decay);

/// `json` (a model's metadata) with "target": "cuda" added, so the driver
/// runs it on the fake device.
std::string onFakeDevice(const char *json);

} // namespace txrt_driver_test

#endif // TXRT_DRIVER_TEST_FAKEDEVICE_H
