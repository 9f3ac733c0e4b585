//===- CublasLt.h - cuBLASLt loaded at run time -----------------*- C++ -*-===//
//
// cuBLASLt (libcublasLt.so.13) is opened with dlopen when the first context
// is created, so programs and tests built with the CUDA backend start where
// it is missing and say so. The functions the backend calls are looked up
// once into a table of pointers typed from cublasLt.h.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_CUBLASLT_H
#define TXRT_CUDA_CUBLASLT_H

#include <cublasLt.h>

struct cublasLtContext;

namespace txrt::cuda {

/// The cuBLASLt entry points the backend uses.
struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtMatmulDescCreate) descCreate;
  decltype(&cublasLtMatmulDescDestroy) descDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) descSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) layoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) layoutDestroy;
  decltype(&cublasLtMatmulPreferenceCreate) preferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) preferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preferenceSetAttribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algoGetHeuristic;
  decltype(&cublasLtMatmul) matmul;
};

/// The loaded API; throws CudaError naming the library or symbol missing.
const CublasLtApi &cublasLt();

/// Throws CudaError naming `what` unless `status` is CUBLAS_STATUS_SUCCESS.
void checkCublas(cublasStatus_t status, const char *what);

/// A cuBLASLt handle (cublasLtHandle_t) for a context.
cublasLtContext *createCublasLt();
void destroyCublasLt(cublasLtContext *handle);

} // namespace txrt::cuda

#endif // TXRT_CUDA_CUBLASLT_H
