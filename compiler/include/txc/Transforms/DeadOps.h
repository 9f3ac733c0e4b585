//===- DeadOps.h - erasing unused side-effect-free ops -----------*- C++ -*-===//
//
// Shared by the passes that build code and then drop what nobody reads
// (tx-autodiff's unused gradients, tx-decode-step's unused forward values).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_DEADOPS_H
#define TXC_TRANSFORMS_DEADOPS_H

namespace mlir {
class Block;
} // namespace mlir

namespace mlir::tx {

/// Erases every op of `block` that has no side effects and whose results
/// are unused, including ops that only such ops used.
void eraseDeadOps(Block &block);

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_DEADOPS_H
