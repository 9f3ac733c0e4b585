//===- GluePipeline.cpp - glue kernels to gpu.func through MLIR's passes --===//
//
// linalg -> scf.parallel (convert-linalg-to-parallel-loops), each outermost
// loop nest collapsed to one dimension and tiled [kGlueBlockThreads]
// without min/max bounds (an scf.if guards the tail), gpu-map-parallel-loops
// (tiles to blocks x, the inner loop to threads x),
// convert-parallel-loops-to-gpu, outlining. Collapsed because the mapping
// gives a loop's i-th dimension the i-th hardware dimension: a rank-3 nest
// tiled on its last dimension asked for 256 threads in z (the limit is 64:
// the launch failed with cudaErrorInvalidValue), and grid y and z stop at
// 65535 blocks; one dimension has neither limit and keeps every thread of
// a block busy however narrow the innermost dimension is. The NVVM
// and PTX steps that follow are those of test/GPU/elementwise-to-ptx.test.
//
//===----------------------------------------------------------------------===//
#include "txc/GPU/GluePipeline.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

/// Collapses every outermost scf.parallel of `module` to one dimension and
/// tiles it kGlueBlockThreads iterations a tile.
void tileLoopNestsForBlocks(ModuleOp module) {
  SmallVector<scf::ParallelOp> outermost;
  module.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>())
      outermost.push_back(loop);
  });
  IRRewriter rewriter(module.getContext());
  for (scf::ParallelOp loop : outermost) {
    if (loop.getNumLoops() > 1) {
      std::vector<unsigned> all(loop.getNumLoops());
      for (unsigned i = 0; i < all.size(); ++i)
        all[i] = i;
      // Replaces `loop` by a one-dimensional loop in its place (its bounds'
      // arithmetic before it); a loop is never its block's last op.
      Operation *after = loop->getNextNode();
      collapseParallelLoops(rewriter, loop, {all});
      loop = cast<scf::ParallelOp>(after->getPrevNode());
    }
    scf::tileParallelLoop(loop, {tx::kGlueBlockThreads},
                          /*noMinMaxBounds=*/true);
  }
}

/// Puts every linalg op without parallel loops inside a one-iteration
/// scf.parallel, so that it becomes a one-thread kernel like any other glue:
/// rank-0 glue (a loss scaled or summed, `where` on scalars), and a
/// reduction to a scalar (`reduce_sum(reduce_sum(v, -1), -1)`, a
/// reduce_max over a vector), whose scf.for nest that one thread runs in the
/// CPU's order. Lowered to loops without one, rank-0 glue stayed host code
/// reading and writing device buffers (and constants' device copies), which
/// no check caught, and a reduction to a scalar stayed a host loop.
void wrapScalarGlueInLoops(ModuleOp module) {
  SmallVector<linalg::LinalgOp> scalars;
  module.walk([&](linalg::LinalgOp op) {
    if (op.getNumParallelLoops() == 0 &&
        !op->getParentOfType<gpu::GPUModuleOp>() &&
        !op->getParentOfType<LoopLikeOpInterface>())
      scalars.push_back(op);
  });
  for (linalg::LinalgOp op : scalars) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
    Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = builder.create<scf::ParallelOp>(loc, ValueRange{zero},
                                                ValueRange{one}, ValueRange{one});
    op->moveBefore(loop.getBody()->getTerminator());
  }
}

} // namespace

LogicalResult mlir::tx::outlineGlueToGpu(ModuleOp module) {
  MLIRContext *context = module.getContext();
  context->loadDialect<affine::AffineDialect, gpu::GPUDialect,
                       scf::SCFDialect>();
  wrapScalarGlueInLoops(module);
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
