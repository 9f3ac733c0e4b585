//===- FuseLinear.cpp - activations and residuals into linear epilogues ---===//
//
// tx-fuse-linear: an activation or a residual add right after a tx.linear
// becomes part of the linear's epilogue (oneDNN post-ops in libtxrt), so the
// intermediate never travels to memory. Only single-use linears are fused;
// the activation is applied before the residual, as tx.linear defines.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::tx {
#define GEN_PASS_DEF_FUSELINEARPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// A copy of `linear` at the builder's point with `activation` and
/// `residual` (null: keep the linear's own).
LinearOp rebuild(OpBuilder &builder, LinearOp linear, Activation activation,
                 Value residual) {
  SmallVector<Value> operands = {linear.getInput(), linear.getWeight()};
  int32_t hasBias = linear.getBias() ? 1 : 0;
  if (hasBias)
    operands.push_back(linear.getBias());
  if (!residual)
    residual = linear.getResidual();
  if (residual)
    operands.push_back(residual);
  return builder.create<LinearOp>(
      linear.getLoc(), TypeRange{linear.getType()}, operands,
      ArrayRef<NamedAttribute>{
          builder.getNamedAttr("operandSegmentSizes",
                               builder.getDenseI32ArrayAttr(
                                   {1, 1, hasBias, residual ? 1 : 0})),
          builder.getNamedAttr("activation",
                               ActivationAttr::get(builder.getContext(),
                                                   activation))});
}

struct FuseLinearPass : mlir::tx::impl::FuseLinearPassBase<FuseLinearPass> {
  void runOnOperation() override {
    // Activations first (they come before the residual in the epilogue).
    SmallVector<Operation *> activations;
    getOperation().walk([&](Operation *op) {
      if (isa<ReluOp, GeluOp>(op))
        activations.push_back(op);
    });
    for (Operation *op : activations) {
      auto linear = op->getOperand(0).getDefiningOp<LinearOp>();
      if (!linear || !linear->hasOneUse() ||
          linear.getActivation() != Activation::none || linear.getResidual())
        continue;
      OpBuilder builder(op);
      LinearOp fused = rebuild(
          builder, linear, isa<ReluOp>(op) ? Activation::relu : Activation::gelu,
          nullptr);
      op->getResult(0).replaceAllUsesWith(fused.getResult());
      op->erase();
      linear.erase();
    }
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds) {
      if (add.getLhs().getType() != add.getType() ||
          add.getRhs().getType() != add.getType())
        continue;
      for (int side = 0; side < 2; ++side) {
        Value mine = side == 0 ? add.getLhs() : add.getRhs();
        Value other = side == 0 ? add.getRhs() : add.getLhs();
        auto linear = mine.getDefiningOp<LinearOp>();
        if (!linear || !linear->hasOneUse() || linear.getResidual() ||
            mine == other)
          continue;
        OpBuilder builder(add);
        LinearOp fused =
            rebuild(builder, linear, linear.getActivation(), other);
        add.getResult().replaceAllUsesWith(fused.getResult());
        add.erase();
        linear.erase();
        break;
      }
    }
  }
};

} // namespace
