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
/// merged layout) or of a fused attention result read only by merge_heads
/// and attention_grad (the kernels' layout is the merged one): it is
/// lowered to no code, and its buffer is its operand's.
bool isStridedView(Operation *op);

/// A tx.slice or tx.split whose results are each one contiguous run of its
/// operand (SliceOp::isContiguous, SplitOp::isContiguous): every result is
/// a view at an element offset into the operand's data, lowered to no code,
/// and shares the operand's buffer. Such a view (and a reshape or strided
/// view of it) does not start where its buffer starts, so it never lends
/// its buffer to an in-place result or to an entry output.
bool isOffsetView(Operation *op);

/// One buffer to place in an arena: its size in bytes (already aligned)
/// and the program positions over which it is live, both ends included.
struct ArenaBuffer {
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
};

/// Offsets for `buffers` (into `offsets`, one per buffer) such that no two
/// buffers whose lifetimes overlap share a byte; returns the arena size, or
/// nullopt when buffer `overLimit` would end past kMaxArenaBytes. Up to
/// kExactBestFitBuffers buffers, placeBestFit; above, placeBySweep.
std::optional<int64_t> placeInArena(ArrayRef<ArenaBuffer> buffers,
                                    SmallVectorImpl<int64_t> &offsets,
                                    size_t &overLimit);

/// The most buffers placeInArena places with placeBestFit, whose time grows
/// as buffers x buffers (about 2 M steps, a few ms, at this size): every
/// example's entries at their configured depth, and copy at 6 layers.
constexpr size_t kExactBestFitBuffers = 2048;

/// Largest buffer first, each at the smallest gap that holds it (the lowest
/// of equal ones) among the buffers already placed whose lifetimes overlap
/// its own, or above them all. Time: buffers x buffers.
std::optional<int64_t> placeBestFit(ArrayRef<ArenaBuffer> buffers,
                                    SmallVectorImpl<int64_t> &offsets,
                                    size_t &overLimit);

/// In program order (the largest first of those starting together), each
/// buffer at the smallest free hole that holds it (the lowest of equal
/// ones) or at the top of the arena, after the buffers last used before its
/// start have returned their bytes to the free list (merged with their
/// neighbours). Time: buffers x log(buffers).
std::optional<int64_t> placeBySweep(ArrayRef<ArenaBuffer> buffers,
                                    SmallVectorImpl<int64_t> &offsets,
                                    size_t &overLimit);

/// Prints, per entry, each buffer (value, op, type, bytes, offset, live
/// range) and the arena size against the sum of all tensor sizes.
void printMemoryPlan(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_MEMORYPLAN_H
