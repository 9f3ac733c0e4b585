//===- GluePipeline.cpp - glue kernels to gpu.func through MLIR's passes --===//
//
// linalg -> scf.parallel (convert-linalg-to-parallel-loops), each outermost
// loop nest tiled [1, ..., 1, kGlueBlockThreads] without min/max bounds (an
// scf.if guards the tail), gpu-map-parallel-loops (tiles to blocks, the
// inner loop to threads), convert-parallel-loops-to-gpu, outlining. The NVVM
// and PTX steps that follow are those of test/GPU/elementwise-to-ptx.test.
//
//===----------------------------------------------------------------------===//
#include "txc/GPU/GluePipeline.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

/// Tiles every outermost scf.parallel of `module` so that its innermost
/// dimension runs kGlueBlockThreads iterations a tile.
void tileLoopNestsForBlocks(ModuleOp module) {
  SmallVector<scf::ParallelOp> outermost;
  module.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>())
      outermost.push_back(loop);
  });
  for (scf::ParallelOp loop : outermost) {
    SmallVector<int64_t> tileSizes(loop.getNumLoops(), 1);
    tileSizes.back() = tx::kGlueBlockThreads;
    scf::tileParallelLoop(loop, tileSizes, /*noMinMaxBounds=*/true);
  }
}

} // namespace

LogicalResult mlir::tx::outlineGlueToGpu(ModuleOp module) {
  MLIRContext *context = module.getContext();
  context->loadDialect<affine::AffineDialect, gpu::GPUDialect,
                       scf::SCFDialect>();
  PassManager toLoops(context);
  toLoops.addPass(createConvertLinalgToParallelLoopsPass());
  if (failed(toLoops.run(module)))
    return failure();
  tileLoopNestsForBlocks(module);
  PassManager toGpu(context);
  toGpu.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  toGpu.addPass(createParallelLoopToGpuPass());
  toGpu.addPass(createGpuKernelOutliningPass());
  toGpu.addPass(createLowerAffinePass());
  toGpu.addPass(createCanonicalizerPass());
  return toGpu.run(module);
}
