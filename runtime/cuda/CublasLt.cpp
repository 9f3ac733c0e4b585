//===- CublasLt.cpp - open libcublasLt.so.13 and look up its functions ----===//
//
// TXRT_CUBLASLT=/path/to/libcublasLt.so.13 overrides the library path search
// (scripts/gpu-check.sh points it at the copy the device machine's PyTorch
// installs).
//
//===----------------------------------------------------------------------===//
#include "CublasLt.h"
#include "CudaContext.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

using namespace txrt::cuda;

namespace {

/// The major version of cuBLAS this backend was built against.
std::string libraryName() {
  return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
}

template <typename Fn>
void lookup(void *library, const char *symbol, Fn &slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!slot)
    throw CudaError(TXRT_ERROR_BACKEND,
                    "cuBLASLt: " + libraryName() + " has no " + symbol);
}

} // namespace

const CublasLtApi &txrt::cuda::cublasLt() {
  static std::once_flag once;
  static CublasLtApi api;
  static std::string failure;
  std::call_once(once, [] {
    const char *path = std::getenv("TXRT_CUBLASLT");
    std::string name = path && *path ? path : libraryName();
    void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *reason = dlerror();
      failure = "cannot load cuBLASLt (" + name + "): " +
                (reason ? reason : "not found") +
                "; put it on LD_LIBRARY_PATH or set TXRT_CUBLASLT";
      return;
    }
    try {
      lookup(library, "cublasLtCreate", api.create);
      lookup(library, "cublasLtDestroy", api.destroy);
      lookup(library, "cublasLtMatmulDescCreate", api.descCreate);
      lookup(library, "cublasLtMatmulDescDestroy", api.descDestroy);
      lookup(library, "cublasLtMatmulDescSetAttribute", api.descSetAttribute);
      lookup(library, "cublasLtMatrixLayoutCreate", api.layoutCreate);
      lookup(library, "cublasLtMatrixLayoutDestroy", api.layoutDestroy);
      lookup(library, "cublasLtMatmulPreferenceCreate", api.preferenceCreate);
      lookup(library, "cublasLtMatmulPreferenceDestroy",
             api.preferenceDestroy);
      lookup(library, "cublasLtMatmulPreferenceSetAttribute",
             api.preferenceSetAttribute);
      lookup(library, "cublasLtMatmulAlgoGetHeuristic", api.algoGetHeuristic);
      lookup(library, "cublasLtMatmul", api.matmul);
    } catch (const CudaError &e) {
      failure = e.what();
    }
  });
  if (!failure.empty())
    throw CudaError(TXRT_ERROR_BACKEND, failure);
  return api;
}

void txrt::cuda::checkCublas(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  throw CudaError(status == CUBLAS_STATUS_ALLOC_FAILED
                      ? TXRT_ERROR_OUT_OF_MEMORY
                      : TXRT_ERROR_BACKEND,
                  std::string(what) + ": cuBLAS status " +
                      std::to_string(int(status)));
}

cublasLtContext *txrt::cuda::createCublasLt() {
  cublasLtHandle_t handle = nullptr;
  checkCublas(cublasLt().create(&handle), "cublasLtCreate");
  return reinterpret_cast<cublasLtContext *>(handle);
}

void txrt::cuda::destroyCublasLt(cublasLtContext *handle) {
  cublasLt().destroy(reinterpret_cast<cublasLtHandle_t>(handle));
}
