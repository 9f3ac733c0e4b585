//===- ApproximateMath.cpp - math ops without an LLVM intrinsic -----------===//
//
// tx-approximate-math: glue kernels use math.tanh (tx.tanh, tx.gelu_tanh),
// which convert-math-to-llvm cannot lower (LLVM 19 has no tanh intrinsic).
// It becomes MLIR's polynomial approximation, plain arith that vectorizes.
// Only tanh: the other math ops keep their libm-accurate intrinsics.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

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
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
