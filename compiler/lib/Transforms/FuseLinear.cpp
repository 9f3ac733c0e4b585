//===- FuseLinear.cpp - activations and residuals into linear epilogues ---===//
//
// tx-fuse-linear: an activation or a residual add right after a tx.linear
// becomes part of the linear's epilogue (oneDNN post-ops in libtxrt), so the
// intermediate never travels to memory. Only single-use linears are fused;
// the activation is applied before the residual, as tx.linear defines. A
// linear written by hand, `matmul(x, transpose(W)) + b`, first becomes a
// tx.linear with bias, so its epilogue fuses the same way.
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"

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

/// The `[N, K]` weight `W` of `matmul(x, transpose(W))` (or `transpose_rhs`),
/// or null.
Value transposedWeight(MatmulOp matmul) {
  if (matmul.getTransposeLhs())
    return nullptr;
  Value weight = matmul.getRhs();
  if (!matmul.getTransposeRhs()) {
    auto transpose = weight.getDefiningOp<TransposeOp>();
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return nullptr;
    weight = transpose.getInput();
  }
  auto type = cast<RankedTensorType>(weight.getType());
  return type.getRank() == 2 && type.hasStaticShape() ? weight : nullptr;
}

struct FuseLinearPass : mlir::tx::impl::FuseLinearPassBase<FuseLinearPass> {
  using FuseLinearPassBase::FuseLinearPassBase;

  void runOnOperation() override {
    FusionStats report("tx-fuse-linear");
    fuseHandWrittenLinears(report);
    fuseActivations(report);
    fuseResiduals(report);
    if (stats)
      report.print(llvm::errs());
  }

  /// `matmul(x, Wᵀ) + b` -> `linear(x, W, b)` for a rank-1 bias `[N]`.
  void fuseHandWrittenLinears(FusionStats &report) {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds) {
      for (int side = 0; side < 2; ++side) {
        Value product = side == 0 ? add.getLhs() : add.getRhs();
        Value bias = side == 0 ? add.getRhs() : add.getLhs();
        auto matmul = product.getDefiningOp<MatmulOp>();
        Value weight = matmul ? transposedWeight(matmul) : nullptr;
        if (!weight)
          continue;
        int64_t outFeatures =
            cast<RankedTensorType>(weight.getType()).getShape()[0];
        auto biasType = cast<RankedTensorType>(bias.getType());
        if (biasType.getRank() != 1 || biasType.getShape()[0] != outFeatures ||
            add.getType() != product.getType()) {
          report.declined(add.getLoc(),
                          "the added term is not a bias [" +
                              Twine(outFeatures) + "] of matmul(x, Wᵀ)");
          break;
        }
        if (!product.hasOneUse()) {
          report.declined(add.getLoc(), "matmul(x, Wᵀ) has other users");
          break;
        }
        OpBuilder builder(add);
        auto linear = builder.create<LinearOp>(
            add.getLoc(), add.getType(), matmul.getLhs(), weight, bias,
            /*residual=*/Value(), Activation::none);
        add.getResult().replaceAllUsesWith(linear.getResult());
        add.erase();
        Operation *transpose = matmul.getRhs().getDefiningOp<TransposeOp>();
        matmul.erase();
        if (transpose && transpose->use_empty())
          transpose->erase();
        report.fused();
        break;
      }
    }
  }

  /// Activations first (they come before the residual in the epilogue).
  void fuseActivations(FusionStats &report) {
    SmallVector<Operation *> activations;
    getOperation().walk([&](Operation *op) {
      if (isa<ReluOp, GeluOp>(op))
        activations.push_back(op);
    });
    for (Operation *op : activations) {
      auto linear = op->getOperand(0).getDefiningOp<LinearOp>();
      if (!linear)
        continue;
      if (!linear->hasOneUse()) {
        report.declined(op->getLoc(), "the linear has other users");
        continue;
      }
      if (linear.getActivation() != Activation::none || linear.getResidual()) {
        report.declined(op->getLoc(), "the linear already has an epilogue");
        continue;
      }
      OpBuilder builder(op);
      LinearOp fused = rebuild(
          builder, linear, isa<ReluOp>(op) ? Activation::relu : Activation::gelu,
          nullptr);
      op->getResult(0).replaceAllUsesWith(fused.getResult());
      op->erase();
      linear.erase();
      report.fused();
    }
  }

  void fuseResiduals(FusionStats &report) {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds) {
      bool fromLinear = add.getLhs().getDefiningOp<LinearOp>() ||
                        add.getRhs().getDefiningOp<LinearOp>();
      if (!fromLinear)
        continue;
      if (add.getLhs().getType() != add.getType() ||
          add.getRhs().getType() != add.getType()) {
        report.declined(add.getLoc(), "the residual add broadcasts");
        continue;
      }
      std::string why = "the linear has other users or a residual already";
      bool fused = false;
      for (int side = 0; side < 2 && !fused; ++side) {
        Value mine = side == 0 ? add.getLhs() : add.getRhs();
        Value other = side == 0 ? add.getRhs() : add.getLhs();
        auto linear = mine.getDefiningOp<LinearOp>();
        if (!linear || !linear->hasOneUse() || linear.getResidual() ||
            mine == other)
          continue;
        OpBuilder builder(add);
        LinearOp rebuilt =
            rebuild(builder, linear, linear.getActivation(), other);
        add.getResult().replaceAllUsesWith(rebuilt.getResult());
        add.erase();
        linear.erase();
        fused = true;
      }
      if (fused)
        report.fused();
      else
        report.declined(add.getLoc(), why);
    }
  }
};

} // namespace
