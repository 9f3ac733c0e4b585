//===- FuseAddNorm.cpp - layer_norm(x + y) -> tx.add_layer_norm -----------===//
//
// tx-fuse-add-norm: the residual `layer_norm(x + sublayer(x))` of every
// post-norm Transformer layer becomes one tx.add_layer_norm, and
// `rms_norm(x + y)` (a pre-norm model's residual stream feeding the next
// layer's norm) one tx.add_rms_norm, which libtxrt runs in one pass over
// memory. The sum stays available as the fused op's second result for any
// other user.
//
// First, RMSNorm written out as PyTorch users write it (Hugging Face's
// LlamaRMSNorm), `x * rsqrt(mean(x ** 2, -1, keepdim) + eps) * w` with `x *
// x` for the square, `x / sqrt(...)` for the scaling and the factors in any
// order, becomes tx.rms_norm, so it fuses with its residual add too.
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"

#include "txc/Transforms/FusedLocation.h"
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <sstream>

namespace mlir::tx {
#define GEN_PASS_DEF_FUSEADDNORMPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// The value of a scalar (every dim 1) f32 splat constant, if `v` is one.
std::optional<float> scalarConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.getElementType().isF32())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToFloat();
}

/// Whether `v` is `x ** 2` or `x * x`.
bool isSquareOf(Value v, Value x) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getInput() == x && pow.getExponent().convertToFloat() == 2.0f;
  if (auto mul = v.getDefiningOp<MulOp>())
    return mul.getLhs() == x && mul.getRhs() == x;
  return false;
}

/// The mean of squares `mean(x ** 2, -1, keepdim = true) + eps` that `v` is,
/// with the x it squares and eps (null if `v` is not one).
Value meanSquarePlusEps(Value v, float &eps) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  for (int side = 0; side < 2; ++side) {
    std::optional<float> c =
        scalarConstant(side == 0 ? add.getRhs() : add.getLhs());
    auto mean = (side == 0 ? add.getLhs() : add.getRhs())
                    .getDefiningOp<ReduceMeanOp>();
    if (!c || !mean || !mean.getKeepdim() || mean.getAxes().size() != 1)
      continue;
    auto squared = cast<RankedTensorType>(mean.getInput().getType());
    int64_t axis = mean.getAxes()[0];
    if (axis != -1 && axis != squared.getRank() - 1)
      continue;
    Operation *square = mean.getInput().getDefiningOp();
    if (!square || square->getNumOperands() == 0)
      continue;
    Value x = square->getOperand(0);
    if (!isSquareOf(mean.getInput(), x) || add.getType() != mean.getType())
      continue;
    eps = *c;
    return x;
  }
  return nullptr;
}

/// A written-out RMSNorm ending at `root` (a product by the weight): the
/// normalized input, weight and eps, and the ops that become dead.
struct WrittenRmsNorm {
  Value input, weight;
  float eps = 0.0f;
  SmallVector<Operation *> chain; // root first
};

/// `x * rsqrt(ms)` / `rsqrt(ms) * x` / `x / sqrt(ms)` with ms a mean of
/// squares of x plus eps: x and eps.
Value normalizedInput(Value v, float &eps, SmallVectorImpl<Operation *> &chain) {
  Operation *op = v.getDefiningOp();
  if (auto mul = dyn_cast_or_null<MulOp>(op)) {
    for (int side = 0; side < 2; ++side) {
      Value x = side == 0 ? mul.getLhs() : mul.getRhs();
      auto rsqrt =
          (side == 0 ? mul.getRhs() : mul.getLhs()).getDefiningOp<RsqrtOp>();
      if (!rsqrt)
        continue;
      if (meanSquarePlusEps(rsqrt.getInput(), eps) == x) {
        chain.append({mul, rsqrt});
        return x;
      }
    }
  }
  if (auto div = dyn_cast_or_null<DivOp>(op)) {
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    if (sqrt && meanSquarePlusEps(sqrt.getInput(), eps) == div.getLhs()) {
      chain.append({div, sqrt});
      return div.getLhs();
    }
  }
  return nullptr;
}

std::optional<WrittenRmsNorm> matchWrittenRmsNorm(MulOp root) {
  for (int side = 0; side < 2; ++side) {
    WrittenRmsNorm match;
    match.weight = side == 0 ? root.getRhs() : root.getLhs();
    match.chain.push_back(root);
    match.input = normalizedInput(side == 0 ? root.getLhs() : root.getRhs(),
                                  match.eps, match.chain);
    if (!match.input)
      continue;
    auto inputType = cast<RankedTensorType>(match.input.getType());
    auto weightType = cast<RankedTensorType>(match.weight.getType());
    if (root.getType() != inputType || weightType.getRank() != 1 ||
        inputType.getShape().back() != weightType.getShape()[0] ||
        ShapedType::isDynamic(weightType.getShape()[0]))
      continue;
    // The mean-of-squares ops: rsqrt / sqrt's operand chain.
    Operation *scale = match.chain.back();
    auto add = scale->getOperand(0).getDefiningOp<AddOp>();
    auto mean = add.getLhs().getDefiningOp<ReduceMeanOp>();
    if (!mean)
      mean = add.getRhs().getDefiningOp<ReduceMeanOp>();
    match.chain.append({add, mean, mean.getInput().getDefiningOp()});
    return match;
  }
  return std::nullopt;
}

struct FuseAddNormPass
    : mlir::tx::impl::FuseAddNormPassBase<FuseAddNormPass> {
  using FuseAddNormPassBase::FuseAddNormPassBase;

  /// Written-out RMSNorms -> tx.rms_norm. Intermediates with users outside
  /// the chain keep it written out (their values are needed anyway).
  void recognizeRmsNorms(FusionStats &report) {
    SmallVector<MulOp> roots;
    getOperation().walk([&](MulOp mul) { roots.push_back(mul); });
    llvm::DenseSet<Operation *> erased;
    for (MulOp root : roots) {
      if (erased.contains(root))
        continue; // part of an earlier match
      std::optional<WrittenRmsNorm> match = matchWrittenRmsNorm(root);
      if (!match)
        continue;
      bool privateChain = true;
      for (Operation *op : ArrayRef(match->chain).drop_front())
        privateChain &= op->hasOneUse();
      if (!privateChain) {
        report.declined(root.getLoc(),
                        "written-out rms_norm: an intermediate has other users");
        continue;
      }
      // tx.rms_norm takes eps > 0 only; `+ 0.0`, `+ -0.01` or an eps that
      // is 0 in f32 stays written out, computed as the spec says.
      if (!(match->eps > 0.0f) || !std::isfinite(match->eps)) {
        std::ostringstream eps;
        eps << match->eps;
        report.declined(root.getLoc(),
                        "written-out rms_norm: its eps (" + eps.str() +
                            " in f32) is not positive and finite, as "
                            "tx.rms_norm's must be");
        continue;
      }
      OpBuilder builder(root);
      auto norm = builder.create<RmsNormOp>(
          root.getLoc(), root.getType(), match->input, match->weight,
          builder.getF32FloatAttr(match->eps));
      root.getResult().replaceAllUsesWith(norm.getResult());
      for (Operation *op : match->chain) {
        erased.insert(op);
        op->erase();
      }
      report.fused();
    }
  }

  void runOnOperation() override {
    FusionStats report("tx-fuse-add-norm");
    recognizeRmsNorms(report);
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
          fusedLocation(norm->getLoc(), {add, norm}), types, operands,
          ArrayRef<NamedAttribute>{
              builder.getNamedAttr("epsilon", layer.getEpsilonAttr())});
    return builder.create<AddRmsNormOp>(
        fusedLocation(norm->getLoc(), {add, norm}), types, operands,
        ArrayRef<NamedAttribute>{builder.getNamedAttr(
            "epsilon", cast<RmsNormOp>(norm).getEpsilonAttr())});
  }
};

} // namespace
