//===- VerifyHelpers.h - helpers shared by the ops' shape rules -*- C++ -*-===//
//
// Used by the result-type inference and verifiers of TxOps.cpp,
// TxIndexOps.cpp, TxMathOps.cpp and TxGradOps.cpp: one definition each, so
// the files also compile together in a unity batch. Private to dialect/lib.
//
//===----------------------------------------------------------------------===//
#ifndef TX_DIALECT_LIB_VERIFYHELPERS_H
#define TX_DIALECT_LIB_VERIFYHELPERS_H

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <string>

namespace mlir::tx::verify {

/// Reports `message` at `loc` when there is one (the frontend's inference
/// passes none); always failure().
inline LogicalResult fail(std::optional<Location> loc, const Twine &message) {
  return emitOptionalError(loc, message);
}

/// Reads `value`'s type as a well-formed tensor with its shape.
inline LogicalResult readTensor(std::optional<Location> loc, Value value,
                                StringRef name, RankedTensorType &type,
                                Shape &shape) {
  type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  if (!type || !isWellFormedTensor(type))
    return fail(loc, Twine(name) +
                         " must be a ranked tensor with #tx.dims for its "
                         "dynamic dimensions");
  shape = getShape(type);
  return success();
}

/// Normalizes a possibly negative axis; fails when out of range.
inline LogicalResult normalizeAxis(std::optional<Location> loc, int64_t axis,
                                   int64_t rank, int64_t &result) {
  result = axis < 0 ? axis + rank : axis;
  if (result < 0 || result >= rank)
    return fail(loc, llvm::formatv("axis {0} is out of range for rank {1}",
                                   axis, rank));
  return success();
}

/// `0.1`, `1.5`, `1e-09`: a double as a person writes it.
inline std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

} // namespace mlir::tx::verify

#endif // TX_DIALECT_LIB_VERIFYHELPERS_H
