//===- DeadOps.cpp - erasing unused side-effect-free ops ------------------===//
#include "txc/Transforms/DeadOps.h"

#include "mlir/IR/Block.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

void mlir::tx::eraseDeadOps(Block &block) {
  // In a single block users come after their operands, so one walk from the
  // end erases whole chains: a user is gone before its operand is checked.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isOpTriviallyDead(&op))
      op.erase();
}
