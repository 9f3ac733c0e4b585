//===- LinalgToLoops.cpp - the glue kernels' linalg ops to scf loops -------===//
//
// tx-linalg-to-loops: tx-lower-entries writes element-wise and layout glue
// as linalg ops on memref views, outlined into kernel functions; here each
// becomes a nest of scf.for loops, and the affine applies and memref.dim
// ops that leaves are folded. This is MLIR's convert-linalg-to-loops
// restricted to the functions that hold a linalg op and run without region
// simplification: MLIR's pass folds the whole module, entries included, and
// simplifies their thousands of status-check blocks on every iteration,
// which grew faster than the model's depth (docs/benchmarks.md).
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tx {
#define GEN_PASS_DEF_LINALGTOLOOPSPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// A linalg op on buffers becomes its loop nest (scf.for, loads, the
/// payload, stores); ops on tensors are left alone.
struct LowerLinalgOpToLoops
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not on buffers");
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

bool holdsLinalgOp(Operation *function) {
  return function
      ->walk([](linalg::LinalgOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

struct LinalgToLoopsPass
    : mlir::tx::impl::LinalgToLoopsPassBase<LinalgToLoopsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<LowerLinalgOpToLoops>(context);
    // What the loop nests leave: dims of the operands, index arithmetic.
    memref::DimOp::getCanonicalizationPatterns(patterns, context);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    for (Operation &op : getOperation().getBody()->getOperations()) {
      if (op.getNumRegions() == 0 || !holdsLinalgOp(&op))
        continue;
      for (Region &region : op.getRegions())
        if (failed(applyPatternsAndFoldGreedily(region, frozen, config)))
          return signalPassFailure();
    }
  }
};

} // namespace
