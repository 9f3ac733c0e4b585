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

#include <optional>
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
/// A dimension as the spec writes it: its symbol (`S`) or its size (`512`).
std::string formatDim(const Dim &dim);
/// `[B, S, 512]`.
std::string formatShape(ArrayRef<Dim> shape);
/// `f32[B, S, 512]`.
std::string formatType(Type type);
/// NumPy broadcasting of two shapes; on failure sets `why` and returns false.
bool broadcastShapes(ArrayRef<Dim> lhs, ArrayRef<Dim> rhs, Shape &result,
                     std::string &why);
/// Upper bound on the number of elements (product of static sizes and
/// bounds), or nullopt when the product does not fit in int64.
std::optional<int64_t> upperBoundNumElements(ArrayRef<Dim> shape);

//===----------------------------------------------------------------------===//
// Size limits
//===----------------------------------------------------------------------===//
//
// What txc accepts is what the generated code and libtxrt can address without
// overflow (docs/spec-language.md, "Size limits"):
//  - a dimension (a static size or a dim's bound) is at most 2^31 - 1, so it
//    is a valid i32 token id bound (embedding vocabularies) and every
//    kernel's dimension arithmetic has 32 bits of headroom in int64;
//  - a tensor has at most 2^40 elements at the upper bounds of its dims
//    (4 TiB of f32), so its byte size, and any index into it, is far from
//    int64's range;
//  - memory planning keeps every arena (and so every offset) at most 2^48
//    bytes (MemoryPlan.h), so `base + offset + index * 4` cannot overflow.

/// The largest static size or dim bound: 2^31 - 1.
constexpr int64_t kMaxDimSize = (int64_t(1) << 31) - 1;
/// The most elements of one tensor (at the upper bounds of its dims): 2^40.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// Checks `shape` against the limits above. Returns "" when it is within
/// them, else why not, as a phrase that follows the tensor's description:
/// "has dimension 1 = 4294967296, over the limit of 2147483647 (2^31 - 1)"
/// or "has up to 16384000000000 elements (B <= 64, S <= 256), over the
/// limit of 1099511627776 (2^40) per tensor".
std::string checkSizeLimits(ArrayRef<Dim> shape);

} // namespace mlir::tx

#endif // TX_DIALECT_TXSHAPE_H
