//===- StripDropout.cpp - dropout is the identity outside training --------===//
//
// Replaces tx.dropout by its input in entries that do not train, so that
// inference entries carry no RNG work, and tx.stop_gradient by its input
// in every entry.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tx {
#define GEN_PASS_DEF_STRIPDROPOUTPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

struct StripDropoutPass : mlir::tx::impl::StripDropoutPassBase<StripDropoutPass> {
  using StripDropoutPassBase::StripDropoutPassBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // The identity once gradients are taken (tx-autodiff removes those
      // of the train entry it differentiates).
      func.walk([](StopGradientOp stop) {
        stop.getResult().replaceAllUsesWith(stop.getInput());
        stop.erase();
      });
      auto kind = func->getAttrOfType<StringAttr>("tx.entry");
      if (!all && kind && kind.getValue() == "train")
        continue;
      func.walk([](DropoutOp dropout) {
        dropout.getResult().replaceAllUsesWith(dropout.getInput());
        dropout.erase();
      });
      // Fused attention carries its dropout as an attribute.
      func.walk([](AttentionOp attention) {
        attention.setDropoutAttr(
            FloatAttr::get(Float32Type::get(attention.getContext()), 0.0));
      });
    }
  }
};

} // namespace
