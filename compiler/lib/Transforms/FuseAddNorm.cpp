//===- FuseAddNorm.cpp - layer_norm(x + y) -> tx.add_layer_norm -----------===//
//
// tx-fuse-add-norm: the post-norm residual `layer_norm(x + sublayer(x))` of
// every Transformer layer becomes one tx.add_layer_norm, which libtxrt runs
// in one pass over memory. The sum stays available as the fused op's second
// result for any other user.
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"

#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::tx {
#define GEN_PASS_DEF_FUSEADDNORMPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

struct FuseAddNormPass
    : mlir::tx::impl::FuseAddNormPassBase<FuseAddNormPass> {
  using FuseAddNormPassBase::FuseAddNormPassBase;

  void runOnOperation() override {
    FusionStats report("tx-fuse-add-norm");
    SmallVector<LayerNormOp> norms;
    getOperation().walk([&](LayerNormOp norm) { norms.push_back(norm); });
    for (LayerNormOp norm : norms) {
      auto add = norm.getInput().getDefiningOp<AddOp>();
      if (!add)
        continue;
      // Without broadcasting only: the fused kernel adds equal shapes.
      if (add.getLhs().getType() != add.getType() ||
          add.getRhs().getType() != add.getType()) {
        report.declined(norm.getLoc(), "the add broadcasts (the fused "
                                       "kernel adds equal shapes)");
        continue;
      }
      // The fused op sits where the norm is (its weight and bias are defined
      // after the add): other users of the sum must come after it.
      bool laterUsersOnly = llvm::all_of(add->getUsers(), [&](Operation *user) {
        return user == norm || (user->getBlock() == norm->getBlock() &&
                                norm->isBeforeInBlock(user));
      });
      if (!laterUsersOnly) {
        report.declined(norm.getLoc(), "the sum has a user before the norm");
        continue;
      }
      OpBuilder builder(norm);
      SmallVector<Value> operands = {add.getLhs(), add.getRhs(),
                                     norm.getWeight()};
      if (norm.getBias())
        operands.push_back(norm.getBias());
      auto fused = builder.create<AddLayerNormOp>(
          norm.getLoc(), TypeRange{norm.getType(), add.getType()}, operands,
          ArrayRef<NamedAttribute>{builder.getNamedAttr(
              "epsilon", norm.getEpsilonAttr())});
      norm.getResult().replaceAllUsesWith(fused.getResult());
      norm.erase();
      add.getResult().replaceAllUsesWith(fused.getSum());
      add.erase();
      report.fused();
    }
    if (stats)
      report.print(llvm::errs());
  }
};

} // namespace
