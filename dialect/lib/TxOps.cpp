//===- TxOps.cpp - tx op shape rules and verifiers ------------------------===//
//
// Result-type inference for every tx op (the shape rules written in each op's
// description) and the verifiers that are not about result shapes. Inference
// reports through the optional location, so the frontend gets the same
// messages as `tx-opt` does when it verifies IR.
//
//===----------------------------------------------------------------------===//
#include "VerifyHelpers.h"
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::verify;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

LogicalResult checkRate(std::optional<Location> loc, StringRef what,
                        double rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    return fail(loc, what + " must be in [0, 1), got " + number(rate));
  return success();
}

/// Layer-norm operand rules shared by layer_norm and add_layer_norm.
LogicalResult checkLayerNorm(std::optional<Location> loc, const std::string &op,
                             const Shape &input, Value weight, Value bias,
                             double epsilon) {
  if (input.empty())
    return fail(loc, op + " input must have rank >= 1");
  const Dim &last = input.back();
  if (last.isSymbolic())
    return fail(loc, op + " normalizes the last dimension, which must be "
                          "static, got " +
                         formatShape(input));
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, weight, "weight", type, shape)))
    return failure();
  if (shape.size() != 1 || shape[0] != last)
    return fail(loc, "weight must be [" + formatDim(last) + "], got " +
                         formatShape(shape));
  if (bias && failed(readTensor(loc, bias, "bias", type, shape)))
    return failure();
  if (bias && (shape.size() != 1 || shape[0] != last))
    return fail(loc, "bias must be [" + formatDim(last) + "], got " +
                         formatShape(shape));
  if (!(epsilon > 0.0))
    return fail(loc, "epsilon must be positive, got " + number(epsilon));
  return success();
}

} // namespace

LogicalResult mlir::tx::inferBroadcastResult(std::optional<Location> loc,
                                             Type lhs, Type rhs,
                                             Type resultElement,
                                             SmallVectorImpl<Type> &types) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs);
  auto rhsType = dyn_cast<RankedTensorType>(rhs);
  if (!lhsType || !rhsType || !isWellFormedTensor(lhsType) ||
      !isWellFormedTensor(rhsType))
    return fail(loc, "operands must be ranked tensors with #tx.dims for "
                     "their dynamic dimensions");
  if (lhsType.getElementType() != rhsType.getElementType())
    return fail(loc, "operand element types differ: " + formatType(lhsType) +
                         " vs " + formatType(rhsType));
  Shape result;
  std::string why;
  if (!broadcastShapes(getShape(lhsType), getShape(rhsType), result, why))
    return fail(loc, why);
  types.push_back(getTensorType(
      result, resultElement ? resultElement : lhsType.getElementType()));
  return success();
}

LogicalResult mlir::tx::inferReduceResult(std::optional<Location> loc,
                                          Type input, ArrayRef<int64_t> axes,
                                          bool keepdim,
                                          SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type || !isWellFormedTensor(type))
    return fail(loc, "input must be a ranked tensor with #tx.dims");
  Shape shape = getShape(type);
  if (axes.empty())
    return fail(loc, "axes must name at least one axis");
  llvm::SmallSet<int64_t, 4> reduced;
  for (int64_t axis : axes) {
    int64_t normalized;
    if (failed(normalizeAxis(loc, axis, shape.size(), normalized)))
      return failure();
    if (!reduced.insert(normalized).second)
      return fail(loc, llvm::formatv("axis {0} is reduced twice", axis));
  }
  Shape result;
  for (int64_t i = 0, e = shape.size(); i < e; ++i) {
    if (!reduced.count(i))
      result.push_back(shape[i]);
    else if (keepdim)
      result.push_back(Dim::fixed(1));
  }
  types.push_back(getTensorType(result, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Constants and parameters
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ParameterOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return emitOpError("type must be a static f32 tensor, got ") << getType();
  if (type.getRank() == 0)
    return emitOpError("parameter must have rank >= 1");
  if (std::optional<APFloat> std = getStd()) {
    if (getInit() != Init::normal)
      return emitOpError("std is the normal initializer's, not ")
             << stringifyInit(getInit()) << "'s";
    double value = std->convertToDouble();
    if (!(value > 0.0) || !std::isfinite(value))
      return emitOpError("std must be positive and finite, got ") << value;
  }
  return success();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto parameter =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!parameter)
    return emitOpError("refers to no tx.parameter named ") << getNameAttr();
  if (parameter.getType() != getType())
    return emitOpError("result type ")
           << getType() << " differs from parameter " << getNameAttr()
           << " of type " << parameter.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings and masks
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType idsType, tableType;
  Shape ids, table;
  if (failed(readTensor(loc, adaptor.getIds(), "ids", idsType, ids)) ||
      failed(readTensor(loc, adaptor.getTable(), "table", tableType, table)))
    return failure();
  if (!idsType.getElementType().isInteger(32))
    return fail(loc, "ids must be i32, got " + formatType(idsType));
  if (table.size() != 2 || table[0].isSymbolic() || table[1].isSymbolic())
    return fail(loc, "table must be a static [vocab, dim] matrix, got " +
                         formatShape(table));
  // No id selects a row of an empty table (and its gradient, an
  // embedding_grad of vocab 0, cannot be built: tx-autodiff aborted).
  if (table[0].size <= 0)
    return fail(loc, "table has no rows (" + formatShape(table) +
                         "): no id can select one");
  Shape result = ids;
  result.push_back(table[1]);
  types.push_back(getTensorType(result, tableType.getElementType()));
  return success();
}

LogicalResult PositionalEncodingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)))
    return failure();
  if (shape.size() < 2)
    return fail(loc, "positional_encoding input must be [..., T, d], got " +
                         formatShape(shape));
  const Dim &d = shape.back();
  if (d.isSymbolic() || d.size % 2 != 0)
    return fail(loc, "positional_encoding needs a static, even model "
                     "dimension, got " +
                         formatDim(d));
  types.push_back(
      getTensorType({shape[shape.size() - 2], d}, type.getElementType()));
  return success();
}

LogicalResult RopeOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)))
    return failure();
  if (shape.size() < 2 || shape.back().isSymbolic())
    return fail(loc, "rope takes [..., T, heads * d] with a static last "
                     "dimension, got " +
                         formatShape(shape));
  int64_t heads = int64_t(adaptor.getHeads());
  int64_t width = shape.back().size;
  // Absent (the default, 0: the whole head) until the op is built.
  IntegerAttr rotaryAttr = adaptor.getRotaryDimsAttr();
  const bool partial = rotaryAttr && rotaryAttr.getInt() != 0;
  if (heads < 1 || width % heads != 0 || (!partial && (width / heads) % 2 != 0))
    return fail(loc, "rope needs heads >= 1 that divide the last dimension " +
                         std::to_string(width) +
                         " into even head sizes, got heads = " +
                         std::to_string(heads));
  double base = adaptor.getBase().convertToDouble();
  if (!(base > 1.0) || !std::isfinite(base))
    return fail(loc, "rope base must be a finite number > 1, got " +
                         number(base));
  int64_t headDim = width / heads;
  int64_t rotated = rotaryAttr ? rotaryAttr.getInt() : 0;
  if (rotated < 0 || rotated > headDim || rotated % 2 != 0)
    return fail(loc, "rope rotary_dims must be an even number of features "
                     "from 2 to the head size " +
                         std::to_string(headDim) + " (0: all), got " +
                         std::to_string(rotated));
  if (rotated == 0)
    rotated = headDim;
  if (Value angles = adaptor.getAngles()) {
    RankedTensorType anglesType;
    Shape table;
    if (failed(readTensor(loc, angles, "angles", anglesType, table)))
      return failure();
    Shape want = {shape[shape.size() - 2], Dim::fixed(rotated / 2)};
    if (table != want)
      return fail(loc, "rope angles must be " + formatShape(want) +
                           " (positions x half the rotated features), got " +
                           formatShape(table));
  }
  types.push_back(type);
  return success();
}

int64_t RopeOp::getRotatedDims() {
  int64_t headDim =
      cast<RankedTensorType>(getInput().getType()).getShape().back() /
      int64_t(getHeads());
  return getRotaryDims() == 0 ? headDim : int64_t(getRotaryDims());
}

LogicalResult PaddingMaskOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getIds(), "ids", type, shape)))
    return failure();
  if (shape.size() != 2)
    return fail(loc, "padding_mask takes ids [B, S], got " +
                         formatShape(shape));
  int64_t pad = int64_t(adaptor.getPad());
  if (pad < std::numeric_limits<int32_t>::min() ||
      pad > std::numeric_limits<int32_t>::max())
    return fail(loc, "padding_mask pad " + std::to_string(pad) +
                         " is not an i32 id");
  types.push_back(getTensorType(
      {shape[0], Dim::fixed(1), Dim::fixed(1), shape[1]},
      IntegerType::get(context, 1)));
  return success();
}

LogicalResult CausalMaskOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getIds(), "ids", type, shape)))
    return failure();
  if (shape.empty())
    return fail(loc, "causal_mask needs a tensor of rank >= 1");
  types.push_back(getTensorType({shape.back(), shape.back()},
                                IntegerType::get(context, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult CmpOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferBroadcastResult(loc, adaptor.getLhs().getType(),
                              adaptor.getRhs().getType(),
                              IntegerType::get(context, 1), types);
}

LogicalResult NotOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult StopGradientOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location>,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult MaskedFillOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType inputType, maskType;
  Shape input, mask;
  if (failed(readTensor(loc, adaptor.getInput(), "input", inputType, input)) ||
      failed(readTensor(loc, adaptor.getMask(), "mask", maskType, mask)))
    return failure();
  Shape result;
  std::string why;
  if (!broadcastShapes(input, mask, result, why))
    return fail(loc, "mask does not broadcast to the input: " + why);
  if (result != input)
    return fail(loc, "mask " + formatShape(mask) + " would grow the input " +
                         formatShape(input) + " to " + formatShape(result) +
                         " (masked_fill keeps the input's shape; `where(mask, "
                         "value, x)` broadcasts both)");
  types.push_back(inputType);
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  if (failed(checkRate(loc, "dropout rate",
                       adaptor.getRate().convertToDouble())))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType lhsType, rhsType;
  Shape lhs, rhs;
  if (failed(readTensor(loc, adaptor.getLhs(), "lhs", lhsType, lhs)) ||
      failed(readTensor(loc, adaptor.getRhs(), "rhs", rhsType, rhs)))
    return failure();
  if (lhs.size() < 2 || rhs.size() < 2)
    return fail(loc, "matmul operands must have rank >= 2, got " +
                         formatShape(lhs) + " and " + formatShape(rhs));
  if (adaptor.getTransposeLhs())
    std::swap(lhs[lhs.size() - 1], lhs[lhs.size() - 2]);
  if (adaptor.getTransposeRhs())
    std::swap(rhs[rhs.size() - 1], rhs[rhs.size() - 2]);
  const Dim &k1 = lhs.back(), &k2 = rhs[rhs.size() - 2];
  if (k1 != k2)
    return fail(loc, "matmul contracts " + formatShape(lhs) + " with " +
                         formatShape(rhs) + ": inner dimensions " +
                         formatDim(k1) + " and " + formatDim(k2) + " differ");
  Shape batch;
  std::string why;
  if (!broadcastShapes(ArrayRef<Dim>(lhs).drop_back(2),
                       ArrayRef<Dim>(rhs).drop_back(2), batch, why))
    return fail(loc, "matmul batch dimensions: " + why);
  batch.push_back(lhs[lhs.size() - 2]);
  batch.push_back(rhs.back());
  types.push_back(getTensorType(batch, lhsType.getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType inputType, weightType, type;
  Shape input, weight, shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", inputType, input)) ||
      failed(readTensor(loc, adaptor.getWeight(), "weight", weightType,
                        weight)))
    return failure();
  if (input.empty())
    return fail(loc, "linear input must have rank >= 1");
  if (weight.size() != 2 || weight[0].isSymbolic() || weight[1].isSymbolic())
    return fail(loc, "linear weight must be a static [out, in] matrix, got " +
                         formatShape(weight));
  if (input.back() != weight[1])
    return fail(loc, "linear input " + formatShape(input) + " has " +
                         formatDim(input.back()) + " features but weight " +
                         formatShape(weight) + " expects " +
                         formatDim(weight[1]));
  if (inputType.getElementType() != weightType.getElementType())
    return fail(loc, "linear input " + formatType(inputType) +
                         " and weight " + formatType(weightType) +
                         " must have the same element type");
  // bf16 operands accumulate and write f32 (docs/precision.md).
  Shape result = input;
  result.back() = weight[0];
  RankedTensorType resultType =
      getTensorType(result, Float32Type::get(inputType.getContext()));
  if (Value bias = adaptor.getBias()) {
    if (failed(readTensor(loc, bias, "bias", type, shape)))
      return failure();
    if (shape.size() != 1 || shape[0] != weight[0])
      return fail(loc, "linear bias must be [" + formatDim(weight[0]) +
                           "], got " + formatShape(shape));
  }
  if (Value gate = adaptor.getGate()) {
    if (gate.getType() != resultType)
      return fail(loc, "linear gate must have the result's type " +
                           formatType(resultType) + ", got " +
                           formatType(gate.getType()));
  }
  if (Value residual = adaptor.getResidual()) {
    if (residual.getType() != resultType)
      return fail(loc, "linear residual must have the result's type " +
                           formatType(resultType) + ", got " +
                           formatType(residual.getType()));
  }
  types.push_back(resultType);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferAxisPreserving(std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  int64_t axis;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)) ||
      failed(normalizeAxis(loc, adaptor.getAxis(), shape.size(), axis)))
    return failure();
  types.push_back(type);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferAxisPreserving(loc, adaptor, types);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferAxisPreserving(loc, adaptor, types);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)) ||
      failed(checkLayerNorm(loc, "layer_norm", shape, adaptor.getWeight(),
                            adaptor.getBias(),
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  types.push_back(type);
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)) ||
      failed(checkLayerNorm(loc, "rms_norm", shape, adaptor.getWeight(), nullptr,
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  types.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getType());
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("changes the element type from ")
           << formatType(inputType) << " to " << formatType(resultType);
  Shape input = getShape(inputType), result = getShape(resultType);
  // Symbolic dimensions must carry over one for one.
  auto symbols = [](const Shape &shape) {
    SmallVector<StringRef> names;
    for (const Dim &dim : shape)
      if (dim.isSymbolic())
        names.push_back(dim.symbol.getValue());
    llvm::sort(names);
    return names;
  };
  if (symbols(input) != symbols(result))
    return emitOpError("must keep the symbolic dimensions of ")
           << formatShape(input) << ", got " << formatShape(result);
  // The static part of each element count (symbolic dims match one for
  // one), checked for overflow.
  auto staticCount = [](const Shape &shape) -> std::optional<int64_t> {
    int64_t count = 1;
    for (const Dim &dim : shape)
      if (!dim.isSymbolic()) {
        std::optional<int64_t> next = llvm::checkedMul(count, dim.size);
        if (!next)
          return std::nullopt;
        count = *next;
      }
    return count;
  };
  std::optional<int64_t> inCount = staticCount(input),
                         outCount = staticCount(result);
  if (!inCount || !outCount)
    return emitOpError("has more elements than int64 can count: ")
           << formatShape(input) << " vs " << formatShape(result);
  if (*inCount != *outCount)
    return emitOpError("changes the number of elements: ")
           << formatShape(input) << " vs " << formatShape(result);
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)))
    return failure();
  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  if (permutation.size() != shape.size())
    return fail(loc, llvm::formatv("permutation has {0} entries for rank {1}",
                                   permutation.size(), shape.size()));
  SmallVector<bool> seen(shape.size(), false);
  Shape result;
  for (int64_t index : permutation) {
    if (index < 0 || index >= static_cast<int64_t>(shape.size()) ||
        seen[index])
      return fail(loc, "permutation must list each of 0.." +
                           std::to_string(shape.size() - 1) + " once");
    seen[index] = true;
    result.push_back(shape[index]);
  }
  types.push_back(getTensorType(result, type.getElementType()));
  return success();
}

LogicalResult SplitHeadsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)))
    return failure();
  int64_t heads = adaptor.getHeads();
  if (shape.size() != 3)
    return fail(loc, "split_heads takes [B, T, d], got " + formatShape(shape));
  if (heads <= 0)
    return fail(loc, llvm::formatv("heads must be positive, got {0}", heads));
  const Dim &d = shape[2];
  if (d.isSymbolic() || d.size % heads != 0)
    return fail(loc, llvm::formatv("model dimension {0} is not divisible by "
                                   "{1} heads",
                                   formatDim(d), heads));
  types.push_back(getTensorType(
      {shape[0], Dim::fixed(heads), shape[1], Dim::fixed(d.size / heads)},
      type.getElementType()));
  return success();
}

LogicalResult MergeHeadsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getInput(), "input", type, shape)))
    return failure();
  if (shape.size() != 4 || shape[1].isSymbolic() || shape[3].isSymbolic())
    return fail(loc, "merge_heads takes [B, h, T, d_k] with static h and "
                     "d_k, got " + formatShape(shape));
  std::optional<int64_t> width = llvm::checkedMul(shape[1].size, shape[3].size);
  if (!width)
    return fail(loc, "merge_heads of " + formatShape(shape) +
                         ": heads * d_k overflows int64");
  types.push_back(getTensorType({shape[0], shape[2], Dim::fixed(*width)},
                                type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  RankedTensorType logitsType, targetsType;
  Shape logits, targets;
  if (failed(readTensor(loc, adaptor.getLogits(), "logits", logitsType,
                        logits)) ||
      failed(readTensor(loc, adaptor.getTargets(), "targets", targetsType,
                        targets)))
    return failure();
  if (logits.empty() ||
      ArrayRef<Dim>(logits).drop_back() != ArrayRef<Dim>(targets))
    return fail(loc, "cross_entropy targets must be the logits' shape without "
                     "the class dimension: logits " +
                         formatShape(logits) + ", targets " +
                         formatShape(targets));
  if (failed(checkRate(loc, "label_smoothing",
                       adaptor.getLabelSmoothing().convertToDouble())))
    return failure();
  int64_t ignore = adaptor.getIgnoreIndex();
  if (ignore < std::numeric_limits<int32_t>::min() ||
      ignore > std::numeric_limits<int32_t>::max())
    return fail(loc, "cross_entropy ignore_index " + std::to_string(ignore) +
                         " is not an i32 id");
  types.push_back(getTensorType({}, logitsType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Fused ops
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType qType, kType, vType, mType;
  Shape q, k, v, m;
  if (failed(readTensor(loc, adaptor.getQuery(), "query", qType, q)) ||
      failed(readTensor(loc, adaptor.getKey(), "key", kType, k)) ||
      failed(readTensor(loc, adaptor.getValue(), "value", vType, v)))
    return failure();
  if (q.size() < 2 || q.size() != k.size() || q.size() != v.size())
    return fail(loc, "attention query, key and value must have the same rank "
                     ">= 2, got " +
                         formatShape(q) + ", " + formatShape(k) + ", " +
                         formatShape(v));
  size_t rank = q.size();
  ArrayRef<Dim> batch(q.begin(), q.end() - 2);
  // Keys and values: the query's leading dims, but their heads (the dim
  // before the length) may divide the query's.
  bool sameLeading = ArrayRef<Dim>(k).drop_back(2) == ArrayRef<Dim>(v).drop_back(2);
  for (size_t i = 0; sameLeading && i + 2 < rank; ++i) {
    if (k[i] == q[i])
      continue;
    bool headsDivide = i + 3 == rank && !k[i].isSymbolic() &&
                       !q[i].isSymbolic() && k[i].size > 0 &&
                       q[i].size % k[i].size == 0;
    sameLeading = headsDivide;
  }
  if (!sameLeading)
    return fail(loc, "attention leading dimensions differ: " +
                         formatShape(q) + ", " + formatShape(k) + ", " +
                         formatShape(v) +
                         " (key and value must have the query's leading "
                         "dimensions, or static heads that divide its heads)");
  if (q[rank - 1] != k[rank - 1])
    return fail(loc, "attention query and key feature dimensions differ: " +
                         formatDim(q[rank - 1]) + " vs " +
                         formatDim(k[rank - 1]));
  if (k[rank - 2] != v[rank - 2])
    return fail(loc, "attention key and value lengths differ: " +
                         formatDim(k[rank - 2]) + " vs " +
                         formatDim(v[rank - 2]));
  // The kernels (txrt_attention_*, CPU and CUDA) take one head size: a
  // narrower value was read and written as wide as the query, past its
  // buffers, and its results were wrong without a word.
  if (v[rank - 1] != q[rank - 1])
    return fail(
        loc, "attention value feature dimension " + formatDim(v[rank - 1]) +
                 " differs from the query and key's " + formatDim(q[rank - 1]) +
                 " (the attention kernels take one head size)");
  Shape scores(batch.begin(), batch.end());
  scores.push_back(q[rank - 2]);
  scores.push_back(k[rank - 2]);
  if (Value mask = adaptor.getMask()) {
    if (failed(readTensor(loc, mask, "mask", mType, m)))
      return failure();
    Shape merged;
    std::string why;
    if (!broadcastShapes(scores, m, merged, why) || merged != scores)
      return fail(loc, "attention mask " + formatShape(m) +
                           " does not broadcast to the scores " +
                           formatShape(scores));
  }
  if (failed(checkRate(loc, "attention dropout",
                       adaptor.getDropout().convertToDouble())))
    return failure();
  double scale = adaptor.getScale().convertToDouble();
  if (!std::isfinite(scale) || scale == 0.0)
    return fail(loc, "attention scale must be finite and non-zero, got " +
                         number(scale));
  // tx-precision marks the attention ops whose block products run in bf16
  // (txrt_attention_fwd_bf16 / _bwd_bf16); a unit flag, nothing else.
  if (Attribute bf16 = adaptor.getAttributes().get("bf16");
      bf16 && !isa<UnitAttr>(bf16))
    return fail(loc, "attention bf16 must be a unit attribute (it marks "
                     "bf16 block products)");
  if (FloatAttr fill = adaptor.getFillAttr()) {
    double value = fill.getValueAsDouble();
    if (std::isnan(value) || value == std::numeric_limits<double>::infinity())
      return fail(loc, "attention fill must be a number or -inf, got " +
                           number(value));
  }
  // tx-attention-layout and the kernels take heads: [B, h, T, d_k] with
  // static h and d_k (the spec's attention builtin and tx-fuse-attention
  // make no other); another rank verified, and the layout pass then
  // aborted on its merge_heads.
  auto staticPositive = [](const Dim &dim) {
    return !dim.isSymbolic() && dim.size >= 1;
  };
  if (rank != 4 || !staticPositive(q[1]) || !staticPositive(k[1]) ||
      !staticPositive(q[3]))
    return fail(loc, "attention takes [B, h, T, d_k] (rank 4) with static "
                     "heads h >= 1 and head size d_k >= 1, got " +
                         formatShape(q) + ", " + formatShape(k) + ", " +
                         formatShape(v));
  Shape result(batch.begin(), batch.end());
  result.push_back(q[rank - 2]);
  result.push_back(v[rank - 1]);
  types.push_back(getTensorType(result, qType.getElementType()));
  return success();
}

LogicalResult AddLayerNormOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getLhs(), "lhs", type, shape)))
    return failure();
  if (adaptor.getRhs().getType() != type)
    return fail(loc, "add_layer_norm operands must have the same type, got " +
                         formatType(type) + " and " +
                         formatType(adaptor.getRhs().getType()));
  if (failed(checkLayerNorm(loc, "layer_norm", shape, adaptor.getWeight(),
                            adaptor.getBias(),
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  types.push_back(type);
  types.push_back(type);
  return success();
}

LogicalResult AddRmsNormOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType type;
  Shape shape;
  if (failed(readTensor(loc, adaptor.getLhs(), "lhs", type, shape)))
    return failure();
  if (adaptor.getRhs().getType() != type)
    return fail(loc, "add_rms_norm operands must have the same type, got " +
                         formatType(type) + " and " +
                         formatType(adaptor.getRhs().getType()));
  if (failed(checkLayerNorm(loc, "rms_norm", shape, adaptor.getWeight(), nullptr,
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  types.push_back(type);
  types.push_back(type);
  return success();
}

#define GET_OP_CLASSES
#include "tx/Dialect/TxOps.cpp.inc"

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.getShape() != result.getShape() ||
      input.getEncoding() != result.getEncoding())
    return emitOpError() << "result " << formatType(result)
                         << " must have the input's shape "
                         << formatType(input);
  if (input.getElementType() == result.getElementType())
    return emitOpError() << "casts between f32 and bf16; input and result "
                            "are both "
                         << input.getElementType();
  if (getByProducer()) {
    if (!result.getElementType().isBF16())
      return emitOpError() << "by_producer rounds to bf16; this cast widens "
                           << formatType(input);
    auto producer = dyn_cast<OpResult>(getInput());
    if (!producer || producer.getResultNumber() != 0 ||
        !isa<AddLayerNormOp, RmsNormOp, AddRmsNormOp>(producer.getOwner()))
      return emitOpError()
             << "by_producer needs the first result of a tx.add_layer_norm, "
                "tx.rms_norm or tx.add_rms_norm (the ops that can write a "
                "bf16 copy of it)";
  }
  return success();
}
