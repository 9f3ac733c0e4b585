//===- CudaLowering.h - entries for the CUDA target ----------------*- C++ -*-===//
//
// What `txc --target=cuda` does between tx-lower-entries and the LLVM
// dialect (docs/cuda.md): the runtime calls become txrt_cuda_* calls, the
// glue becomes GPU kernels serialized to PTX and embedded in the module, and
// the host launches them through the mgpu* functions of runtime/cuda.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_GPU_CUDALOWERING_H
#define TXC_GPU_CUDALOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::tx {

/// The architecture of the embedded PTX: the driver JIT-compiles it for the
/// device it runs on (sm_80 and newer: A100, H100, H200).
constexpr const char *kCudaPtxChip = "sm_80";

/// Checks the fused ops against what the CUDA kernels take (CudaLimits.cpp):
/// an error at the op for a shape no call can run (a rope over more than 512
/// dimensions of a head), a warning for one that fails past a length the
/// dims allow (attention over heads wider than 128 and many keys).
LogicalResult checkCudaLimits(ModuleOp module);

/// The host side of lowerEntriesForCuda, what `txc --emit=gpu` prints:
/// runtime calls renamed, host scalars by value, constants' addresses those
/// of their device copies (txrt_cuda_constant), copies as kernels, the glue
/// outlined to gpu.funcs; nothing serialized yet.
LogicalResult prepareEntriesForCuda(ModuleOp module);

/// Lowers the entries of `module` (tx-lower-entries already run) for the
/// CUDA target: renames the runtime calls to their txrt_cuda_* counterparts,
/// passes the host scalars that glue kernels read (rank-0 allocas: a
/// position offset) by value, gives kernels and calls the device copies of
/// the spec's constants, turns memref.copy into a kernel, outlines the
/// glue (outlineGlueToGpu) and serializes every gpu.module to PTX for
/// kCudaPtxChip (libdevice from `toolkitPath`/nvvm/libdevice) in a
/// gpu.binary. The host code is then lowered with
/// buildLowerToLLVMPipeline(pm, /*gpuLaunches=*/true).
LogicalResult lowerEntriesForCuda(ModuleOp module, llvm::StringRef toolkitPath);

} // namespace mlir::tx

#endif // TXC_GPU_CUDALOWERING_H
