//===- MemoryPlan.h - reading and printing a planned module ------*- C++ -*-===//
//
// After tx-plan-memory, every tensor value of an entry has an arena offset.
// These helpers read the plan back (for lowering and for `txc
// --emit=planned`) and print it as a table of buffers.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_MEMORYPLAN_H
#define TXC_TRANSFORMS_MEMORYPLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mlir::tx {

/// The arena offset of `value` (an op result in a planned entry), or
/// nullopt when it has none (parameters, constants, entry arguments).
std::optional<int64_t> getPlannedOffset(Value value);

/// The entry output whose caller-provided buffer holds `value` (the entry's
/// result and whatever shares its buffer in place), if the plan put it there.
std::optional<int64_t> getPlannedOutput(Value value);

/// The most bytes of one arena (parameters with gradients and Adam moments,
/// or one entry's activations): 2^48 (256 TiB), so that every offset and
/// every `arena + offset + index * element` the generated code and libtxrt
/// compute stays 15 bits below int64's range. tx-plan-memory reports an
/// error past it (docs/codegen.md, "Memory planning").
constexpr int64_t kMaxArenaBytes = int64_t(1) << 48;

/// Bytes of a tensor at the upper bounds of its symbolic dimensions
/// (i1 takes one byte per element), or nullopt when the tensor is over the
/// size limits of TxShape.h (then its byte size may not even fit in int64).
std::optional<int64_t> getUpperBoundBytes(Type type);

/// A transpose of the last two dimensions, or a split_heads, whose every use
/// reads it through strides (matmul, attention, or another such view), or a
/// merge_heads of a rank-4 matmul used only there (the matmul writes the
/// merged layout): it is lowered to no code, and its buffer is its
/// operand's.
bool isStridedView(Operation *op);

/// A tx.slice or tx.split whose results are each one contiguous run of its
/// operand (SliceOp::isContiguous, SplitOp::isContiguous): every result is
/// a view at an element offset into the operand's data, lowered to no code,
/// and shares the operand's buffer. Such a view (and a reshape or strided
/// view of it) does not start where its buffer starts, so it never lends
/// its buffer to an in-place result or to an entry output.
bool isOffsetView(Operation *op);

/// Prints, per entry, each buffer (value, op, type, bytes, offset, live
/// range) and the arena size against the sum of all tensor sizes.
void printMemoryPlan(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_MEMORYPLAN_H
