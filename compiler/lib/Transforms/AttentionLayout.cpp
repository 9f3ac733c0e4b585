//===- AttentionLayout.cpp - give fused attention its [B, T, h*d] operands ===//
//
// libtxrt's attention kernels read Q, K, V and write O, dQ, dK, dV in the
// merged [B, T, h*d] layout: the lowering looks through the tx.split_heads
// that made each operand and lets the tx.merge_heads that consumes each
// result copy it as it is. A valid program need not have that shape: a
// head tensor used twice (`matmul(q, transpose(q))`, or Q read by a
// residual too) makes autodiff sum two gradients before the merge_heads,
// and the `attention` builtin takes any [B, h, T, d] tensor and gives one
// any op may read. Before memory planning, this pass routes every other
// reader through the layouts the kernels use: an operand not made by
// split_heads becomes split_heads(merge_heads(x)) (a strided view of a copy
// in [B, T, h*d]), one made by a split_heads that other ops read too gets
// a split_heads of its own (a copy for them, a view for the kernel, which
// reads the split's input), and a result read by anything but merge_heads (or, for
// the forward output, attention_grad) is read through
// split_heads(merge_heads(r)) (a copy back into [B, h, T, d]).
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tx {
#define GEN_PASS_DEF_ATTENTIONLAYOUTPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

bool isAttention(Operation *op) {
  return isa<AttentionOp, AttentionTrainOp, AttentionGradOp>(op);
}

/// split_heads(merge_heads(x)) of a [B, h, T, d] tensor, built after `x`'s
/// definition (or at `fallback` for a block argument).
Value throughMergedLayout(OpBuilder &builder, Value x, Operation *fallback) {
  OpBuilder::InsertionGuard guard(builder);
  if (Operation *def = x.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPoint(fallback);
  int64_t heads = cast<RankedTensorType>(x.getType()).getShape()[1];
  Location loc = x.getLoc();
  Value merged = builder.create<MergeHeadsOp>(loc, ValueRange{x}).getResult();
  return builder
      .create<SplitHeadsOp>(
          loc, ValueRange{merged},
          ArrayRef<NamedAttribute>{builder.getNamedAttr(
              "heads", builder.getI64IntegerAttr(heads))})
      .getResult();
}

/// A second split_heads of `split`'s input for the attention ops alone: one
/// that other ops read too is a copy in [B, h, T, d] (tx-plan-memory), and
/// the kernel reads its input, which then need not be live any more.
Value viewForAttention(OpBuilder &builder, SplitHeadsOp split) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(split);
  return builder
      .create<SplitHeadsOp>(split.getLoc(), ValueRange{split.getInput()},
                            split->getAttrs())
      .getResult();
}

/// The [B, h, T, d] operands of an attention op that the kernel reads in
/// the merged layout.
SmallVector<OpOperand *> headOperands(Operation *op) {
  SmallVector<OpOperand *> operands;
  if (auto grad = dyn_cast<AttentionGradOp>(op)) {
    for (OpOperand &operand : op->getOpOperands())
      if (operand.get() == grad.getQuery() || operand.get() == grad.getKey() ||
          operand.get() == grad.getValue() || operand.get() == grad.getDout())
        operands.push_back(&operand);
    return operands;
  }
  for (OpOperand &operand : op->getOpOperands().take_front(3))
    operands.push_back(&operand);
  return operands;
}

/// The results of an attention op that the kernel writes in the merged
/// layout (not the log-sum-exp).
SmallVector<Value> headResults(Operation *op) {
  if (auto grad = dyn_cast<AttentionGradOp>(op))
    return {grad.getDquery(), grad.getDkey(), grad.getDvalue()};
  return {op->getResult(0)};
}

struct AttentionLayoutPass
    : mlir::tx::impl::AttentionLayoutPassBase<AttentionLayoutPass> {
  using AttentionLayoutPassBase::AttentionLayoutPassBase;

  void runOnOperation() override {
    OpBuilder builder(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<Operation *> attentions;
      func.walk([&](Operation *op) {
        if (isAttention(op))
          attentions.push_back(op);
      });
      // One copy per value, shared by every attention op that reads it.
      DenseMap<Value, Value> merged;
      for (Operation *op : attentions)
        for (OpOperand *operand : headOperands(op)) {
          Value x = operand->get();
          Value &copy = merged[x];
          if (!copy) {
            auto split = x.getDefiningOp<SplitHeadsOp>();
            if (!split)
              copy = throughMergedLayout(builder, x, op);
            else if (llvm::all_of(split->getUsers(), isAttention))
              copy = x;
            else
              copy = viewForAttention(builder, split);
          }
          operand->set(copy);
        }
      for (Operation *op : attentions)
        for (Value result : headResults(op)) {
          bool forward = !isa<AttentionGradOp>(op);
          auto readsMerged = [&](OpOperand &use) {
            Operation *user = use.getOwner();
            return isa<MergeHeadsOp>(user) ||
                   (forward && isa<AttentionGradOp>(user));
          };
          if (llvm::all_of(result.getUses(), readsMerged))
            continue;
          Value copy = throughMergedLayout(builder, result, op);
          Operation *merge = copy.getDefiningOp()->getOperand(0).getDefiningOp();
          result.replaceUsesWithIf(copy, [&](OpOperand &use) {
            return use.getOwner() != merge && !readsMerged(use);
          });
        }
    }
  }
};

} // namespace
