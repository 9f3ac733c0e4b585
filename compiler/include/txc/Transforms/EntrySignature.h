//===- EntrySignature.h - what an entry may take and return ------*- C++ -*-===//
//
// An entry (a func.func with `tx.entry`) takes and returns tx tensors of the
// element types the executable and the C header exchange (f32, i32, i1):
// checked by tx-shape-check and again by tx-lower-entries, which read every
// signature type as such a tensor (hand-written IR with an `i32` result
// crashed it).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_ENTRYSIGNATURE_H
#define TXC_TRANSFORMS_ENTRYSIGNATURE_H

#include "mlir/Support/LogicalResult.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::tx {

/// Emits an error on `entry` for each input or result that is not a tx
/// tensor of f32, i32 or i1; fails if there was one.
LogicalResult checkEntrySignature(func::FuncOp entry);

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_ENTRYSIGNATURE_H
