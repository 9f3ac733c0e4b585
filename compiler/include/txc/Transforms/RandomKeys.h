//===- RandomKeys.h - the keys of a training entry's random ops --*- C++
//-*-===//
//
// Every op of a train entry that draws random numbers (a dropout, an
// attention with dropout) gets an integer attribute `tx.rng`: the key of its
// Philox stream, from which the forward draws its mask and the backward
// draws it again. Keys follow program order as written, so a program and
// its fused form draw the same masks: tx-fuse-attention keys the entry
// before it fuses anything (the fused op sits where matmul(probs, V) was,
// possibly after other random ops, and takes the key of the dropout on its
// probabilities), and tx-autodiff keys what is left unkeyed (everything,
// with --no-fuse).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_RANDOMKEYS_H
#define TXC_TRANSFORMS_RANDOMKEYS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tx {

/// The attribute holding an op's key.
inline constexpr llvm::StringLiteral kRngKeyAttr = "tx.rng";

/// Whether `op` draws random numbers: a dropout, or an attention with
/// dropout, at a non-zero rate.
bool isRandomOp(Operation *op);

/// Whether `func` is a train entry not yet differentiated.
bool isUndifferentiatedTrainEntry(func::FuncOp func);

/// Gives the random ops of `func` that have no key one, in program order,
/// after the largest key it already holds (the first is 1 << 20, above any
/// call-site number the lowering assigns).
void keyRandomOps(func::FuncOp func);

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_RANDOMKEYS_H
