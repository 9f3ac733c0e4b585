//===- GeneratedKernels.cpp - load and launch txc's generated glue kernels -===//
//
// `txc --target=cuda` lowers each glue kernel's gpu.launch_func with MLIR's
// gpu-to-llvm conversion, whose LLVM IR calls the `mgpu*` functions below
// with the kernel image txc embedded (PTX for sm_80, JIT-compiled by the
// driver for the device at hand). MLIR's own CUDA runtime wrappers are not
// in Debian; these are ours, on the CUDA runtime's library API
// (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel: the runtime's
// front of cuLibraryLoadData / cuLaunchKernel in the driver that cudart
// loads itself), so they share the primary context and the stream of the
// backend's library calls.
//
// The generated code names no stream: mgpuStreamCreate hands out the stream
// of the current context (txrt_cuda_context_make_current; the last context
// created on the thread), so glue kernels are ordered with the library calls
// around them, and mgpuStreamSynchronize / _Destroy leave it alone. A failed
// load or launch cannot be returned through these void functions: it is
// kept on the context and reported by the next txrt_cuda_synchronize.
// Modules stay loaded until the process ends (one per kernel image).
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"

#include <map>
#include <mutex>
#include <string>

namespace {

thread_local txrt_cuda_context *currentContext = nullptr;

std::mutex &libraryMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Records the first launch failure on the current context.
void recordLaunchError(const std::string &message) {
  if (currentContext && currentContext->launchError.empty())
    currentContext->launchError = message;
  else if (!currentContext)
    txrt::cuda::globalError() = message;
}

cudaLibrary_t loadImage(const void *image) {
  std::lock_guard<std::mutex> lock(libraryMutex());
  static std::map<const void *, cudaLibrary_t> loaded;
  auto found = loaded.find(image);
  if (found != loaded.end())
    return found->second;
  cudaLibrary_t library = nullptr;
  cudaError_t error = cudaLibraryLoadData(&library, image, nullptr, nullptr, 0,
                                          nullptr, nullptr, 0);
  if (error != cudaSuccess) {
    recordLaunchError(std::string("generated kernels: cudaLibraryLoadData: ") +
                      cudaGetErrorString(error));
    return nullptr;
  }
  loaded[image] = library;
  return library;
}

} // namespace

void txrt::cuda::forgetCurrentContext(txrt_cuda_context *ctx) {
  if (currentContext == ctx)
    currentContext = nullptr;
}

extern "C" {

void txrt_cuda_context_make_current(txrt_cuda_context *ctx) {
  currentContext = ctx;
  if (ctx)
    cudaSetDevice(ctx->device);
}

void *txrt_cuda_constant(txrt_cuda_context *ctx, const void *host,
                         int64_t bytes) {
  if (!ctx || !host || bytes <= 0) {
    const std::string message =
        "txrt_cuda_constant: invalid argument: no context, no constant or no "
        "bytes";
    if (!ctx)
      txrt::cuda::globalError() = message;
    else if (ctx->launchError.empty())
      ctx->launchError = message;
    return nullptr;
  }
  auto found = ctx->constants.find(host);
  if (found != ctx->constants.end())
    return found->second;
  void *device = nullptr;
  cudaError_t error = cudaMalloc(&device, size_t(bytes));
  if (error == cudaSuccess)
    error = cudaMemcpyAsync(device, host, size_t(bytes),
                            cudaMemcpyHostToDevice, ctx->stream);
  if (error != cudaSuccess) {
    // Cleared, so that the next kernel's launch check does not report it
    // as its own (the first GPU run saw a glue kernel's failed launch
    // reported by the attention kernel after it).
    cudaGetLastError();
    if (device)
      cudaFree(device);
    std::string message = "txrt_cuda_constant: a constant of the spec (" +
                          std::to_string(bytes) + " bytes) to the device: " +
                          cudaGetErrorString(error);
    if (ctx->launchError.empty())
      ctx->launchError = message;
    return nullptr;
  }
  ctx->constants[host] = device;
  return device;
}

void *mgpuModuleLoad(void *data, size_t /*size*/) { return loadImage(data); }

void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return loadImage(data);
}

void mgpuModuleUnload(void * /*module*/) {}

void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module)
    return nullptr;
  cudaKernel_t kernel = nullptr;
  cudaError_t error = cudaLibraryGetKernel(
      &kernel, static_cast<cudaLibrary_t>(module), name);
  if (error != cudaSuccess) {
    recordLaunchError(std::string("generated kernel ") + name +
                      ": cudaLibraryGetKernel: " + cudaGetErrorString(error));
    return nullptr;
  }
  return kernel;
}

void *mgpuStreamCreate() {
  return currentContext ? currentContext->stream : nullptr;
}

void mgpuStreamDestroy(void * /*stream*/) {}

void mgpuStreamSynchronize(void * /*stream*/) {}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void ** /*extra*/, size_t /*count*/) {
  if (!function)
    return; // the load failed and said so
  if (!currentContext) {
    recordLaunchError("generated kernels: no current CUDA context "
                      "(txrt_cuda_context_make_current)");
    return;
  }
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return; // an empty tensor: nothing to do
  cudaError_t error = cudaLaunchKernel(
      function, dim3(unsigned(gridX), unsigned(gridY), unsigned(gridZ)),
      dim3(unsigned(blockX), unsigned(blockY), unsigned(blockZ)), params,
      size_t(sharedBytes), static_cast<cudaStream_t>(stream));
  if (error != cudaSuccess) {
    cudaGetLastError(); // as in txrt_cuda_constant: not the next kernel's
    const char *name = nullptr;
    if (cudaFuncGetName(&name, function) != cudaSuccess || !name) {
      cudaGetLastError();
      name = "?";
    }
    recordLaunchError(
        std::string("generated kernel ") + name + ": launch of " +
        std::to_string(gridX) + "x" + std::to_string(gridY) + "x" +
        std::to_string(gridZ) + " blocks of " + std::to_string(blockX) + "x" +
        std::to_string(blockY) + "x" + std::to_string(blockZ) +
        " threads: " + cudaGetErrorString(error));
  }
}

} // extern "C"
