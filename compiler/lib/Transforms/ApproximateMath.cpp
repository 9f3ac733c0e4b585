//===- ApproximateMath.cpp - math ops without an LLVM intrinsic -----------===//
//
// tx-approximate-math: glue kernels use math.tanh (tx.tanh, tx.gelu_tanh),
// which convert-math-to-llvm cannot lower (LLVM 19 has no tanh intrinsic).
// It becomes MLIR's polynomial approximation, plain arith that vectorizes.
// Only tanh: the other math ops keep their libm-accurate intrinsics.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tx {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

struct ApproximateMathPass
    : mlir::tx::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Only the functions that hold a math.tanh (glue kernels) are
    // rewritten, with patterns and folding only. The entries have none, and
    // rewriting the whole module (every op folded, region simplification
    // over the entries' thousands of blocks) took time that grew faster
    // than the model's depth; the final canonicalizer folds them.
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    for (Operation &op : getOperation().getBody()->getOperations()) {
      if (op.getNumRegions() == 0)
        continue;
      WalkResult found =
          op.walk([](math::TanhOp) { return WalkResult::interrupt(); });
      if (!found.wasInterrupted())
        continue;
      for (Region &region : op.getRegions())
        if (failed(applyPatternsAndFoldGreedily(region, frozen, config)))
          return signalPassFailure();
    }
  }
};

} // namespace
