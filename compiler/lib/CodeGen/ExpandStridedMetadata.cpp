//===- ExpandStridedMetadata.cpp - memref views to base + metadata ---------===//
//
// tx-expand-strided-metadata: MLIR's expand-strided-metadata patterns
// rewrite subviews, reshapes and the aligned pointer of a view into
// memref.extract_strided_metadata, index arithmetic and
// memref.reinterpret_cast, which finalize-memref-to-llvm lowers. MLIR's pass
// applies them with folding to the whole module with region simplification,
// which over the entries' thousands of status-check blocks grew faster than
// the model's depth; here each function is rewritten on its own, with the
// same patterns and folding; of region simplification only the erasure of
// unreachable blocks is kept (linear), not its dead-value propagation and
// block merging, which never changed the entries' straight-line blocks.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tx {
#define GEN_PASS_DEF_EXPANDSTRIDEDMETADATAPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

struct ExpandStridedMetadataPass
    : mlir::tx::impl::ExpandStridedMetadataPassBase<ExpandStridedMetadataPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    memref::populateExpandStridedMetadataPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    IRRewriter rewriter(&getContext());
    for (Operation &op : getOperation().getBody()->getOperations())
      for (Region &region : op.getRegions()) {
        if (region.empty())
          continue;
        // What region simplification does in linear time: an entry that
        // calls no runtime function leaves its status exit block without
        // predecessors, and the dialect conversions after this pass skip
        // unreachable blocks (a func.return would stay in an llvm.func).
        (void)eraseUnreachableBlocks(rewriter, region);
        if (failed(applyPatternsAndFoldGreedily(region, frozen, config)))
          return signalPassFailure();
      }
  }
};

} // namespace
