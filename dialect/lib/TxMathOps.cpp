//===- TxMathOps.cpp - tensor math: shape rules and VJPs ------------------===//
//
// The ops of TxMathOps.td: result-type inference and verifiers, then their
// vector-Jacobian products. The unary functions differentiate through one
// tx.unary_grad each (PyTorch's formulas, from the forward's output where
// that is how PyTorch writes them: exp, sqrt, rsqrt, tanh, sigmoid); the
// selections (minimum, maximum, clamp, where, reduce_max) through masks made
// of forward ops, with PyTorch's rules at ties. Gradients have their
// operand's type: broadcasting is undone with tx.sum_to.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

#include "VerifyHelpers.h"
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::verify;
using namespace mlir::tx::vjp;

namespace {

/// Checks that `value` is a well-formed tensor of `element` type.
LogicalResult checkTensor(std::optional<Location> loc, Value value,
                          StringRef name, Type element) {
  auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  if (!type || !isWellFormedTensor(type))
    return fail(loc, Twine(name) + " must be a ranked tensor with #tx.dims "
                                   "for its dynamic dimensions");
  if (type.getElementType() != element)
    return fail(loc, Twine(name) + " must have element type " +
                         formatType(element) + ", got " + formatType(type));
  return success();
}

//===----------------------------------------------------------------------===//
// VJP builders
//===----------------------------------------------------------------------===//

/// A 0-d f32 constant.
Value scalar(OpBuilder &b, Location loc, float value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, value));
}

Value compare(OpBuilder &b, Location loc, CmpPredicate predicate, Value lhs,
              Value rhs) {
  return make<CmpOp>(b, loc, {lhs, rhs},
                     {named(b, "predicate",
                            CmpPredicateAttr::get(b.getContext(), predicate))});
}

/// `dy` where `keep` holds, 0 elsewhere (PyTorch `grad.masked_fill(!keep, 0)`).
Value keepWhere(OpBuilder &b, Location loc, Value keep, Value dy) {
  return make<WhereOp>(b, loc, {keep, dy, scalar(b, loc, 0.0f)});
}

LogicalResult unaryGrad(OpBuilder &b, Location loc, UnaryFn function,
                        Value operand, Value dy, SmallVectorImpl<Value> &out) {
  out.push_back(make<UnaryGradOp>(
      b, loc, {operand, dy},
      {named(b, "function", UnaryFnAttr::get(b.getContext(), function))}));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Shape rules and verifiers
//===----------------------------------------------------------------------===//

LogicalResult PowOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  double exponent = adaptor.getExponent().convertToDouble();
  if (!std::isfinite(exponent))
    return fail(loc, "pow exponent must be finite, got " + number(exponent));
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult ClampOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  FloatAttr min = adaptor.getMinAttr(), max = adaptor.getMaxAttr();
  if (!min && !max)
    return fail(loc, "clamp needs a min or a max bound");
  for (FloatAttr bound : {min, max})
    if (bound && std::isnan(bound.getValueAsDouble()))
      return fail(loc, "clamp bounds must not be NaN");
  if (min && max && min.getValueAsDouble() > max.getValueAsDouble())
    return fail(loc, "clamp min " + number(min.getValueAsDouble()) +
                         " is greater than max " +
                         number(max.getValueAsDouble()));
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  Type f32 = Float32Type::get(context);
  if (failed(checkTensor(loc, adaptor.getCondition(), "where condition",
                         IntegerType::get(context, 1))) ||
      failed(checkTensor(loc, adaptor.getLhs(), "where lhs", f32)) ||
      failed(checkTensor(loc, adaptor.getRhs(), "where rhs", f32)))
    return failure();
  auto shapeOf = [](Value v) {
    return getShape(cast<RankedTensorType>(v.getType()));
  };
  Shape values, result;
  std::string why;
  if (!broadcastShapes(shapeOf(adaptor.getLhs()), shapeOf(adaptor.getRhs()),
                       values, why) ||
      !broadcastShapes(shapeOf(adaptor.getCondition()), values, result, why))
    return fail(loc, "where operands do not broadcast: " + why);
  types.push_back(getTensorType(result, f32));
  return success();
}

LogicalResult UnaryGradOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  Type type = adaptor.getOperand().getType();
  if (adaptor.getDresult().getType() != type)
    return fail(loc, "unary_grad dresult must have type " + formatType(type) +
                         ", got " + formatType(adaptor.getDresult().getType()));
  types.push_back(type);
  return success();
}

LogicalResult ReduceMeanGradOp::verify() {
  auto input = cast<RankedTensorType>(getDresult().getType());
  auto result = cast<RankedTensorType>(getType());
  Shape to = getShape(result), merged;
  std::string why;
  if (!broadcastShapes(getShape(input), to, merged, why) || merged != to)
    return emitOpError("dresult ")
           << formatType(input) << " does not broadcast to "
           << formatType(result);
  return success();
}

LogicalResult ArgmaxOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<Type> reduced;
  const int64_t axis = adaptor.getAxis();
  if (failed(inferReduceResult(loc, adaptor.getInput().getType(), {axis},
                               adaptor.getKeepdim(), reduced)))
    return failure();
  types.push_back(
      cast<RankedTensorType>(reduced[0]).clone(IntegerType::get(context, 32)));
  return success();
}

LogicalResult ToFloatOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  types.push_back(type.clone(Float32Type::get(context)));
  return success();
}

//===----------------------------------------------------------------------===//
// VJPs of the unary functions
//===----------------------------------------------------------------------===//

LogicalResult ExpOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::exp, getResult(), grads[0], out);
}

LogicalResult LogOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::log, getInput(), grads[0], out);
}

LogicalResult SqrtOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::sqrt, getResult(), grads[0], out);
}

LogicalResult RsqrtOp::buildVJP(OpBuilder &b, ValueRange grads,
                                SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::rsqrt, getResult(), grads[0], out);
}

LogicalResult AbsOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::abs, getInput(), grads[0], out);
}

LogicalResult TanhOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::tanh, getResult(), grads[0], out);
}

LogicalResult CosOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::cos, getInput(), grads[0], out);
}

LogicalResult SinOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::sin, getInput(), grads[0], out);
}

LogicalResult SigmoidOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::sigmoid, getResult(), grads[0], out);
}

LogicalResult SiluOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::silu, getInput(), grads[0], out);
}

LogicalResult GeluTanhOp::buildVJP(OpBuilder &b, ValueRange grads,
                                   SmallVectorImpl<Value> &out) {
  return unaryGrad(b, getLoc(), UnaryFn::gelu_tanh, getInput(), grads[0], out);
}

LogicalResult PowOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  // PyTorch: grad * (c * x.pow(c - 1)); x ** 0 gets zeros (pow_backward's
  // zeros_like, a gradient that reaches the loss: weight decay then moves
  // the parameter, where no gradient left it as it was).
  Location loc = getLoc();
  float c = getExponent().convertToFloat();
  Value dy = grads[0];
  if (c == 0.0f) {
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Value zero =
        b.create<ConstantOp>(loc, DenseElementsAttr::get(scalar, 0.0f));
    out.push_back(b.create<BroadcastToOp>(loc, getInput().getType(), zero));
    return success();
  }
  if (c == 1.0f) {
    out.push_back(dy);
    return success();
  }
  Value power = getInput();
  if (c - 1.0f != 1.0f)
    power = make<PowOp>(b, loc, {power},
                        {named(b, "exponent", b.getF32FloatAttr(c - 1.0f))});
  Value slope = make<ScaleOp>(b, loc, {power},
                              {named(b, "factor", b.getF32FloatAttr(c))});
  out.push_back(make<MulOp>(b, loc, {dy, slope}));
  return success();
}

//===----------------------------------------------------------------------===//
// VJPs of the selections
//===----------------------------------------------------------------------===//

/// torch.maximum / torch.minimum: the gradient goes to the winner, half to
/// each operand where they tie.
static void extremumGrads(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          Value dy, bool isMax, SmallVectorImpl<Value> &out) {
  Value tie = compare(b, loc, CmpPredicate::eq, lhs, rhs);
  Value half = make<ScaleOp>(b, loc, {dy},
                             {named(b, "factor", b.getF32FloatAttr(0.5f))});
  Value shared = make<WhereOp>(b, loc, {tie, half, dy});
  Value lhsLoses =
      compare(b, loc, isMax ? CmpPredicate::lt : CmpPredicate::gt, lhs, rhs);
  Value rhsLoses =
      compare(b, loc, isMax ? CmpPredicate::gt : CmpPredicate::lt, lhs, rhs);
  auto zeroWhere = [&](Value mask) {
    return make<MaskedFillOp>(b, loc, {shared, mask},
                              {named(b, "value", b.getF32FloatAttr(0.0f))});
  };
  out.push_back(sumTo(b, loc, zeroWhere(lhsLoses), lhs.getType()));
  out.push_back(sumTo(b, loc, zeroWhere(rhsLoses), rhs.getType()));
}

LogicalResult MaximumOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  extremumGrads(b, getLoc(), getLhs(), getRhs(), grads[0], /*isMax=*/true, out);
  return success();
}

LogicalResult MinimumOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  extremumGrads(b, getLoc(), getLhs(), getRhs(), grads[0], /*isMax=*/false,
                out);
  return success();
}

LogicalResult ClampOp::buildVJP(OpBuilder &b, ValueRange grads,
                                SmallVectorImpl<Value> &out) {
  // PyTorch: grad where min <= x <= max (false at NaN), else 0.
  Location loc = getLoc();
  Value inside;
  if (FloatAttr min = getMinAttr())
    inside = compare(b, loc, CmpPredicate::ge, getInput(),
                     scalar(b, loc, min.getValueAsDouble()));
  if (FloatAttr max = getMaxAttr()) {
    Value below = compare(b, loc, CmpPredicate::le, getInput(),
                          scalar(b, loc, max.getValueAsDouble()));
    inside = inside ? make<AndOp>(b, loc, {inside, below}) : below;
  }
  out.push_back(keepWhere(b, loc, inside, grads[0]));
  return success();
}

LogicalResult WhereOp::buildVJP(OpBuilder &b, ValueRange grads,
                                SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value dy = grads[0];
  auto zeroWhere = [&](Value mask) {
    return make<MaskedFillOp>(b, loc, {dy, mask},
                              {named(b, "value", b.getF32FloatAttr(0.0f))});
  };
  Value unmet = make<NotOp>(b, loc, {getCondition()});
  out.push_back(nullptr);
  out.push_back(sumTo(b, loc, zeroWhere(unmet), getLhs().getType()));
  out.push_back(sumTo(b, loc, zeroWhere(getCondition()), getRhs().getType()));
  return success();
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  // torch.amax: (dy / count of maxima) at every element equal to the maximum.
  Location loc = getLoc();
  Value input = getInput(), max = getResult(), dy = grads[0];
  SmallVector<Type> kept;
  if (failed(inferReduceResult(loc, input.getType(), getAxes(),
                               /*keepdim=*/true, kept)))
    return failure();
  if (!getKeepdim()) {
    max = b.create<ReshapeOp>(loc, kept[0], max);
    dy = b.create<ReshapeOp>(loc, kept[0], dy);
  }
  Value isMax = compare(b, loc, CmpPredicate::eq, input, max);
  Value ones = make<WhereOp>(
      b, loc, {isMax, scalar(b, loc, 1.0f), scalar(b, loc, 0.0f)});
  Value count = make<ReduceSumOp>(
      b, loc, {ones},
      {named(b, "axes", getAxesAttr()), named(b, "keepdim", b.getUnitAttr())});
  Value share = make<DivOp>(b, loc, {dy, count});
  out.push_back(make<MulOp>(b, loc, {share, ones}));
  return success();
}
