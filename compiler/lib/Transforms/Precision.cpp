//===- Precision.cpp - run the linears in bf16 ----------------------------===//
//
// tx-precision: with precision=bf16, every linear (forward, recomputed
// pre-activation, and linear_grad) reads bf16 copies of its input and
// weight made by tx.cast, and accumulates and writes f32. The cast of a
// value is made once, right after its definition, and shared by all its
// bf16 readers: a forward linear and its linear_grad read the same bf16
// activation, so the backward keeps that activation in bf16. The cast of a
// weight read straight from a tx.param marks the parameter `bf16_copy`:
// tx-plan-memory gives it a bf16 copy in the parameter arena, and the cast
// lowers to a read of that copy (no runtime work). The Adam step writes the
// copy as it updates the f32 master weight, and the driver after loading,
// so no entry call rounds weights. The cast of a norm's output (add + layer
// norm, RMS norm, add + RMS norm: every sublayer's input) is marked
// `by_producer`: the norm's kernel writes the bf16 copy in the pass that
// writes its f32 output, and the cast is no pass of its own. The fused
// attention ops (tx.attention, tx.attention_train, tx.attention_grad) are
// marked `bf16`: their block products round Q, K, V, P, dO and dS to bf16
// inside the kernel (txrt_attention_fwd_bf16, _bwd_bf16), so their operands
// stay f32 and no cast is made for them.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tx {
#define GEN_PASS_DEF_PRECISIONPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// The bf16 copy of f32 values, made once per value: a tx.cast (of a
/// parameter read: its bf16 copy, the parameter marked bf16_copy).
class Bf16Casts {
public:
  explicit Bf16Casts(ModuleOp module)
      : module(module), builder(module.getContext()) {}

  Value of(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.getElementType().isF32())
      return value;
    Value &copy = casts[value];
    if (copy)
      return copy;
    builder.setInsertionPointAfterValue(value);
    if (auto param = value.getDefiningOp<ParamOp>())
      if (auto decl = module.lookupSymbol<ParameterOp>(param.getNameAttr()))
        decl->setAttr("bf16_copy", builder.getUnitAttr());
    auto castOp = builder.create<CastOp>(
        value.getLoc(), type.clone(builder.getBF16Type()), value);
    if (writesBf16Copy(value))
      castOp.setByProducer(true);
    copy = castOp;
    return copy;
  }

private:
  /// Whether the op defining `value` has a kernel that also writes it in
  /// bf16 (txrt_add_layer_norm_fwd_bf16, txrt_rms_norm_fwd_bf16).
  static bool writesBf16Copy(Value value) {
    auto result = dyn_cast<OpResult>(value);
    return result && result.getResultNumber() == 0 &&
           isa<AddLayerNormOp, RmsNormOp, AddRmsNormOp>(result.getOwner());
  }

  ModuleOp module;
  OpBuilder builder;
  llvm::DenseMap<Value, Value> casts;
};

struct PrecisionPass : mlir::tx::impl::PrecisionPassBase<PrecisionPass> {
  using PrecisionPassBase::PrecisionPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (precision != "fp32" && precision != "bf16") {
      module.emitError() << "unknown precision '" << precision
                         << "'; the precisions are fp32 and bf16";
      return signalPassFailure();
    }
    // The pass adds bf16 casts; it does not remove them: fp32 over a bf16
    // module relabelled it fp32 and kept its casts (the metadata and the
    // executable's bf16 CPU check then disagreed with the code).
    auto current = module->getAttrOfType<StringAttr>("tx.precision");
    if (current && current.getValue() == "bf16" && precision == "fp32") {
      module.emitError() << "tx-precision=fp32 on a module that is bf16 "
                            "already: the pass adds bf16 casts and cannot "
                            "remove them; run it on the IR before tx-precision";
      return signalPassFailure();
    }
    module->setAttr("tx.precision",
                    StringAttr::get(module.getContext(), precision));
    if (precision == "fp32")
      return;
    for (auto func : module.getOps<func::FuncOp>()) {
      Bf16Casts casts(module);
      func.walk([&](Operation *op) {
        if (auto linear = dyn_cast<LinearOp>(op)) {
          // Gated or not: the epilogue (gate f32) runs on the f32 sum.
          linear.getInputMutable().assign(casts.of(linear.getInput()));
          linear.getWeightMutable().assign(casts.of(linear.getWeight()));
        } else if (auto grad = dyn_cast<LinearGradOp>(op);
                   grad && !grad->hasAttr("tx.f32")) {
          // (A `tx.f32` one is a matmul's weight gradient: f32 as it is.)
          grad.getInputMutable().assign(casts.of(grad.getInput()));
          grad.getWeightMutable().assign(casts.of(grad.getWeight()));
        } else if (isa<AttentionOp, AttentionTrainOp, AttentionGradOp>(op)) {
          op->setAttr("bf16", UnitAttr::get(op->getContext()));
        }
      });

    }
  }
};

} // namespace
