//===- RandomKeys.cpp - the keys of a training entry's random ops ---------===//
#include "txc/Transforms/RandomKeys.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tx;

namespace {
/// RNG keys start here, above any call-site number the lowering assigns.
constexpr int64_t kFirstRngKey = 1 << 20;
} // namespace

bool mlir::tx::isRandomOp(Operation *op) {
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return dropout.getRate().convertToDouble() > 0.0;
  if (auto attention = dyn_cast<AttentionOp>(op))
    return attention.getDropout().convertToDouble() > 0.0;
  return false;
}

bool mlir::tx::isUndifferentiatedTrainEntry(func::FuncOp func) {
  auto kind = func->getAttrOfType<StringAttr>("tx.entry");
  return kind && kind.getValue() == "train" && !func->hasAttr("tx.train_kind");
}

void mlir::tx::keyRandomOps(func::FuncOp func) {
  int64_t next = kFirstRngKey;
  func.walk([&](Operation *op) {
    if (auto key = op->getAttrOfType<IntegerAttr>(kRngKeyAttr))
      next = std::max(next, key.getInt() + 1);
  });
  OpBuilder builder(func.getContext());
  func.walk([&](Operation *op) {
    if (isRandomOp(op) && !op->hasAttr(kRngKeyAttr))
      op->setAttr(kRngKeyAttr, builder.getI64IntegerAttr(next++));
  });
}
