//===- TxIndexOps.cpp - slicing, joining, gathering: shapes and VJPs ------===//
//
// The ops of TxIndexOps.td: the slice rule (a range of each dimension that
// stays inside it for every size of the symbolic dims), result-type
// inference of concat / split / gather, the verifiers of the ops with an
// explicit result type, the contiguity tests that make slices and split
// pieces views, and the vector-Jacobian products: a slice's gradient is the
// zero-padded tx.slice_grad, a concat's the slices of its gradient, a
// split's the concat of its results' gradients (zeros where one has none),
// a gather's the scatter-add tx.gather_grad.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

#include "VerifyHelpers.h"
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::verify;
using namespace mlir::tx::vjp;

namespace {

/// `4, 4`.
std::string listText(ArrayRef<int64_t> values) {
  std::string text;
  for (int64_t value : values)
    text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

SmallVector<int64_t> strideValues(std::optional<ArrayRef<int64_t>> strides,
                                  size_t rank) {
  if (strides)
    return SmallVector<int64_t>(*strides);
  return SmallVector<int64_t>(rank, 1);
}

/// Whether `out` takes all of `in` in dimension `i`.
bool isWhole(const Dim &in, const Dim &out, int64_t start, int64_t stride) {
  return in == out && start == 0 && stride == 1;
}

/// The slice rule of tx.slice (and tx.slice_grad): `out` is `in` sliced by
/// `starts` and `strides`, each range inside its dimension for every size
/// the symbolic dimensions may take.
LogicalResult checkSlice(std::optional<Location> loc, StringRef op,
                         const Shape &in, const Shape &out,
                         ArrayRef<int64_t> starts, ArrayRef<int64_t> strides) {
  size_t rank = in.size();
  if (rank == 0)
    return fail(loc, op + " needs a tensor of rank >= 1");
  if (out.size() != rank)
    return fail(loc, llvm::formatv("{0} must keep the rank {1}, got {2}", op,
                                   rank, formatShape(out)));
  if (starts.size() != rank || strides.size() != rank)
    return fail(loc, llvm::formatv("{0} needs {1} starts and strides, got {2} "
                                   "and {3}",
                                   op, rank, starts.size(), strides.size()));
  for (size_t i = 0; i < rank; ++i) {
    int64_t start = starts[i], stride = strides[i];
    const Dim &from = in[i], &to = out[i];
    if (stride < 1)
      return fail(loc, llvm::formatv("{0} stride {1} of dimension {2} must be "
                                     ">= 1",
                                     op, stride, i));
    if (from.isSymbolic()) {
      bool whole = isWhole(from, to, start, stride);
      bool end =
          !to.isSymbolic() && to.size == 1 && (start == 0 || start == -1);
      if (!whole && !end)
        return fail(
            loc, llvm::formatv("{0} of dimension {1} ({2}, at least 1 at run "
                               "time) must take all of it or its first or last "
                               "element, got start {3} and size {4}",
                               op, i, formatDim(from), start, formatDim(to)));
      continue;
    }
    int64_t size = from.size;
    if (start < 0 || start >= size)
      return fail(loc, llvm::formatv("{0} of dimension {1} (size {2}) starts "
                                     "at {3}, outside it",
                                     op, i, size, start));
    int64_t count = to.upperBound();
    if (count < 1)
      return fail(loc, llvm::formatv("{0} of dimension {1} selects {2} "
                                     "elements",
                                     op, i, count));
    // start + (count - 1) * stride < size, without overflow.
    if ((count - 1) > (size - 1 - start) / stride)
      return fail(
          loc,
          llvm::formatv("{0} of dimension {1} (size {2}) from {3} in steps "
                        "of {4} takes {5}{6} elements, past its end",
                        op, i, size, start, stride,
                        to.isSymbolic() ? formatDim(to) + " <= " : "", count));
  }
  return success();
}

/// Contiguity of a slice: every dimension before the first partial one has
/// size 1, every dimension after it is whole, and the partial one is read
/// with stride 1 (or for one element).
bool isContiguousSlice(const Shape &in, const Shape &out,
                       ArrayRef<int64_t> starts, ArrayRef<int64_t> strides) {
  size_t rank = in.size(), first = 0;
  while (first < rank &&
         isWhole(in[first], out[first], starts[first], strides[first]))
    ++first;
  if (first == rank)
    return true;
  for (size_t i = 0; i < first; ++i)
    if (in[i].isSymbolic() || in[i].size != 1)
      return false;
  bool oneElement = !out[first].isSymbolic() && out[first].size == 1;
  if (strides[first] != 1 && !oneElement)
    return false;
  for (size_t i = first + 1; i < rank; ++i)
    if (!isWhole(in[i], out[i], starts[i], strides[i]))
      return false;
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shape rules and verifiers
//===----------------------------------------------------------------------===//

SmallVector<int64_t> SliceOp::getStrideValues() {
  return strideValues(getStrides(), getStarts().size());
}

LogicalResult SliceOp::verify() {
  auto inType = cast<RankedTensorType>(getInput().getType());
  auto outType = cast<RankedTensorType>(getType());
  if (inType.getElementType() != outType.getElementType())
    return emitOpError("changes the element type from ")
           << formatType(inType) << " to " << formatType(outType);
  return checkSlice(getLoc(), "slice", getShape(inType), getShape(outType),
                    getStarts(), getStrideValues());
}

bool SliceOp::isContiguous() {
  return isContiguousSlice(
      getShape(cast<RankedTensorType>(getInput().getType())),
      getShape(cast<RankedTensorType>(getType())), getStarts(),
      getStrideValues());
}

SmallVector<int64_t> SliceGradOp::getStrideValues() {
  return strideValues(getStrides(), getStarts().size());
}

LogicalResult SliceGradOp::verify() {
  return checkSlice(getLoc(), "slice_grad",
                    getShape(cast<RankedTensorType>(getType())),
                    getShape(cast<RankedTensorType>(getDresult().getType())),
                    getStarts(), getStrideValues());
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return fail(loc, "concat needs at least one input");
  RankedTensorType first;
  Shape result;
  if (failed(readTensor(loc, inputs[0], "concat input", first, result)))
    return failure();
  if (result.empty())
    return fail(loc, "concat needs tensors of rank >= 1");
  int64_t axis;
  if (failed(normalizeAxis(loc, adaptor.getAxis(), result.size(), axis)))
    return failure();
  int64_t total = 0;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    RankedTensorType type;
    Shape shape;
    if (failed(readTensor(loc, input, "concat input", type, shape)))
      return failure();
    if (type.getElementType() != first.getElementType() ||
        shape.size() != result.size())
      return fail(loc,
                  llvm::formatv("concat input {0} is {1}, but input 0 is "
                                "{2}",
                                index, formatType(type), formatType(first)));
    for (size_t i = 0; i < shape.size(); ++i) {
      if (int64_t(i) == axis)
        continue;
      if (shape[i] != result[i])
        return fail(loc, llvm::formatv("concat input {0} is {1}, but input 0 "
                                       "is {2}: dimension {3} differs",
                                       index, formatType(type),
                                       formatType(first), i));
    }
    if (shape[axis].isSymbolic())
      return fail(loc, llvm::formatv("concat along dimension {0}, which is "
                                     "symbolic ({1}) in input {2}",
                                     axis, formatDim(shape[axis]), index));
    total += shape[axis].size; // each at most 2^31 - 1: no overflow
  }
  result[axis] = Dim::fixed(total);
  types.push_back(getTensorType(result, first.getElementType()));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "split input", type, shape)))
    return failure();
  if (shape.empty())
    return fail(loc, "split needs a tensor of rank >= 1");
  int64_t axis;
  if (failed(normalizeAxis(loc, adaptor.getAxis(), shape.size(), axis)))
    return failure();
  if (shape[axis].isSymbolic())
    return fail(loc, llvm::formatv("split along dimension {0}, which is "
                                   "symbolic ({1})",
                                   axis, formatDim(shape[axis])));
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return fail(loc, "split needs at least one size");
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 1)
      return fail(loc, llvm::formatv("split sizes [{0}]: a size must be a "
                                     "positive integer, got {1}",
                                     listText(sizes), size));
    if (size > shape[axis].size - total)
      return fail(loc, llvm::formatv("split sizes [{0}] do not add up to "
                                     "dimension {1} of {2}",
                                     listText(sizes), axis, formatType(type)));
    total += size;
    Shape piece = shape;
    piece[axis] = Dim::fixed(size);
    types.push_back(getTensorType(piece, type.getElementType()));
  }
  if (total != shape[axis].size)
    return fail(loc, llvm::formatv("split sizes [{0}] do not add up to "
                                   "dimension {1} of {2}",
                                   listText(sizes), axis, formatType(type)));
  return success();
}

bool SplitOp::isContiguous() {
  Shape shape = getShape(cast<RankedTensorType>(getInput().getType()));
  int64_t axis = static_cast<int64_t>(getAxis()); // I64Attr reads as uint64_t
  if (axis < 0)
    axis += int64_t(shape.size());
  for (int64_t i = 0; i < axis; ++i)
    if (shape[i].isSymbolic() || shape[i].size != 1)
      return false;
  return true;
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType type, indexType;
  Shape shape, indices;
  if (failed(
          readTensor(loc, adaptor.getInput(), "gather input", type, shape)) ||
      failed(readTensor(loc, adaptor.getIndices(), "gather indices", indexType,
                        indices)))
    return failure();
  if (shape.empty())
    return fail(loc, "gather needs an input of rank >= 1");
  int64_t axis;
  if (failed(normalizeAxis(loc, adaptor.getAxis(), shape.size(), axis)))
    return failure();
  Shape result(shape.begin(), shape.begin() + axis);
  result.append(indices.begin(), indices.end());
  result.append(shape.begin() + axis + 1, shape.end());
  types.push_back(getTensorType(result, type.getElementType()));
  return success();
}

LogicalResult GatherGradOp::verify() {
  Shape indices = getShape(cast<RankedTensorType>(getIndices().getType()));
  Shape dy = getShape(cast<RankedTensorType>(getDresult().getType()));
  auto resultType = cast<RankedTensorType>(getType());
  Shape result = getShape(resultType);
  int64_t axis;
  if (failed(normalizeAxis(getLoc(), static_cast<int64_t>(getAxis()),
                           result.size(), axis)))
    return failure();
  Shape expected(result.begin(), result.begin() + axis);
  expected.append(indices.begin(), indices.end());
  expected.append(result.begin() + axis + 1, result.end());
  if (expected != dy)
    return emitOpError("dresult must be ")
           << formatShape(expected) << " (a gather of "
           << formatType(resultType) << " along axis " << axis << " by "
           << formatShape(indices) << "), got " << formatShape(dy);
  return success();
}

LogicalResult ArangeOp::verify() {
  Shape shape = getShape(cast<RankedTensorType>(getType()));
  if (shape.size() != 1)
    return emitOpError("result must have rank 1, got ") << formatShape(shape);
  int64_t start = getStart(), last = shape[0].upperBound() - 1;
  if (start < std::numeric_limits<int32_t>::min() ||
      start > std::numeric_limits<int32_t>::max() - last)
    return emitOpError("values from ")
           << start << " to " << start << " + " << last << " do not fit in i32";
  return success();
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::buildVJP(OpBuilder &b, ValueRange grads,
                                SmallVectorImpl<Value> &out) {
  out.push_back(b.create<SliceGradOp>(getLoc(), getInput().getType(), grads[0],
                                      getStartsAttr(), getStridesAttr()));
  return success();
}

LogicalResult ConcatOp::buildVJP(OpBuilder &b, ValueRange grads,
                                 SmallVectorImpl<Value> &out) {
  auto type = cast<RankedTensorType>(getType());
  int64_t axis = static_cast<int64_t>(getAxis()); // I64Attr reads as uint64_t
  if (axis < 0)
    axis += type.getRank();
  int64_t offset = 0;
  for (Value input : getInputs()) {
    auto inType = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> starts(type.getRank(), 0);
    starts[axis] = offset;
    offset += inType.getDimSize(axis);
    if (!inType.getElementType().isF32()) {
      out.push_back(nullptr);
      continue;
    }
    out.push_back(b.create<SliceOp>(getLoc(), inType, grads[0],
                                    b.getDenseI64ArrayAttr(starts),
                                    DenseI64ArrayAttr()));
  }
  return success();
}

LogicalResult SplitOp::buildVJP(OpBuilder &b, ValueRange grads,
                                SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value zero;
  SmallVector<Value> pieces;
  for (auto [result, grad] : llvm::zip(getResults(), grads)) {
    if (grad) {
      pieces.push_back(grad);
      continue;
    }
    if (!zero) {
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      zero = b.create<ConstantOp>(loc, DenseElementsAttr::get(scalar, 0.0f));
    }
    pieces.push_back(b.create<BroadcastToOp>(loc, result.getType(), zero));
  }
  out.push_back(
      make<ConcatOp>(b, loc, pieces, {named(b, "axis", getAxisAttr())}));
  return success();
}

LogicalResult GatherOp::buildVJP(OpBuilder &b, ValueRange grads,
                                 SmallVectorImpl<Value> &out) {
  out.push_back(b.create<GatherGradOp>(getLoc(), getInput().getType(),
                                       getIndices(), grads[0], getAxisAttr()));
  out.push_back(nullptr);
  return success();
}
