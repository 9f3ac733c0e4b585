//===- LowerMath.cpp - tensor math to linalg glue -------------------------===//
//
// The part of tx-lower-entries for the ops of TxMathOps.td: every one is
// element-wise glue, an outlined linalg.generic whose body is arith and math
// ops (math.exp, math.log, math.sqrt, math.rsqrt, math.absf, math.tanh,
// math.powf). Each body computes what PyTorch's CPU kernel computes, in the
// same order, so results agree to rounding: sigmoid is 1 / (1 + exp(-x)),
// silu x / (1 + exp(-x)), pow special-cases the exponents PyTorch does.
// reduce_max is a glue reduction with maximumf, which keeps NaN.
//
// Every op is created in its own statement, never two in the arguments of
// one call: C++ leaves the order of evaluating arguments unspecified (GCC
// goes right to left, clang left to right), and the IR txc emits must not
// depend on the compiler that built txc.
//
//===----------------------------------------------------------------------===//
#include "EntryLowering.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tx;
using mlir::tx::detail::EntryLowering;

namespace {

/// Builds arith / math ops in a glue body. Callers sequence the ops: at
/// most one argument of a call may create an op (see the file header).
struct Body {
  OpBuilder &b;
  Location l;

  Value c(double v) {
    return b.create<arith::ConstantFloatOp>(l, APFloat(float(v)),
                                            b.getF32Type());
  }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
  Value neg(Value x) { return b.create<arith::NegFOp>(l, x); }
  Value exp(Value x) { return b.create<math::ExpOp>(l, x); }
  Value tanh(Value x) { return b.create<math::TanhOp>(l, x); }
  Value sqrt(Value x) { return b.create<math::SqrtOp>(l, x); }
  Value rsqrt(Value x) { return b.create<math::RsqrtOp>(l, x); }
  Value select(Value cond, Value x, Value y) {
    return b.create<arith::SelectOp>(l, cond, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return b.create<arith::CmpFOp>(l, p, x, y);
  }

  /// torch.maximum and torch.minimum: y where it is larger (smaller), else
  /// x, as std::max and std::min compare (so -0 against +0 keeps x: PyTorch
  /// gives relu(-0.0) = clamp(-0.0, min = 0) = -0.0, where arith.maximumf
  /// gave +0.0 and 1 / relu(x) +inf for -inf), and NaN where either is.
  Value torchMax(Value x, Value y) {
    Value picked = select(cmp(arith::CmpFPredicate::OLT, x, y), y, x);
    return orNaNOf(y, picked);
  }
  Value torchMin(Value x, Value y) {
    Value picked = select(cmp(arith::CmpFPredicate::OLT, y, x), y, x);
    return orNaNOf(y, picked);
  }
  /// `y` where it is NaN, else `picked` (an x that is NaN is picked
  /// already: no comparison with it holds).
  Value orNaNOf(Value y, Value picked) {
    if (auto constant = y.getDefiningOp<arith::ConstantFloatOp>())
      if (!constant.value().isNaN())
        return picked;
    return select(cmp(arith::CmpFPredicate::UNO, y, y), y, picked);
  }

  /// PyTorch's gelu(approximate='tanh'): sqrt(2/pi) as M_SQRT2 * M_2_SQRTPI
  /// * 0.5, and the tanh's argument `inner`.
  static constexpr double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5;
  static constexpr double kKappa = 0.044715;
  Value geluInner(Value x) {
    Value cube = mul(mul(x, x), x);
    Value sum = add(x, mul(c(kKappa), cube));
    return mul(c(kBeta), sum);
  }
  /// 1 + exp(-x).
  Value onePlusExpNeg(Value x) {
    Value expNeg = exp(neg(x));
    return add(c(1), expNeg);
  }
  /// 1 / (1 + exp(-x)).
  Value sigmoid(Value x) {
    Value denominator = onePlusExpNeg(x);
    return div(c(1), denominator);
  }
};

Value unaryForward(Body &e, Operation *op, Value x) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](ExpOp) { return e.exp(x); })
      .Case([&](LogOp) { return e.b.create<math::LogOp>(e.l, x); })
      .Case([&](SqrtOp) { return e.sqrt(x); })
      .Case([&](RsqrtOp) { return e.rsqrt(x); })
      .Case([&](AbsOp) { return e.b.create<math::AbsFOp>(e.l, x); })
      .Case([&](TanhOp) { return e.tanh(x); })
      .Case([&](CosOp) { return e.b.create<math::CosOp>(e.l, x); })
      .Case([&](SinOp) { return e.b.create<math::SinOp>(e.l, x); })
      .Case([&](SigmoidOp) { return e.sigmoid(x); })
      .Case([&](SiluOp) { return e.div(x, e.onePlusExpNeg(x)); })
      .Case([&](GeluTanhOp) {
        Value t = e.tanh(e.geluInner(x));
        Value onePlusT = e.add(e.c(1), t);
        Value half = e.mul(e.c(0.5), x);
        return e.mul(half, onePlusT);
      });
}

/// dx of tx.unary_grad from `o` (the forward's input or output, per
/// function) and `dy`: PyTorch's backward formulas.
Value unaryBackward(Body &e, UnaryFn function, Value o, Value dy) {
  switch (function) {
  case UnaryFn::exp:
    return e.mul(dy, o);
  case UnaryFn::log:
    return e.div(dy, o);
  case UnaryFn::sqrt:
    return e.div(dy, e.mul(e.c(2), o));
  case UnaryFn::rsqrt: {
    Value cube = e.mul(e.mul(o, o), o);
    Value scaled = e.mul(e.c(-0.5), dy);
    return e.mul(scaled, cube);
  }
  case UnaryFn::abs: {
    // torch.sign(x): 1, -1, and 0 at ±0 and at NaN (PyTorch's
    // `(0 < x) - (x < 0)`, through 2.12: abs's gradient at a NaN is 0).
    using P = arith::CmpFPredicate;
    Value zero = e.c(0);
    Value minusOne = e.c(-1);
    Value isNegative = e.cmp(P::OLT, o, e.c(0));
    Value notPositive = e.select(isNegative, minusOne, zero);
    Value one = e.c(1);
    Value isPositive = e.cmp(P::OGT, o, e.c(0));
    Value sign = e.select(isPositive, one, notPositive);
    return e.mul(dy, sign);
  }
  case UnaryFn::tanh: {
    Value square = e.mul(o, o);
    return e.mul(dy, e.sub(e.c(1), square));
  }
  case UnaryFn::cos: {
    // One op per statement: C++ leaves argument order unspecified.
    Value minusDy = e.neg(dy);
    Value sine = e.b.create<math::SinOp>(e.l, o);
    return e.mul(minusDy, sine);
  }
  case UnaryFn::sin:
    return e.mul(dy, e.b.create<math::CosOp>(e.l, o));
  case UnaryFn::sigmoid:
    return e.mul(e.mul(dy, e.sub(e.c(1), o)), o);
  case UnaryFn::silu: {
    Value s = e.sigmoid(o);
    Value oTimesOneMinusS = e.mul(o, e.sub(e.c(1), s));
    Value factor = e.add(e.c(1), oTimesOneMinusS);
    Value dyS = e.mul(dy, s);
    return e.mul(dyS, factor);
  }
  case UnaryFn::gelu_tanh: {
    Value square = e.mul(o, o);
    Value t = e.tanh(e.geluInner(o));
    Value left = e.mul(e.c(0.5), o);
    Value onePlusT = e.add(e.c(1), t);
    Value leftDerivative = e.mul(e.c(0.5), onePlusT);
    Value tSquare = e.mul(t, t);
    Value tanhDerivative = e.sub(e.c(1), tSquare);
    Value scaledSquare = e.mul(e.c(3 * Body::kKappa), square);
    Value onePlusScaled = e.add(e.c(1), scaledSquare);
    Value innerDerivative = e.mul(e.c(Body::kBeta), onePlusScaled);
    Value rightDerivative = e.mul(e.mul(left, tanhDerivative), innerDerivative);
    return e.mul(dy, e.add(leftDerivative, rightDerivative));
  }
  }
  llvm_unreachable("unknown UnaryFn");
}

/// x ** c as PyTorch's pow(Tensor, Scalar) computes it.
Value power(Body &e, Value x, float c) {
  if (c == 0.0f)
    return e.c(1);
  if (c == 1.0f)
    return x;
  if (c == 2.0f)
    return e.mul(x, x);
  if (c == 3.0f)
    return e.mul(e.mul(x, x), x);
  if (c == -1.0f)
    return e.div(e.c(1), x);
  if (c == -2.0f) {
    Value square = e.mul(x, x);
    return e.div(e.c(1), square);
  }
  if (c == 0.5f)
    return e.sqrt(x);
  if (c == -0.5f)
    return e.rsqrt(x);
  return e.b.create<math::PowFOp>(e.l, x, e.c(c));
}

} // namespace

std::optional<LogicalResult> EntryLowering::lowerMathOp(Operation *op) {
  using Result = std::optional<LogicalResult>;
  // A reduction of `input` over `axes`: its result (the tensor at `result`,
  // of `element`) viewed without the reduced dims (rank 0 when all are),
  // the maps (input identity, result projection) and the iterators.
  struct Reduction {
    Value out;
    SmallVector<AffineMap> maps;
    SmallVector<utils::IteratorType> iterators;
  };
  auto reduction = [&](Value input, ArrayRef<int64_t> axesList, Value result,
                       Type element) {
    auto inType = cast<RankedTensorType>(input.getType());
    int64_t rank = inType.getRank();
    llvm::SmallDenseSet<int64_t> axes;
    for (int64_t axis : axesList)
      axes.insert(axis < 0 ? axis + rank : axis);
    SmallVector<Value> inSizes = dimSizes(inType), outSizes;
    SmallVector<int64_t> outShape;
    SmallVector<AffineExpr> outExprs;
    Reduction r;
    for (int64_t i = 0; i < rank; ++i) {
      if (axes.count(i)) {
        r.iterators.push_back(utils::IteratorType::reduction);
        continue;
      }
      r.iterators.push_back(utils::IteratorType::parallel);
      outShape.push_back(inType.getShape()[i]);
      outSizes.push_back(inSizes[i]);
      outExprs.push_back(getAffineDimExpr(i, context));
    }
    r.out = viewWithSizes(ptrs.lookup(result), outShape, outSizes, element);
    r.maps = {AffineMap::getMultiDimIdentityMap(rank, context),
              AffineMap::get(rank, 0, outExprs, context)};
    return r;
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, TanhOp, CosOp, SinOp,
            SigmoidOp, SiluOp, GeluTanhOp>([&](auto unary) -> Result {
        elementwise(unary.getResult(), {unary.getInput()},
                    [&](OpBuilder &b, Location l, ValueRange a) {
                      Body e{b, l};
                      return unaryForward(e, op, a[0]);
                    });
        return success();
      })
      .Case([&](ToFloatOp cast) -> Result {
        bool isBool = cast.getInput().getType().getElementType().isInteger(1);
        elementwise(cast.getResult(), {cast.getInput()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      if (isBool)
                        return b.create<arith::UIToFPOp>(l, b.getF32Type(), a[0]);
                      return b.create<arith::SIToFPOp>(l, b.getF32Type(), a[0]);
                    });
        return success();
      })
      .Case([&](UnaryGradOp grad) -> Result {
        UnaryFn function = grad.getFunction();
        elementwise(grad.getResult(), {grad.getOperand(), grad.getDresult()},
                    [&](OpBuilder &b, Location l, ValueRange a) {
                      Body e{b, l};
                      return unaryBackward(e, function, a[0], a[1]);
                    });
        return success();
      })
      .Case([&](PowOp pow) -> Result {
        float exponent = pow.getExponent().convertToFloat();
        elementwise(pow.getResult(), {pow.getInput()},
                    [&](OpBuilder &b, Location l, ValueRange a) {
                      Body e{b, l};
                      return power(e, a[0], exponent);
                    });
        return success();
      })
      .Case([&](ReluOp relu) -> Result {
        // max(x, 0) as torch's: -0 stays -0, NaN stays NaN.
        elementwise(relu.getResult(), {relu.getInput()},
                    [&](OpBuilder &b, Location l, ValueRange a) {
                      Body e{b, l};
                      return e.torchMax(a[0], e.c(0.0));
                    });
        return success();
      })
      .Case<MinimumOp, MaximumOp>([&](auto binary) -> Result {
        bool isMax = isa<MaximumOp>(op);
        elementwise(binary.getResult(), {binary.getLhs(), binary.getRhs()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Body e{b, l};
                      return isMax ? e.torchMax(a[0], a[1])
                                   : e.torchMin(a[0], a[1]);
                    });
        return success();
      })
      .Case([&](ClampOp clamp) -> Result {
        // min(max(x, min), max) as torch's: NaN stays NaN, -0 stays -0.
        std::optional<float> min, max;
        if (FloatAttr attr = clamp.getMinAttr())
          min = float(attr.getValueAsDouble());
        if (FloatAttr attr = clamp.getMaxAttr())
          max = float(attr.getValueAsDouble());
        elementwise(clamp.getResult(), {clamp.getInput()},
                    [&](OpBuilder &b, Location l, ValueRange a) {
                      Body e{b, l};
                      Value x = a[0];
                      if (min)
                        x = e.torchMax(x, e.c(*min));
                      if (max)
                        x = e.torchMin(x, e.c(*max));
                      return x;
                    });
        return success();
      })
      .Case([&](WhereOp where) -> Result {
        elementwise(where.getResult(),
                    {where.getCondition(), where.getLhs(), where.getRhs()},
                    [](OpBuilder &b, Location l, ValueRange a) -> Value {
                      return b.create<arith::SelectOp>(l, a[0], a[1], a[2]);
                    });
        return success();
      })
      .Case([&](ReduceMeanGradOp grad) -> Result {
        // dy / n, n = the product of the result's dims that dy broadcasts
        // along: a constant when they are static, else computed here and
        // passed to the kernel.
        auto outType = cast<RankedTensorType>(grad.getType());
        Shape to = getShape(outType);
        Shape from =
            getShape(cast<RankedTensorType>(grad.getDresult().getType()));
        int64_t lead = int64_t(to.size()) - int64_t(from.size());
        double count = 1;
        SmallVector<Value> symbolic;
        for (int64_t i = 0, e = to.size(); i < e; ++i) {
          bool stretched =
              i < lead || (!from[i - lead].isSymbolic() &&
                           from[i - lead].size == 1 && to[i] != from[i - lead]);
          if (!stretched)
            continue;
          if (to[i].isSymbolic())
            symbolic.push_back(dimSize(to[i]));
          else
            count *= double(to[i].size);
        }
        if (symbolic.empty()) {
          elementwise(grad.getResult(), {grad.getDresult()},
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        Body e{b, l};
                        return e.div(a[0], e.c(count));
                      });
          return success();
        }
        Value n = builder.create<arith::UIToFPOp>(loc, builder.getF32Type(),
                                                  toI64(product(symbolic)));
        n = builder.create<arith::MulFOp>(loc, n, f32(count));
        Value slot = builder.create<memref::AllocaOp>(
            loc, MemRefType::get({}, builder.getF32Type()));
        builder.create<memref::StoreOp>(loc, n, slot, ValueRange{});
        elementwise(grad.getResult(), {grad.getDresult()},
                    [](OpBuilder &b, Location l, ValueRange a) -> Value {
                      return b.create<arith::DivFOp>(l, a[0], a[1]);
                    },
                    {slot});
        return success();
      })
      .Case([&](ReduceMaxOp reduce) -> Result {
        // out[kept...] = maximumf over the reduced dims, from -inf: a NaN
        // gives NaN, as torch.amax. The result is viewed without its
        // reduced dims (rank 0 when all are), so the maps are projections.
        Reduction r = reduction(reduce.getInput(), reduce.getAxes(),
                                reduce.getResult(), builder.getF32Type());
        Value out = r.out;
        SmallVector<AffineMap> maps = r.maps;
        SmallVector<utils::IteratorType> iterators = r.iterators;
        kernel({view(reduce.getInput()), out}, [&](OpBuilder &b, Location l,
                                                   ValueRange args) {
          Body e{b, l};
          b.create<linalg::FillOp>(
              l, ValueRange{e.c(-std::numeric_limits<float>::infinity())},
              ValueRange{args[1]});
          b.create<linalg::GenericOp>(
              l, TypeRange{}, args[0], args[1], maps, iterators,
              [](OpBuilder &nb, Location nl, ValueRange a) {
                nb.create<linalg::YieldOp>(
                    nl,
                    ValueRange{nb.create<arith::MaximumFOp>(nl, a[0], a[1])});
              });
        });
        return success();
      })
      .Case([&](ArgmaxOp argmax) -> Result {
        // torch.argmax along one axis: a reduction carrying the best value
        // (a buffer the kernel allocates) and its index; strictly greater
        // takes over, so the first of equal maxima stays, and a NaN takes
        // over once and is never replaced (torch: the first NaN).
        const int64_t rank =
            cast<RankedTensorType>(argmax.getInput().getType()).getRank();
        int64_t axis = argmax.getAxis();
        if (axis < 0)
          axis += rank;
        Reduction r = reduction(argmax.getInput(), {axis}, argmax.getResult(),
                                builder.getI32Type());
        Value out = r.out;
        // The best value carried beside the index: the index's map.
        SmallVector<AffineMap> maps = {r.maps[0], r.maps[1], r.maps[1]};
        SmallVector<utils::IteratorType> iterators = r.iterators;
        kernel({view(argmax.getInput()), out}, [&](OpBuilder &b, Location l,
                                                   ValueRange args) {
          Body e{b, l};
          auto outType = cast<MemRefType>(args[1].getType());
          SmallVector<Value> dynamic;
          for (int64_t i = 0, e2 = outType.getRank(); i < e2; ++i)
            if (outType.isDynamicDim(i))
              dynamic.push_back(b.create<memref::DimOp>(l, args[1], i));
          Value best = b.create<memref::AllocOp>(
              l, MemRefType::get(outType.getShape(), b.getF32Type()), dynamic);
          b.create<linalg::FillOp>(
              l, ValueRange{e.c(-std::numeric_limits<float>::infinity())},
              ValueRange{best});
          b.create<linalg::FillOp>(l,
                                   ValueRange{b.create<arith::ConstantOp>(
                                       l, b.getI32IntegerAttr(0))},
                                   ValueRange{args[1]});
          b.create<linalg::GenericOp>(
              l, TypeRange{}, args[0], ValueRange{best, args[1]}, maps,
              iterators, [&](OpBuilder &nb, Location nl, ValueRange a) {
                Value index = nb.create<arith::IndexCastOp>(
                    nl, nb.getI32Type(), nb.create<linalg::IndexOp>(nl, axis));
                Value bestIsNaN = nb.create<arith::CmpFOp>(
                    nl, arith::CmpFPredicate::UNO, a[1], a[1]);
                Value takes = nb.create<arith::CmpFOp>(
                    nl, arith::CmpFPredicate::UGT, a[0], a[1]);
                takes = nb.create<arith::AndIOp>(
                    nl, takes,
                    nb.create<arith::XOrIOp>(nl, bestIsNaN,
                                             nb.create<arith::ConstantOp>(
                                                 nl, nb.getBoolAttr(true))));
                nb.create<linalg::YieldOp>(
                    nl,
                    ValueRange{
                        nb.create<arith::SelectOp>(nl, takes, a[0], a[1]),
                        nb.create<arith::SelectOp>(nl, takes, index, a[2])});
              });
          b.create<memref::DeallocOp>(l, best);
        });
        return success();
      })
      .Default([](Operation *) -> Result { return std::nullopt; });
}
