//===- CudaContext.h - the CUDA backend's context and error boundary -*- C++ -*-===//
//
// A txrt_cuda_context is one device with one stream, a cuBLASLt handle and
// its workspace. Kernels report failures by throwing CudaError inside the
// library; runCuda turns them into a txrt_status and a message naming the
// call, so no exception crosses the C ABI (txrt_cuda.h).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_CUDACONTEXT_H
#define TXRT_CUDA_CUDACONTEXT_H

#include "kernels/DeviceFault.cuh"
#include "kernels/KernelLaunch.cuh"
#include "kernels/StepState.cuh"
#include "txrt/txrt_cuda.h"

#include <cuda_runtime.h>

#include <map>
#include <vector>
#include <stdexcept>
#include <string>

struct cublasLtContext;
namespace txrt::cuda {
class GradientExchange;
}

struct txrt_cuda_context {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasLtContext *lt = nullptr; ///< cublasLtHandle_t (opaque here)
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  /// Device memory where kernels report bad input they find (an id out of
  /// range): a txrt::cuda::DeviceFault; read and cleared by
  /// txrt_cuda_synchronize.
  struct txrt_cuda_device_fault *fault = nullptr;
  bool allowTf32 = false;
  int64_t trainStep = 0; ///< txrt_cuda_context_set_train_state
  uint64_t trainSeed = 0;
  /// The call's rows within the update's batch
  /// (txrt_cuda_context_set_batch_rows).
  int64_t batchFirstRow = 0;
  int64_t batchRows = 0;
  /// The index of element 0 of an n-element tensor in the whole batch's
  /// dropout stream: batchFirstRow rows of n / batchRows elements (the
  /// CPU's Context::dropoutOffset).
  int64_t dropoutOffset(int64_t n) const {
    return batchRows > 0 && n % batchRows == 0 ? batchFirstRow * (n / batchRows)
                                               : 0;
  }
  std::string lastError;
  /// The spec's constants on the device (txrt_cuda_constant): host address
  /// of the compiled constant -> its device copy, freed with the context.
  std::map<const void *, void *> constants;
  /// The first failure of a generated kernel's load or launch
  /// (GeneratedKernels.cpp); reported and cleared by txrt_cuda_synchronize.
  std::string launchError;
  /// Gradient accumulation and exchange (GradientExchange.h), made by the
  /// first txrt_cuda_context_set_gradient_mode or _join_ranks; NULL: every
  /// txrt_cuda_adam_step updates at once.
  txrt::cuda::GradientExchange *gradients = nullptr;

  /// CUDA graphs (txrt_cuda_capture_begin / _end): whether the stream is
  /// capturing now. Inside a capture, dropout, attention and Adam read the
  /// training step, seed and Adam's step scalars from `stepState` (device
  /// memory, made by the first capture) instead of taking them as kernel
  /// arguments, so a replay computes the step it is replayed for.
  bool capturing = false;
  txrt::cuda::StepState *stepState = nullptr;
  /// The optimizer settings captured steps use: slot i of stepState->adam.
  struct AdamSetting {
    int32_t schedule;
    float lr, dModel, warmup, beta1, beta2;
  };
  std::vector<AdamSetting> adamSettings;
};

namespace txrt::cuda {

/// A failure inside the backend: a status and a message without the call.
struct CudaError : std::runtime_error {
  CudaError(txrt_status status, const std::string &message)
      : std::runtime_error(message), status(status) {}
  txrt_status status;
};

/// Throws TXRT_ERROR_INVALID_ARGUMENT with `message` unless `condition`.
inline void require(bool condition, const char *message) {
  if (!condition)
    throw CudaError(TXRT_ERROR_INVALID_ARGUMENT,
                    std::string("invalid argument: ") + message);
}

/// Throws TXRT_ERROR_BACKEND naming `what` unless `error` is cudaSuccess.
void check(cudaError_t error, const char *what);

/// Throws for the last launch error (after a <<<>>> launch).
inline void checkLaunch(const char *kernel) {
  check(cudaGetLastError(), kernel);
}

/// Clears the thread's current context (GeneratedKernels.cpp) if it is ctx.
void forgetCurrentContext(txrt_cuda_context *ctx);

/// The message of failures with no context (probe, create).
std::string &globalError();

/// Runs body(ctx) and turns a CudaError or any exception into a status and
/// ctx->lastError = "name: message".
template <typename Body>
txrt_status runCuda(txrt_cuda_context *ctx, const char *name, Body &&body) {
  std::string &error = ctx ? ctx->lastError : globalError();
  try {
    if (!ctx)
      throw CudaError(TXRT_ERROR_INVALID_ARGUMENT,
                      "invalid argument: the context is NULL");
    body(*ctx);
    error.clear();
    return TXRT_OK;
  } catch (const CudaError &e) {
    error = std::string(name) + ": " + e.what();
    return e.status;
  } catch (const std::bad_alloc &) {
    error = std::string(name) + ": out of host memory";
    return TXRT_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    error = std::string(name) + ": internal error: " + e.what();
    return TXRT_ERROR_INTERNAL;
  }
}

/// The device training state a call's Philox key comes from: nullptr
/// outside a capture (the host derives the key from seed and step); inside
/// one, the context's stepState->train, after checking that seed and step
/// are the context's training state (a captured step is replayed with each
/// step's state, so it may only use that one).
const DeviceTrainState *capturedTrainState(txrt_cuda_context &c,
                                           uint64_t seed, int64_t step);

/// The StepState slot of Adam's scalars for this optimizer setting inside a
/// capture (registered at its first use; throws past
/// kMaxCapturedAdamSettings); nullptr outside one.
const AdamStepScalars *capturedAdamScalars(txrt_cuda_context &c,
                                           int32_t schedule, float lr,
                                           float dModel, float warmup,
                                           float beta1, float beta2);

/// Queues the copy of the host's view of stepState (the training step and
/// seed, each registered Adam setting's scalars at that step) to the
/// device on c's stream; nothing when no capture made stepState. Adam.cu.
void uploadStepState(txrt_cuda_context &c);

} // namespace txrt::cuda

#endif // TXRT_CUDA_CUDACONTEXT_H
