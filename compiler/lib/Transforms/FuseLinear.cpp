//===- FuseLinear.cpp - activations, gates and residuals into linears -----===//
//
// tx-fuse-linear: an activation, a gate (an element-wise product: GLU,
// SwiGLU, GeGLU) or a residual add right after a tx.linear becomes part of
// the linear's epilogue (oneDNN post-ops in libtxrt), so the intermediate
// never travels to memory. Only single-use linears are fused; the epilogue
// applies the activation, then the gate, then the residual, as tx.linear
// defines. A linear written by hand, `matmul(x, transpose(W)) + b`, first
// becomes a tx.linear with bias, so its epilogue fuses the same way, and
// one without a bias, `matmul(x, transpose(W))` (GPT's tied output
// projection), a tx.linear without one.
//
// In the train entry an epilogue whose gradient needs the pre-activation
// (gelu, gelu_tanh, silu, any gate, and a residual after a relu, whose
// gradient reads relu(z) from the output) is left unfused: fused, the
// backward pass would have to recompute x·Wᵀ with another matrix product,
// which costs far more than the memory pass the fusion saves. relu (whose
// gradient reads the output) and residuals fuse everywhere else.
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"

#include "txc/Transforms/FusedLocation.h"
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tx {
#define GEN_PASS_DEF_FUSELINEARPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// A copy of `linear` at the builder's point with `activation`, `gate` and
/// `residual` (null: keep the linear's own).
LinearOp rebuild(OpBuilder &builder, LinearOp linear, Activation activation,
                 Value gate, Value residual) {
  SmallVector<Value> operands = {linear.getInput(), linear.getWeight()};
  int32_t hasBias = linear.getBias() ? 1 : 0;
  if (hasBias)
    operands.push_back(linear.getBias());
  if (!gate)
    gate = linear.getGate();
  if (gate)
    operands.push_back(gate);
  if (!residual)
    residual = linear.getResidual();
  if (residual)
    operands.push_back(residual);
  return builder.create<LinearOp>(
      linear.getLoc(), TypeRange{linear.getType()}, operands,
      ArrayRef<NamedAttribute>{
          builder.getNamedAttr(
              "operandSegmentSizes",
              builder.getDenseI32ArrayAttr(
                  {1, 1, hasBias, gate ? 1 : 0, residual ? 1 : 0})),
          builder.getNamedAttr("activation",
                               ActivationAttr::get(builder.getContext(),
                                                   activation))});
}

/// Whether `op` is in the train entry (tx-autodiff differentiates it).
bool inTrainEntry(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  auto kind = func ? func->getAttrOfType<StringAttr>("tx.entry") : nullptr;
  return kind && kind.getValue() == "train";
}

/// The epilogue activation an element-wise op computes, if any.
std::optional<Activation> activationOf(Operation *op) {
  if (isa<ReluOp>(op))
    return Activation::relu;
  if (isa<GeluOp>(op))
    return Activation::gelu;
  if (isa<GeluTanhOp>(op))
    return Activation::gelu_tanh;
  if (isa<SiluOp>(op))
    return Activation::silu;
  return std::nullopt;
}

constexpr const char *kRecomputeReason =
    "train entry: the backward pass needs the pre-activation (fused, it "
    "would recompute x·Wᵀ)";

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

  /// Bias adds fuseHandWrittenLinears declined (reported once, there).
  llvm::DenseSet<Operation *> biasDeclined;

  void runOnOperation() override {
    FusionStats report("tx-fuse-linear");
    biasDeclined.clear();
    fuseHandWrittenLinears(report);
    if (biasFree)
      fuseBiasFreeLinears(report);
    fuseActivations(report);
    fuseGates(report);
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
        // A bias written with leading 1s ([1, N], nn.Parameter(torch.zeros(
        // 1, N))) is one too: a reshape to [N] (it was called a residual).
        bool leadingOnes = biasType.getRank() > 1 &&
                           biasType.hasStaticShape() &&
                           biasType.getNumElements() == outFeatures &&
                           biasType.getShape().back() == outFeatures;
        // Another added term: the product becomes a bias-free linear
        // below, and the add its residual if it can be one
        // (fuseResiduals says why not).
        if (!(leadingOnes || (biasType.getRank() == 1 &&
                              biasType.getShape()[0] == outFeatures)) ||
            add.getType() != product.getType()) {
          if (!biasFree)
            report.declined(add.getLoc(), "the added term is not a bias [" +
                                              Twine(outFeatures) +
                                              "] of matmul(x, Wᵀ)");
          break;
        }
        if (!product.hasOneUse()) {
          report.declined(add.getLoc(), "matmul(x, Wᵀ) has other users");
          biasDeclined.insert(add);
          break;
        }
        OpBuilder builder(add);
        if (leadingOnes)
          bias = builder.create<ReshapeOp>(
              bias.getLoc(),
              RankedTensorType::get({outFeatures}, biasType.getElementType()),
              bias);
        auto linear = builder.create<LinearOp>(
            fusedLocation(add.getLoc(), {matmul, add}), add.getType(), matmul.getLhs(), weight, bias,
            /*gate=*/Value(), /*residual=*/Value(), Activation::none);
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

  /// `matmul(x, Wᵀ)` without a bias -> `linear(x, W)` for a 2-D `W`: GPT's
  /// tied output projection `matmul(h, transpose(wte))`, a bias-free
  /// projection written by hand. The same function, but its gradient is one
  /// product over all rows (linear_grad: dW = dyᵀ · x) where the matmul's is
  /// a product per batch element, summed over the batch and transposed:
  /// B times the weight's size in memory and a slower GEMM.
  void fuseBiasFreeLinears(FusionStats &report) {
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp matmul) { matmuls.push_back(matmul); });
    for (MatmulOp matmul : matmuls) {
      Value weight = transposedWeight(matmul);
      if (!weight)
        continue;
      OpBuilder builder(matmul);
      auto linear = builder.create<LinearOp>(
          matmul.getLoc(), matmul.getType(), matmul.getLhs(), weight,
          /*bias=*/Value(), /*gate=*/Value(), /*residual=*/Value(),
          Activation::none);
      matmul.getResult().replaceAllUsesWith(linear.getResult());
      Operation *transpose = matmul.getRhs().getDefiningOp<TransposeOp>();
      matmul.erase();
      if (transpose && transpose->use_empty())
        transpose->erase();
      report.fused();
    }
  }

  /// Activations first (they come before the gate and the residual in the
  /// epilogue).
  void fuseActivations(FusionStats &report) {
    SmallVector<Operation *> activations;
    getOperation().walk([&](Operation *op) {
      if (activationOf(op))
        activations.push_back(op);
    });
    for (Operation *op : activations) {
      auto linear = op->getOperand(0).getDefiningOp<LinearOp>();
      if (!linear)
        continue;
      Activation activation = *activationOf(op);
      if (!linear->hasOneUse()) {
        report.declined(op->getLoc(), "the linear has other users");
        continue;
      }
      if (linear.getActivation() != Activation::none || linear.getGate() ||
          linear.getResidual()) {
        report.declined(op->getLoc(), "the linear already has an epilogue");
        continue;
      }
      if (activation != Activation::relu && inTrainEntry(op)) {
        report.declined(op->getLoc(), kRecomputeReason);
        continue;
      }
      OpBuilder builder(op);
      LinearOp fused = rebuild(builder, linear, activation, nullptr, nullptr);
      fused->setLoc(fusedLocation(linear.getLoc(), {linear, op}));
      op->getResult(0).replaceAllUsesWith(fused.getResult());
      op->erase();
      linear.erase();
      report.fused();
    }
  }

  /// `act(linear(x, W)) * g` -> `linear(x, W, activation, gate = g)` for a
  /// `g` of the result's type (GLU and its variants; in SwiGLU `g` is
  /// itself a linear). The activated side hosts the epilogue.
  void fuseGates(FusionStats &report) {
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) { muls.push_back(mul); });
    for (MulOp mul : muls) {
      auto host = [&](Value v) -> LinearOp {
        auto linear = v.getDefiningOp<LinearOp>();
        if (!linear || !linear->hasOneUse() || linear.getGate() ||
            linear.getResidual() || mul.getLhs() == mul.getRhs())
          return nullptr;
        return linear;
      };
      LinearOp lhs = host(mul.getLhs()), rhs = host(mul.getRhs());
      if (!lhs && !rhs)
        continue;
      LinearOp linear = lhs;
      if (!lhs || (rhs && lhs.getActivation() == Activation::none &&
                   rhs.getActivation() != Activation::none))
        linear = rhs;
      Value gate = linear == lhs ? mul.getRhs() : mul.getLhs();
      if (gate.getType() != mul.getType() ||
          linear.getType() != mul.getType()) {
        // `linear(x) * 0.5` is a scale, no gate: it read "the gate product
        // broadcasts" for a spec without any gate.
        report.declined(
            mul.getLoc(),
            linear.getType() != mul.getType()
                ? "the linear's result is broadcast in the product (it is "
                  "smaller than the product's other operand): only an "
                  "elementwise gate of the linear's shape fuses"
                : "the product's other operand is broadcast (a scale, not a "
                  "gate of the linear's shape such as GLU's): only an "
                  "elementwise gate fuses");
        continue;
      }
      if (inTrainEntry(mul)) {
        report.declined(mul.getLoc(), kRecomputeReason);
        continue;
      }
      // The fused linear takes the product's place, where the gate (an
      // operand of the product) and the host's operands are all defined.
      OpBuilder builder(mul);
      LinearOp fused =
          rebuild(builder, linear, linear.getActivation(), gate, nullptr);
      fused->setLoc(fusedLocation(linear.getLoc(), {linear, mul}));
      mul.getResult().replaceAllUsesWith(fused.getResult());
      mul.erase();
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
      if (!fromLinear || biasDeclined.contains(add))
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
        if (linear.getActivation() == Activation::relu && !linear.getGate() &&
            inTrainEntry(add)) {
          // Its gradient reads relu(z) from the output, which the residual
          // would change (and y - r is not relu(z) in floating point).
          why = "train entry: the relu's gradient reads the linear's output, "
                "which the residual would change (fused, it would recompute "
                "x·Wᵀ)";
          continue;
        }
        OpBuilder builder(add);
        LinearOp rebuilt =
            rebuild(builder, linear, linear.getActivation(), nullptr, other);
        rebuilt->setLoc(fusedLocation(linear.getLoc(), {linear, add}));
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
