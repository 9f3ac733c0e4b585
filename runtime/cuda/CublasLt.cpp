//===- CublasLt.cpp - open libcublasLt.so.13 and look up its functions ----===//
//
// TXRT_CUBLASLT=/path/to/libcublasLt.so.13 overrides the library path search
// (scripts/gpu-check.sh points it at the copy the device machine's PyTorch
// installs).
//
//===----------------------------------------------------------------------===//
#include "CublasLt.h"
#include "CudaContext.h"
#include "DynamicLibrary.h"

#include <cstdlib>
#include <mutex>
#include <string>

using namespace txrt::cuda;

namespace {

/// The major version of cuBLAS this backend was built against.
std::string cublasLtLibraryName() {
  return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
}

} // namespace

const CublasLtApi &txrt::cuda::cublasLt() {
  static std::once_flag once;
  static CublasLtApi api;
  static std::string failure;
  std::call_once(once, [] {
    try {
      const char *path = std::getenv("TXRT_CUBLASLT");
      DynamicLibrary library("cuBLASLt",
                             path && *path ? path : cublasLtLibraryName(),
                             "put it on LD_LIBRARY_PATH or set TXRT_CUBLASLT");
      library.lookup("cublasLtCreate", api.create);
      library.lookup("cublasLtDestroy", api.destroy);
      library.lookup("cublasLtMatmulDescCreate", api.descCreate);
      library.lookup("cublasLtMatmulDescDestroy", api.descDestroy);
      library.lookup("cublasLtMatmulDescSetAttribute", api.descSetAttribute);
      library.lookup("cublasLtMatrixLayoutCreate", api.layoutCreate);
      library.lookup("cublasLtMatrixLayoutDestroy", api.layoutDestroy);
      library.lookup("cublasLtMatmulPreferenceCreate", api.preferenceCreate);
      library.lookup("cublasLtMatmulPreferenceDestroy",
                     api.preferenceDestroy);
      library.lookup("cublasLtMatmulPreferenceSetAttribute",
                     api.preferenceSetAttribute);
      library.lookup("cublasLtMatmulAlgoGetHeuristic", api.algoGetHeuristic);
      library.lookup("cublasLtMatmul", api.matmul);
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
