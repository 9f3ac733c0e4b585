//===- CudaContext.cpp - probe the driver, create contexts, move buffers ---===//
//
// The CUDA driver is loaded with dlopen("libcuda.so.1") before anything else
// touches CUDA, so a program built with this backend starts where there is
// no NVIDIA driver and txrt_cuda_probe names what is missing (the library,
// a driver too old for this build's CUDA runtime, or a device). The CUDA
// runtime is linked statically (it loads the same driver library itself).
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "CublasLt.h"
#include "GradientExchange.h"
#include "lib/EntryChecks.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

using namespace txrt::cuda;

namespace {

/// The workspace cuBLASLt may use per GEMM (its recommended size on Hopper).
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

std::string formatBytes(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / (1 << 20));
  return text;
}

/// dlopen's libcuda.so.1 and asks it for the driver version and the device
/// count; returns "" or the reason no device is usable.
std::string probeDriver(int *outDevices) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    const char *reason = dlerror();
    return std::string("no CUDA driver: cannot load libcuda.so.1 (") +
           (reason ? reason : "not found") +
           "); install the NVIDIA driver or run on a machine with one";
  }
  using InitFn = int (*)(unsigned);
  using VersionFn = int (*)(int *);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(dlsym(library, "cuInit"));
  auto version = reinterpret_cast<VersionFn>(dlsym(library, "cuDriverGetVersion"));
  auto count = reinterpret_cast<CountFn>(dlsym(library, "cuDeviceGetCount"));
  if (!init || !version || !count)
    return "libcuda.so.1 lacks cuInit / cuDriverGetVersion / "
           "cuDeviceGetCount: not an NVIDIA driver library";
  int driverVersion = 0;
  if (version(&driverVersion) != 0)
    return "cuDriverGetVersion failed";
  if (driverVersion < CUDART_VERSION)
    return "the NVIDIA driver supports CUDA " +
           std::to_string(driverVersion / 1000) + "." +
           std::to_string(driverVersion % 1000 / 10) +
           ", this program needs CUDA " + std::to_string(CUDART_VERSION / 1000) +
           "." + std::to_string(CUDART_VERSION % 1000 / 10) +
           " or newer: update the driver";
  int status = init(0);
  if (status == 100) // CUDA_ERROR_NO_DEVICE
    return "no CUDA device: the driver (libcuda.so.1) is loaded but finds "
           "no GPU";
  if (status != 0)
    return "no CUDA device: cuInit failed with CUresult " +
           std::to_string(status);
  int devices = 0;
  if (count(&devices) != 0 || devices == 0)
    return "no CUDA device: the driver reports none";
  if (outDevices)
    *outDevices = devices;
  return "";
}

} // namespace

const DeviceTrainState *txrt::cuda::capturedTrainState(txrt_cuda_context &c,
                                                       uint64_t seed,
                                                       int64_t step) {
  if (!c.capturing)
    return nullptr;
  if (seed != c.trainSeed || step != c.trainStep)
    throw CudaError(TXRT_ERROR_BACKEND,
                    "cannot be captured in a CUDA graph: its seed and step "
                    "are not the context's training state, which a replay "
                    "reads");
  return &c.stepState->train;
}

std::string &txrt::cuda::globalError() {
  static thread_local std::string error;
  return error;
}

void txrt::cuda::check(cudaError_t error, const char *what) {
  if (error == cudaSuccess)
    return;
  txrt_status status = error == cudaErrorMemoryAllocation
                           ? TXRT_ERROR_OUT_OF_MEMORY
                           : TXRT_ERROR_BACKEND;
  throw CudaError(status, std::string(what) + ": " +
                              cudaGetErrorName(error) + " (" +
                              cudaGetErrorString(error) + ")");
}

extern "C" {

txrt_status txrt_cuda_probe(int32_t *out_devices) {
  int devices = 0;
  std::string reason = probeDriver(&devices);
  if (out_devices)
    *out_devices = devices;
  if (!reason.empty()) {
    globalError() = "txrt_cuda_probe: " + reason;
    return TXRT_ERROR_BACKEND;
  }
  globalError().clear();
  return TXRT_OK;
}

txrt_status txrt_cuda_context_create(int32_t device,
                                     txrt_cuda_context **out_ctx) {
  if (!out_ctx) {
    globalError() = "txrt_cuda_context_create: invalid argument: out_ctx is NULL";
    return TXRT_ERROR_INVALID_ARGUMENT;
  }
  *out_ctx = nullptr;
  int devices = 0;
  std::string reason = probeDriver(&devices);
  if (!reason.empty()) {
    globalError() = "txrt_cuda_context_create: " + reason;
    return TXRT_ERROR_BACKEND;
  }
  if (device < 0 || device >= devices) {
    globalError() = "txrt_cuda_context_create: invalid argument: no CUDA "
                    "device " + std::to_string(device) + " (there are " +
                    std::to_string(devices) + ")";
    return TXRT_ERROR_INVALID_ARGUMENT;
  }
  auto *ctx = new txrt_cuda_context;
  ctx->device = device;
  txrt_status status = runCuda(ctx, "txrt_cuda_context_create", [&](auto &c) {
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    c.lt = createCublasLt();
    check(cudaMalloc(&c.workspace, kWorkspaceBytes),
          "cudaMalloc(cuBLASLt workspace)");
    c.workspaceBytes = kWorkspaceBytes;
    check(cudaMalloc(&c.fault, sizeof(txrt_cuda_device_fault)),
          "cudaMalloc(fault)");
    check(cudaMemsetAsync(c.fault, 0, sizeof(txrt_cuda_device_fault),
                          c.stream),
          "cudaMemsetAsync(fault)");
  });
  if (status != TXRT_OK) {
    globalError() = ctx->lastError;
    txrt_cuda_context_destroy(ctx);
    return status;
  }
  *out_ctx = ctx;
  txrt_cuda_context_make_current(ctx);
  return TXRT_OK;
}

void txrt_cuda_context_destroy(txrt_cuda_context *ctx) {
  txrt::EntryClaims::forget(ctx);
  if (!ctx)
    return;
  forgetCurrentContext(ctx);
  if (ctx->stream)
    cudaStreamSynchronize(ctx->stream);
  delete ctx->gradients;
  for (auto &[host, device] : ctx->constants)
    cudaFree(device);
  if (ctx->lt)
    destroyCublasLt(ctx->lt);
  if (ctx->workspace)
    cudaFree(ctx->workspace);
  if (ctx->fault)
    cudaFree(ctx->fault);
  if (ctx->stepState)
    cudaFree(ctx->stepState);
  if (ctx->stream)
    cudaStreamDestroy(ctx->stream);
  delete ctx;
}

const char *txrt_cuda_last_error(const txrt_cuda_context *ctx) {
  return ctx ? ctx->lastError.c_str() : globalError().c_str();
}

txrt_status txrt_cuda_context_set_option(txrt_cuda_context *ctx,
                                         int32_t option, int64_t value) {
  return runCuda(ctx, "txrt_cuda_context_set_option", [&](auto &c) {
    require(option == TXRT_CUDA_OPTION_ALLOW_TF32,
            "unknown option (TXRT_CUDA_OPTION_ALLOW_TF32 is the only one)");
    require(value == 0 || value == 1, "TXRT_CUDA_OPTION_ALLOW_TF32 is 0 or 1");
    c.allowTf32 = value == 1;
  });
}

void txrt_cuda_context_set_train_state(txrt_cuda_context *ctx, int64_t step,
                                       uint64_t seed) {
  if (!ctx)
    return;
  ctx->trainStep = step;
  ctx->trainSeed = seed;
  // Captured steps read it on the device: queue this step's copy before
  // the replay (a failure is the next txrt_cuda_synchronize's).
  if (ctx->stepState && !ctx->capturing) {
    try {
      uploadStepState(*ctx);
    } catch (const CudaError &e) {
      if (ctx->launchError.empty())
        ctx->launchError = std::string("txrt_cuda_context_set_train_state: ") +
                           e.what();
    }
  }
}

void txrt_cuda_context_set_batch_rows(txrt_cuda_context *ctx,
                                      int64_t first_row, int64_t rows) {
  if (ctx && first_row >= 0 && rows >= 0) {
    ctx->batchFirstRow = first_row;
    ctx->batchRows = rows;
  }
}

txrt_status txrt_cuda_train_state(txrt_cuda_context *ctx, int64_t *out_step,
                                  int64_t *out_seed) {
  return runCuda(ctx, "txrt_cuda_train_state", [&](auto &c) {
    require(out_step && out_seed, "out_step and out_seed must not be NULL");
    *out_step = c.trainStep;
    *out_seed = int64_t(c.trainSeed);
  });
}

txrt_status txrt_cuda_check_entry(
    txrt_cuda_context *ctx, const int64_t *dims, const int64_t *dim_index,
    const int64_t *dim_bound, int64_t num_checked, const void *arena,
    int64_t arena_bytes, const void *const *inputs, int64_t num_inputs,
    const void *const *outputs, int64_t num_outputs, const void *params,
    int64_t params_bytes) {
  return runCuda(ctx, "txrt_cuda_check_entry", [&](auto &) {
    std::string problem = txrt::entryArgumentProblem(
        dims, dim_index, dim_bound, num_checked, arena, arena_bytes, inputs,
        num_inputs, outputs, num_outputs, params, params_bytes);
    require(problem.empty(), problem.c_str());
    problem = txrt::EntryClaims::claim(ctx, arena_bytes > 0 ? arena : nullptr);
    require(problem.empty(), problem.c_str());
  });
}

txrt_status txrt_cuda_entry_done(txrt_cuda_context *ctx, const void *arena) {
  txrt::EntryClaims::release(ctx, arena);
  return TXRT_OK;
}

txrt_status txrt_cuda_check_cache_rows(txrt_cuda_context *ctx, int64_t input,
                                       int64_t written, int64_t held) {
  return runCuda(ctx, "txrt_cuda_check_cache_rows", [&](auto &) {
    std::string problem = txrt::cacheRowsProblem(input, written, held);
    require(problem.empty(), problem.c_str());
  });
}

txrt_status txrt_cuda_check_dim_min(txrt_cuda_context *ctx, int64_t dim_index,
                                    int64_t value, int64_t minimum) {
  return runCuda(ctx, "txrt_cuda_check_dim_min", [&](auto &) {
    std::string problem = txrt::dimMinProblem(dim_index, value, minimum);
    require(problem.empty(), problem.c_str());
  });
}

txrt_status txrt_cuda_device_info(txrt_cuda_context *ctx, char *out_name,
                                  size_t name_size, uint64_t *out_bytes,
                                  int32_t *out_major, int32_t *out_minor) {
  return runCuda(ctx, "txrt_cuda_device_info", [&](auto &c) {
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, c.device), "cudaGetDeviceProperties");
    if (out_name && name_size) {
      std::strncpy(out_name, prop.name, name_size - 1);
      out_name[name_size - 1] = '\0';
    }
    if (out_bytes)
      *out_bytes = prop.totalGlobalMem;
    if (out_major)
      *out_major = prop.major;
    if (out_minor)
      *out_minor = prop.minor;
  });
}

txrt_status txrt_cuda_malloc(txrt_cuda_context *ctx, size_t bytes,
                             void **out_ptr) {
  return runCuda(ctx, "txrt_cuda_malloc", [&](auto &c) {
    require(out_ptr, "out_ptr is NULL");
    *out_ptr = nullptr;
    if (bytes == 0)
      return;
    cudaError_t error = cudaMalloc(out_ptr, bytes);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      throw CudaError(TXRT_ERROR_OUT_OF_MEMORY,
                      "out of device memory: " + formatBytes(bytes) +
                          " asked, " + formatBytes(free) + " free of " +
                          formatBytes(total) + " on CUDA device " +
                          std::to_string(c.device));
    }
    check(error, "cudaMalloc");
  });
}

txrt_status txrt_cuda_free(txrt_cuda_context *ctx, void *ptr) {
  return runCuda(ctx, "txrt_cuda_free",
                 [&](auto &) { check(cudaFree(ptr), "cudaFree"); });
}

txrt_status txrt_cuda_copy_to_device(txrt_cuda_context *ctx, void *dst,
                                     const void *src, size_t bytes) {
  return runCuda(ctx, "txrt_cuda_copy_to_device", [&](auto &c) {
    if (bytes == 0)
      return;
    require(dst && src, "dst and src must not be NULL");
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c.stream),
          "cudaMemcpyAsync");
  });
}

txrt_status txrt_cuda_copy_to_host(txrt_cuda_context *ctx, void *dst,
                                   const void *src, size_t bytes) {
  return runCuda(ctx, "txrt_cuda_copy_to_host", [&](auto &c) {
    if (bytes == 0)
      return;
    require(dst && src, "dst and src must not be NULL");
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c.stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
  });
}

txrt_status txrt_cuda_zero_rows(txrt_cuda_context *ctx, void *dst,
                                size_t pitch, size_t width, size_t height) {
  return runCuda(ctx, "txrt_cuda_zero_rows", [&](auto &c) {
    if (width == 0 || height == 0)
      return;
    require(dst, "dst must not be NULL");
    require(pitch >= width, "the pitch must be at least the width");
    check(cudaMemset2DAsync(dst, pitch, 0, width, height, c.stream),
          "cudaMemset2DAsync");
  });
}

txrt_status txrt_cuda_synchronize(txrt_cuda_context *ctx) {
  return runCuda(ctx, "txrt_cuda_synchronize", [&](auto &c) {
    check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
    if (!c.launchError.empty()) {
      std::string message = c.launchError;
      c.launchError.clear();
      throw CudaError(TXRT_ERROR_BACKEND, message);
    }
    txrt_cuda_device_fault fault;
    check(cudaMemcpy(&fault, c.fault, sizeof(fault), cudaMemcpyDeviceToHost),
          "cudaMemcpy(fault)");
    if (fault.kind == kNoFault)
      return;
    check(cudaMemset(c.fault, 0, sizeof(fault)), "cudaMemset(fault)");
    std::string where =
        fault.kind == kEmbeddingIdOutOfRange ? "txrt_cuda_embedding_fwd / _bwd: id "
        : fault.kind == kGatherIndexOutOfRange
            ? "txrt_cuda_gather / _bwd: index "
            : "txrt_cuda_cross_entropy_fwd / _bwd: target ";
    std::string range = fault.kind == kGatherIndexOutOfRange
                            ? "[-" + std::to_string(fault.bound) + ", "
                            : "[0, ";
    throw CudaError(TXRT_ERROR_INVALID_ARGUMENT,
                    "invalid argument: " + where +
                        std::to_string(fault.value) + " at index " +
                        std::to_string(fault.index) + " is outside " + range +
                        std::to_string(fault.bound) + ")");
  });
}

} // extern "C"

//===----------------------------------------------------------------------===//
// CUDA graphs
//===----------------------------------------------------------------------===//

struct txrt_cuda_graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

namespace {

/// Why the context's state now is one a captured step cannot be replayed
/// in (or captured in); "" when it can. The gradient exchange decides on
/// the host when updates run and what they sum, and a piece of the batch
/// (set_batch_rows) fixes the dropout offsets of its calls.
std::string notReplayable(const txrt_cuda_context &c) {
  if (c.gradients && (c.gradients->mode != TXRT_GRADIENTS_UPDATE ||
                      c.gradients->joined()))
    return "a step with gradient accumulation or data-parallel ranks is not "
           "captured";
  if (c.batchRows != 0)
    return "a step over a piece of the batch "
           "(txrt_cuda_context_set_batch_rows) is not captured";
  return "";
}

} // namespace

extern "C" {

txrt_status txrt_cuda_capture_begin(txrt_cuda_context *ctx) {
  return runCuda(ctx, "txrt_cuda_capture_begin", [&](auto &c) {
    require(!c.capturing, "the stream is capturing already");
    const std::string why = notReplayable(c);
    if (!why.empty())
      throw CudaError(TXRT_ERROR_BACKEND, why);
    if (!c.stepState)
      check(cudaMalloc(&c.stepState, sizeof(StepState)),
            "cudaMalloc(step state)");
    uploadStepState(c);
    check(cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    c.capturing = true;
  });
}

txrt_status txrt_cuda_capture_end(txrt_cuda_context *ctx,
                                  txrt_cuda_graph **out_graph) {
  return runCuda(ctx, "txrt_cuda_capture_end", [&](auto &c) {
    require(out_graph, "out_graph is NULL");
    *out_graph = nullptr;
    c.capturing = false;
    auto graph = std::make_unique<txrt_cuda_graph>();
    cudaError_t ended = cudaStreamEndCapture(c.stream, &graph->graph);
    if (ended != cudaSuccess) {
      // A call inside was refused (its launch error is the capture's, not
      // the next synchronize's: nothing of the step ran).
      c.launchError.clear();
      cudaGetLastError();
      check(ended, "cudaStreamEndCapture");
    }
    cudaError_t error =
        cudaGraphInstantiate(&graph->exec, graph->graph, 0);
    if (error != cudaSuccess) {
      cudaGraphDestroy(graph->graph);
      check(error, "cudaGraphInstantiate");
    }
    // Settings the capture registered get their scalars before the replay.
    uploadStepState(c);
    *out_graph = graph.release();
  });
}

txrt_status txrt_cuda_graph_launch(txrt_cuda_context *ctx,
                                   txrt_cuda_graph *graph) {
  return runCuda(ctx, "txrt_cuda_graph_launch", [&](auto &c) {
    require(graph, "graph is NULL");
    require(!c.capturing, "the stream is capturing");
    const std::string why = notReplayable(c);
    if (!why.empty())
      throw CudaError(TXRT_ERROR_INVALID_ARGUMENT, why);
    check(cudaGraphLaunch(graph->exec, c.stream), "cudaGraphLaunch");
  });
}

int32_t txrt_cuda_graph_replayable(const txrt_cuda_context *ctx) {
  return ctx && !ctx->capturing && notReplayable(*ctx).empty() ? 1 : 0;
}

void txrt_cuda_graph_destroy(txrt_cuda_graph *graph) {
  if (!graph)
    return;
  cudaGraphExecDestroy(graph->exec);
  cudaGraphDestroy(graph->graph);
  delete graph;
}

} // extern "C"
