//===- Device.h - a device other than the CPU for entries -------*- C++ -*-===//
//
// The driver's view of an accelerator (a --target=cuda executable's GPU):
// its context, memory and copies (Device), its side of gradient
// accumulation and data parallelism (DeviceGradients), and what a CUDA
// executable links in to open one (CudaSupport). The CUDA implementation is
// runtime/cuda/DriverDevice.cpp; the driver's unit tests use a stand-in on
// host memory (test/unit/driver/core/FakeDevice.h). Which of the host's and
// the device's copies of the parameter arena is current is not kept here
// but in ParameterHome.h, the one place that copies it (and for train
// --ema's average, in loop/Ema.h's WeightAverage).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_DEVICE_H
#define TXRT_DRIVER_DEVICE_H

#include "core/ModelAbi.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace txrt::driver {

/// One call of a compiled entry (ModelAbi.h's txc_entry_fn) with its
/// arguments: what a captured graph replays.
struct EntryCall {
  txc_entry_fn function;
  void *ctx, *params, *arena;
  const int64_t *dims;
  void *const *inputs;
  void *const *outputs;
  int32_t run() const {
    return function(ctx, params, arena, dims, inputs, outputs);
  }
};

/// A strided copy: `height` rows of `width` bytes, row r from src + r *
/// srcPitch to dst + r * dstPitch.
struct RowCopy {
  void *dst;
  const void *src;
  uint64_t dstPitch, srcPitch, width, height;
};

/// A device's side of gradient accumulation and data parallelism
/// (distributed/DataParallel.h): txrt_context_set_gradient_mode and its kin
/// for the device's context, and the ranks joined over the device's own
/// collective library (NCCL). Failures throw KernelError.
class DeviceGradients {
public:
  virtual ~DeviceGradients() = default;
  /// Joins rank `rank` of `ranks`; `broadcast` gives every rank the bytes
  /// rank 0 passes it (the launcher's channel, MPI_Bcast).
  virtual void
  joinRanks(int rank, int ranks,
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
  /// Page-locked host memory for staging copies (cudaHostAlloc): copies
  /// from and to it run at the bus's speed and need no driver staging.
  /// nullptr when the device has none to give (the caller copies from
  /// ordinary memory instead).
  virtual void *allocatePinned(uint64_t /*bytes*/) { return nullptr; }
  virtual void releasePinned(void * /*ptr*/) {}
  /// Copies on the device's stream; toDevice may return before the copy
  /// is done when `src` is pinned (the next finish() waits for it), toHost
  /// returns with `dst` written.
  virtual void toDevice(void *dst, const void *src, uint64_t bytes) = 0;
  virtual void toHost(void *dst, const void *src, uint64_t bytes) = 0;
  /// Within device memory, on the device's stream, every copy of
  /// `copies` (RowCopy; no destination overlaps a source): what
  /// ResidentTensor moves KV caches' rows with, a model's caches in one
  /// call (txrt_cuda_copy_rows: one launch for up to 32 copies).
  virtual void copyRows(const std::vector<RowCopy> &copies) = 0;
  /// Zeroes `height` rows of `width` bytes at dst + r * pitch, on the
  /// device's stream (cudaMemset2DAsync).
  virtual void zeroRows(void *dst, uint64_t pitch, uint64_t width,
                        uint64_t height) = 0;
  /// Greedy decoding's choice where the logits are: ids[r] (host memory)
  /// for r < rows, the row at logits + r * rowStride floats (`vocab` of
  /// them, device memory), chosen as AllowedIds::choose chooses
  /// (decoding/Decoding.h: ids at or past `emittable` when 0 < emittable <
  /// vocab and the `excluded` ones never, then the first largest), so only
  /// the ids come back (txrt_cuda_argmax_rows); an id whose logit is not
  /// finite comes back as -1 - id (the caller refuses the row). False
  /// when the device cannot (the caller reads the logits instead);
  /// KernelError when it fails.
  virtual bool argmaxRows(const float * /*logits*/, int64_t /*rows*/,
                          int64_t /*vocab*/, int64_t /*rowStride*/,
                          int64_t /*emittable*/,
                          const std::vector<int32_t> & /*excluded*/,
                          int32_t * /*ids*/) {
    return false;
  }
  virtual void setTrainState(int64_t step, uint64_t seed) = 0;
  /// --allow-tf32: matrix products may round their inputs to TF32 on the
  /// tensor cores (PyTorch's torch.backends.cuda.matmul.allow_tf32);
  /// KernelError when the device refuses.
  virtual void allowTf32() = 0;
  /// train --ema's update on the device's stream, both in device memory:
  ///   average[i] = decay * average[i] + (1 - decay) * params[i]
  /// for i < count, bit for bit as the host's updateAverage (loop/Ema.h)
  /// computes it. KernelError when it cannot be queued; a failure while it
  /// runs is the next finish()'s.
  virtual void updateAverage(float *average, const float *params, int64_t count,
                             float decay) = 0;
  /// CUDA graphs (docs/cuda.md "CUDA graphs"): runs `call` (an entry call
  /// whose buffers and dims stay where they are while the graph lives),
  /// which queues its work, under stream capture and returns the
  /// replayable graph, or nullptr with `why` set when the step cannot be
  /// captured. Either way nothing of the step has run: the caller launches
  /// the graph, or calls the entry directly. Devices without graphs return
  /// nullptr.
  virtual void *captureGraph(const EntryCall & /*call*/, std::string &why) {
    why = "this device has no graphs";
    return nullptr;
  }
  /// Queues one replay and returns true; false (nothing queued) when the
  /// device's state now is not one the graph may replay in (gradient
  /// accumulation, data-parallel ranks); KernelError when it fails.
  virtual bool launchGraph(void * /*graph*/) { return false; }
  virtual void releaseGraph(void * /*graph*/) {}
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

} // namespace txrt::driver

#endif // TXRT_DRIVER_DEVICE_H
