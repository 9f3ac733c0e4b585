//===- TxShape.cpp - shapes with symbolic dimensions ----------------------===//
//
// Conversions between tensor types and `Shape`, formatting for diagnostics,
// NumPy broadcasting over symbolic dimensions, and the size limits every
// tensor must keep (checked arithmetic: sizes never wrap).
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxShape.h"
#include "tx/Dialect/TxDialect.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tx;

Shape mlir::tx::getShape(RankedTensorType type) {
  Shape shape;
  auto dims = dyn_cast_or_null<DimsAttr>(type.getEncoding());
  unsigned nextSymbol = 0;
  for (int64_t size : type.getShape()) {
    if (!ShapedType::isDynamic(size)) {
      shape.push_back(Dim::fixed(size));
      continue;
    }
    if (dims && nextSymbol < dims.getSymbols().size()) {
      shape.push_back(Dim::symbolic(dims.getSymbols()[nextSymbol],
                                    dims.getBounds()[nextSymbol]));
    } else {
      // Not well-formed; callers verify first. Keep a placeholder symbol.
      shape.push_back(
          Dim::symbolic(StringAttr::get(type.getContext(), "?"), 1));
    }
    ++nextSymbol;
  }
  return shape;
}

RankedTensorType mlir::tx::getTensorType(ArrayRef<Dim> shape,
                                         Type elementType) {
  SmallVector<int64_t> sizes;
  SmallVector<StringAttr> symbols;
  SmallVector<int64_t> bounds;
  for (const Dim &dim : shape) {
    sizes.push_back(dim.size);
    if (dim.isSymbolic()) {
      symbols.push_back(dim.symbol);
      bounds.push_back(dim.bound);
    }
  }
  Attribute encoding;
  if (!symbols.empty())
    encoding = DimsAttr::get(elementType.getContext(), symbols, bounds);
  return RankedTensorType::get(sizes, elementType, encoding);
}

std::string mlir::tx::formatDim(const Dim &dim) {
  return dim.isSymbolic() ? dim.symbol.getValue().str()
                          : std::to_string(dim.size);
}

std::string mlir::tx::formatShape(ArrayRef<Dim> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os,
                        [&](const Dim &dim) { os << formatDim(dim); });
  os << "]";
  return text;
}

std::string mlir::tx::formatType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  }
  Type element = tensor.getElementType();
  std::string prefix = element.isF32()         ? "f32"
                       : element.isBF16()      ? "bf16"
                       : element.isInteger(32) ? "i32"
                       : element.isInteger(1)  ? "bool"
                                               : "?";
  return prefix + formatShape(getShape(tensor));
}

bool mlir::tx::broadcastShapes(ArrayRef<Dim> lhs, ArrayRef<Dim> rhs,
                               Shape &result, std::string &why) {
  size_t rank = std::max(lhs.size(), rhs.size());
  result.assign(rank, Dim::fixed(1));
  for (size_t i = 0; i < rank; ++i) {
    // Align at the last dimension.
    const Dim *a = i < lhs.size() ? &lhs[lhs.size() - 1 - i] : nullptr;
    const Dim *b = i < rhs.size() ? &rhs[rhs.size() - 1 - i] : nullptr;
    Dim &out = result[rank - 1 - i];
    if (!a || !b) {
      out = a ? *a : *b;
    } else if (*a == *b) {
      out = *a;
    } else if (!a->isSymbolic() && a->size == 1) {
      out = *b;
    } else if (!b->isSymbolic() && b->size == 1) {
      out = *a;
    } else {
      llvm::raw_string_ostream os(why);
      os << "shapes " << formatShape(lhs) << " and " << formatShape(rhs)
         << " do not broadcast: dimension " << (rank - 1 - i) << " is "
         << formatShape(*a).substr(1, formatShape(*a).size() - 2) << " vs "
         << formatShape(*b).substr(1, formatShape(*b).size() - 2);
      return false;
    }
  }
  return true;
}

std::optional<int64_t> mlir::tx::upperBoundNumElements(ArrayRef<Dim> shape) {
  int64_t count = 1;
  for (const Dim &dim : shape) {
    std::optional<int64_t> product = llvm::checkedMul(count, dim.upperBound());
    if (!product)
      return std::nullopt;
    count = *product;
  }
  return count;
}

std::string mlir::tx::checkSizeLimits(ArrayRef<Dim> shape) {
  std::string why;
  llvm::raw_string_ostream os(why);
  for (auto [index, dim] : llvm::enumerate(shape)) {
    int64_t size = dim.upperBound();
    if (size >= 0 && size <= kMaxDimSize)
      continue;
    os << "has dimension " << index << " = ";
    if (dim.isSymbolic())
      os << dim.symbol.getValue() << " <= ";
    os << size << ", ";
    if (size < 0)
      os << "not a size";
    else
      os << "over the limit of " << kMaxDimSize << " (2^31 - 1)";
    return why;
  }
  std::optional<int64_t> count = upperBoundNumElements(shape);
  if (count && *count <= kMaxTensorElements)
    return why;
  os << "has ";
  if (count)
    os << "up to " << *count;
  else
    os << "more than 2^63";
  os << " elements";
  SmallVector<StringAttr> named; // each symbol once, in order
  for (const Dim &dim : shape) {
    if (!dim.isSymbolic() || llvm::is_contained(named, dim.symbol))
      continue;
    os << (named.empty() ? " (" : ", ") << dim.symbol.getValue() << " <= "
       << dim.bound;
    named.push_back(dim.symbol);
  }
  if (!named.empty())
    os << ")";
  os << ", over the limit of " << kMaxTensorElements << " (2^40) per tensor";
  return why;
}
