//===- FuseAddNorm.cpp - layer_norm(x + y) -> tx.add_layer_norm -----------===//
//
// tx-fuse-add-norm: the residual `layer_norm(x + sublayer(x))` of every
// post-norm Transformer layer becomes one tx.add_layer_norm, and
// `rms_norm(x + y)` (a pre-norm model's residual stream feeding the next
// layer's norm) one tx.add_rms_norm, which libtxrt runs in one pass over
// memory. The sum stays available as the fused op's second result for any
// other user.
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
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<LayerNormOp, RmsNormOp>(op))
        norms.push_back(op);
    });
    for (Operation *norm : norms) {
      auto add = norm->getOperand(0).getDefiningOp<AddOp>();
      if (!add)
        continue;
      // Without broadcasting only: the fused kernel adds equal shapes.
      if (add.getLhs().getType() != add.getType() ||
          add.getRhs().getType() != add.getType()) {
        report.declined(norm->getLoc(), "the add broadcasts (the fused "
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
        report.declined(norm->getLoc(), "the sum has a user before the norm");
        continue;
      }
      OpBuilder builder(norm);
      Operation *fused = fuse(builder, norm, add);
      norm->getResult(0).replaceAllUsesWith(fused->getResult(0));
      norm->erase();
      add.getResult().replaceAllUsesWith(fused->getResult(1));
      add.erase();
      report.fused();
    }
    if (stats)
      report.print(llvm::errs());
  }

  /// add_layer_norm or add_rms_norm of `add`'s operands with `norm`'s
  /// parameters and epsilon.
  static Operation *fuse(OpBuilder &builder, Operation *norm, AddOp add) {
    SmallVector<Value> operands = {add.getLhs(), add.getRhs()};
    operands.append(std::next(norm->operand_begin()), norm->operand_end());
    SmallVector<Type, 2> types = {norm->getResult(0).getType(),
                                  add.getType()};
    if (auto layer = dyn_cast<LayerNormOp>(norm))
      return builder.create<AddLayerNormOp>(
          norm->getLoc(), types, operands,
          ArrayRef<NamedAttribute>{
              builder.getNamedAttr("epsilon", layer.getEpsilonAttr())});
    return builder.create<AddRmsNormOp>(
        norm->getLoc(), types, operands,
        ArrayRef<NamedAttribute>{builder.getNamedAttr(
            "epsilon", cast<RmsNormOp>(norm).getEpsilonAttr())});
  }
};

} // namespace
