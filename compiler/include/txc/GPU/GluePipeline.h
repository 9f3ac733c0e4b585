//===- GluePipeline.h - glue kernels to the gpu dialect ---------*- C++ -*-===//
//
// The CUDA target's glue: tx-lower-entries writes each element-wise or
// index glue op as a `__txc_kernel_*` function holding one linalg.generic on
// memrefs. outlineGlueToGpu turns those loops into GPU kernels with MLIR's
// own passes; the runtime calls stay on the host (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_GPU_GLUEPIPELINE_H
#define TXC_GPU_GLUEPIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::tx {

/// Threads per block of the generated glue kernels (the innermost loop's
/// tile).
constexpr int64_t kGlueBlockThreads = 256;

/// Lowers the linalg ops of `module` (tx-lower-entries already run) to
/// parallel loops, tiles each loop nest to kGlueBlockThreads threads on its
/// innermost dimension (a bounds guard inside, the sizes being symbolic),
/// maps the tiles to blocks and threads and outlines every nest into a
/// `gpu.func` of its own `gpu.module`, launched with `gpu.launch_func`.
LogicalResult outlineGlueToGpu(ModuleOp module);

} // namespace mlir::tx

#endif // TXC_GPU_GLUEPIPELINE_H
