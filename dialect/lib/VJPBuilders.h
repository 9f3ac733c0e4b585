//===- VJPBuilders.h - small builders shared by the VJP rules ---*- C++ -*-===//
//
// Used by TxVJP.cpp, TxMathOps.cpp and TxIndexOps.cpp, which build gradient
// ops in their buildVJP methods. Private to dialect/lib.
//
//===----------------------------------------------------------------------===//
#ifndef TX_DIALECT_LIB_VJPBUILDERS_H
#define TX_DIALECT_LIB_VJPBUILDERS_H

#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::tx::vjp {

/// Builds a tx op with inferred result types; returns its first result.
template <typename Op>
inline Value make(OpBuilder &b, Location loc, ValueRange operands,
                  ArrayRef<NamedAttribute> attrs = {}) {
  return b.create<Op>(loc, operands, attrs)->getResult(0);
}

inline NamedAttribute named(OpBuilder &b, StringRef name, Attribute value) {
  return b.getNamedAttr(name, value);
}

/// `grad` summed down to `type` (undoing broadcasting); `grad` itself when
/// it already has that type.
inline Value sumTo(OpBuilder &b, Location loc, Value grad, Type type) {
  if (grad.getType() == type)
    return grad;
  return b.create<SumToOp>(loc, type, grad);
}

} // namespace mlir::tx::vjp

#endif // TX_DIALECT_LIB_VJPBUILDERS_H
