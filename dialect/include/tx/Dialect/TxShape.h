//===- TxShape.h - shapes with symbolic dimensions ----------------*- C++ -*-===//
//
// A tensor shape as tx sees it: each dimension is static or a symbol with an
// upper bound (from the `#tx.dims` encoding). Shape inference, the frontend
// and the memory planner all reason in these terms.
//
//===----------------------------------------------------------------------===//
#ifndef TX_DIALECT_TXSHAPE_H
#define TX_DIALECT_TXSHAPE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::tx {

/// One dimension: static (`symbol` null) or symbolic with an upper bound.
struct Dim {
  int64_t size = 0;    // ShapedType::kDynamic when symbolic
  StringAttr symbol;   // null when static
  int64_t bound = 0;   // upper bound when symbolic

  static Dim fixed(int64_t size) { return {size, {}, 0}; }
  static Dim symbolic(StringAttr symbol, int64_t bound) {
    return {ShapedType::kDynamic, symbol, bound};
  }
  bool isSymbolic() const { return symbol != nullptr; }
  /// The size when static, else the upper bound.
  int64_t upperBound() const { return isSymbolic() ? bound : size; }
  bool operator==(const Dim &other) const {
    return isSymbolic() ? symbol == other.symbol
                        : !other.isSymbolic() && size == other.size;
  }
  bool operator!=(const Dim &other) const { return !(*this == other); }
};

using Shape = SmallVector<Dim, 4>;

/// The dimensions of a well-formed tensor type.
Shape getShape(RankedTensorType type);
/// A tensor type with `shape` and `elementType`, encoding symbolic dims.
RankedTensorType getTensorType(ArrayRef<Dim> shape, Type elementType);
/// `[B, S, 512]`.
std::string formatShape(ArrayRef<Dim> shape);
/// `f32[B, S, 512]`.
std::string formatType(Type type);
/// NumPy broadcasting of two shapes; on failure sets `why` and returns false.
bool broadcastShapes(ArrayRef<Dim> lhs, ArrayRef<Dim> rhs, Shape &result,
                     std::string &why);
/// Upper bound on the number of elements (product of static sizes and
/// bounds).
int64_t upperBoundNumElements(ArrayRef<Dim> shape);

} // namespace mlir::tx

#endif // TX_DIALECT_TXSHAPE_H
