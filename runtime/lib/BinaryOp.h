//===- BinaryOp.h - one elementwise binary op, CPU and GPU ------*- C++ -*-===//
//
// c = a OP b for a txrt_binary_op, written once for the CPU's broadcast
// loop (kernels/Binary.cpp) and the CUDA broadcast kernel
// (runtime/cuda/kernels/BroadcastKernels.cuh): __host__ __device__ under
// nvcc, a plain inline function in C++. MIN is the default case: the
// callers check the op first.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_BINARYOP_H
#define TXRT_LIB_BINARYOP_H

#include "txrt/txrt.h"

#include <cstdint>

namespace txrt {

#ifdef __CUDACC__
__host__ __device__
#endif
inline float applyBinary(int32_t op, float a, float b) {
  switch (op) {
  case TXRT_BINARY_ADD:
    return a + b;
  case TXRT_BINARY_SUB:
    return a - b;
  case TXRT_BINARY_MUL:
    return a * b;
  case TXRT_BINARY_DIV:
    return a / b;
  case TXRT_BINARY_MAX:
    return a > b ? a : b;
  default:
    return a < b ? a : b;
  }
}

} // namespace txrt

#endif // TXRT_LIB_BINARYOP_H
