//===- TxVJP.cpp - vector-Jacobian products of the tx ops -----------------===//
//
// DifferentiableOpInterface::buildVJP for every differentiable op: given the
// gradients of an op's results, build the gradients of its operands at the
// builder's point (tx-autodiff puts it after the forward, in reverse order).
// Gradients have their operand's type: broadcasting is undone with
// tx.sum_to. Ids, masks and other operands without gradients get null.
// Heavy gradients are gradient ops with their own kernels (linear_grad,
// layer_norm_grad, softmax_grad, attention_grad, embedding_grad,
// cross_entropy_grad, dropout_grad); the rest are forward ops.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::vjp;

namespace {

/// The tx.rng key of a random op, copied onto its gradient.
SmallVector<NamedAttribute> rngOf(Operation *op) {
  SmallVector<NamedAttribute> attrs;
  if (Attribute rng = op->getAttr("tx.rng"))
    attrs.push_back(NamedAttribute(
        StringAttr::get(op->getContext(), "tx.rng"), rng));
  return attrs;
}

LogicalResult needsRng(Operation *op) {
  if (op->getAttr("tx.rng"))
    return success();
  return op->emitOpError("needs an RNG key (tx.rng) to be differentiated: "
                         "run tx-autodiff, which assigns one");
}

/// dA, dB of C = op(A) · op(B) (op = transpose when the flag is set).
std::pair<Value, Value> matmulGrads(OpBuilder &b, Location loc, Value a,
                                    Value bMat, bool ta, bool tb, Value dc) {
  auto mm = [&](Value lhs, Value rhs, bool tl, bool tr) {
    SmallVector<NamedAttribute> attrs;
    if (tl)
      attrs.push_back(named(b, "transpose_lhs", b.getUnitAttr()));
    if (tr)
      attrs.push_back(named(b, "transpose_rhs", b.getUnitAttr()));
    return make<MatmulOp>(b, loc, {lhs, rhs}, attrs);
  };
  Value da = !ta ? mm(dc, bMat, false, !tb) : mm(bMat, dc, tb, true);
  // A 2-D `[K, N]` weight under a batched `a` (`x @ W`, W in Conv1D's
  // layout): dB = Σ over the batch of aᵀ · dC is one product over all rows,
  // linear_grad's dweight with dC as its input and `a` as its dresult
  // (its dinput and dbias unused: not computed). As a matmul it was a
  // product per batch element, B weight-sized buffers and a sum over them.
  // `tx.f32`: tx-precision leaves it in f32, as it leaves the matmul.
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bMat.getType());
  if (!ta && !tb && aType.getRank() > 2 && bType.getRank() == 2 &&
      bType.hasStaticShape()) {
    auto grad = b.create<LinearGradOp>(loc, ValueRange{dc, bMat, a},
                                       ArrayRef<NamedAttribute>{});
    grad->setAttr("tx.f32", b.getUnitAttr());
    return {sumTo(b, loc, da, a.getType()), grad.getDweight()};
  }
  Value db = !tb ? mm(a, dc, !ta, false) : mm(dc, a, true, ta);
  return {sumTo(b, loc, da, a.getType()), sumTo(b, loc, db, bMat.getType())};
}

Value layerNormGrad(OpBuilder &b, Location loc, Value input, Value rhs,
                    Value weight, Value dy, Value dsum, FloatAttr epsilon,
                    Value &dweight, Value &dbias) {
  SmallVector<Value> operands = {input};
  if (rhs)
    operands.push_back(rhs);
  operands.push_back(weight);
  operands.push_back(dy);
  if (dsum)
    operands.push_back(dsum);
  auto op = b.create<LayerNormGradOp>(
      loc, operands,
      ArrayRef<NamedAttribute>{
          named(b, "operandSegmentSizes",
                b.getDenseI32ArrayAttr({1, rhs ? 1 : 0, 1, 1, dsum ? 1 : 0})),
          named(b, "epsilon", epsilon)});
  dweight = op.getDweight();
  dbias = op.getDbias();
  return op.getDinput();
}

/// dinput of rms_norm (of the sum, with `rhs`) and, in `dweight`, the weight
/// gradient.
Value rmsNormGrad(OpBuilder &b, Location loc, Value input, Value rhs,
                  Value weight, Value dy, Value dsum, FloatAttr epsilon,
                  Value &dweight) {
  SmallVector<Value> operands = {input};
  if (rhs)
    operands.push_back(rhs);
  operands.push_back(weight);
  operands.push_back(dy);
  if (dsum)
    operands.push_back(dsum);
  auto op = b.create<RmsNormGradOp>(
      loc, operands,
      ArrayRef<NamedAttribute>{
          named(b, "operandSegmentSizes",
                b.getDenseI32ArrayAttr({1, rhs ? 1 : 0, 1, 1, dsum ? 1 : 0})),
          named(b, "epsilon", epsilon)});
  dweight = op.getDweight();
  return op.getDinput();
}

/// The attention gradient from a forward's operands, output and lse.
void attentionGrads(OpBuilder &b, Location loc, Operation *forward,
                    Value query, Value key, Value value, Value mask, Value out,
                    Value lse, Value dout,
                    SmallVectorImpl<Value> &operandGrads) {
  SmallVector<Value> operands = {query, key, value};
  if (mask)
    operands.push_back(mask);
  operands.append({out, lse, dout});
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : {"scale", "causal", "fill", "dropout", "tx.rng"})
    if (Attribute attr = forward->getAttr(name))
      attrs.push_back(named(b, name, attr));
  auto grad = b.create<AttentionGradOp>(loc, operands, attrs);
  operandGrads.append({grad.getDquery(), grad.getDkey(), grad.getDvalue()});
  if (mask)
    operandGrads.push_back(nullptr);
}

} // namespace

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  out.push_back(sumTo(b, getLoc(), grads[0], getLhs().getType()));
  out.push_back(sumTo(b, getLoc(), grads[0], getRhs().getType()));
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  Value neg = make<NegOp>(b, getLoc(), {grads[0]});
  out.push_back(sumTo(b, getLoc(), grads[0], getLhs().getType()));
  out.push_back(sumTo(b, getLoc(), neg, getRhs().getType()));
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  out.push_back(sumTo(b, loc, make<MulOp>(b, loc, {grads[0], getRhs()}),
                      getLhs().getType()));
  out.push_back(sumTo(b, loc, make<MulOp>(b, loc, {grads[0], getLhs()}),
                      getRhs().getType()));
  return success();
}

LogicalResult DivOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  // d(a/b) = da / b - db * (a/b) / b
  Location loc = getLoc();
  Value overB = make<DivOp>(b, loc, {grads[0], getRhs()});
  out.push_back(sumTo(b, loc, overB, getLhs().getType()));
  Value db = make<NegOp>(b, loc, {make<MulOp>(b, loc, {overB, getResult()})});
  out.push_back(sumTo(b, loc, db, getRhs().getType()));
  return success();
}

LogicalResult NegOp::buildVJP(OpBuilder &b, ValueRange grads,
                              SmallVectorImpl<Value> &out) {
  out.push_back(make<NegOp>(b, getLoc(), {grads[0]}));
  return success();
}

LogicalResult ScaleOp::buildVJP(OpBuilder &b, ValueRange grads,
                                SmallVectorImpl<Value> &out) {
  out.push_back(make<ScaleOp>(b, getLoc(), {grads[0]},
                              {named(b, "factor", getFactorAttr())}));
  return success();
}

static Value activationGrad(OpBuilder &b, Location loc, Value input, Value dy,
                            Activation activation) {
  return make<ActivationGradOp>(
      b, loc, {input, dy},
      {named(b, "activation",
             ActivationAttr::get(b.getContext(), activation))});
}

LogicalResult ReluOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  out.push_back(activationGrad(b, getLoc(), getInput(), grads[0],
                               Activation::relu));
  return success();
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  out.push_back(activationGrad(b, getLoc(), getInput(), grads[0],
                               Activation::gelu));
  return success();
}

LogicalResult MaskedFillOp::buildVJP(OpBuilder &b, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  // Filled elements do not depend on the input.
  out.push_back(make<MaskedFillOp>(b, getLoc(), {grads[0], getMask()},
                                   {named(b, "value", b.getF32FloatAttr(0))}));
  out.push_back(nullptr);
  return success();
}

LogicalResult DropoutOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  if (getRate().convertToDouble() > 0.0 && failed(needsRng(*this)))
    return failure();
  SmallVector<NamedAttribute> attrs = rngOf(*this);
  attrs.push_back(named(b, "rate", getRateAttr()));
  out.push_back(make<DropoutGradOp>(b, getLoc(), {grads[0]}, attrs));
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding, contractions
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  int64_t vocab = cast<RankedTensorType>(getTable().getType()).getShape()[0];
  out.push_back(nullptr);
  out.push_back(make<EmbeddingGradOp>(
      b, getLoc(), {getIds(), grads[0]},
      {named(b, "vocab", b.getI64IntegerAttr(vocab))}));
  return success();
}

LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange grads,
                                 SmallVectorImpl<Value> &out) {
  auto [da, db] = matmulGrads(b, getLoc(), getLhs(), getRhs(),
                              getTransposeLhs(), getTransposeRhs(), grads[0]);
  out.push_back(da);
  out.push_back(db);
  return success();
}

/// The element-wise op computing `activation` (not none) of `z`.
static Value applyActivation(OpBuilder &b, Location loc, Value z,
                             Activation activation) {
  switch (activation) {
  case Activation::relu:
    return make<ReluOp>(b, loc, {z});
  case Activation::gelu:
    return make<GeluOp>(b, loc, {z});
  case Activation::gelu_tanh:
    return make<GeluTanhOp>(b, loc, {z});
  case Activation::silu:
    return make<SiluOp>(b, loc, {z});
  case Activation::none:
    break;
  }
  return z;
}

LogicalResult LinearOp::buildVJP(OpBuilder &b, ValueRange grads,
                                 SmallVectorImpl<Value> &out) {
  // y = act(z) * gate + residual with z = x·Wᵀ + bias.
  Location loc = getLoc();
  Activation activation = getActivation();
  Value dy = grads[0], dz = dy, dgate;
  if (!getGate() && !getResidual() && activation == Activation::relu) {
    // relu'(z) = [relu(z) > 0]: the output will do. Not with a residual:
    // (y - r) is not relu(z) in floating point (r = 1000 and relu(z) =
    // 1e-5 gave 0, and the gradient 0; an infinite r gave NaN), so that
    // form recomputes z below (tx-fuse-linear keeps the residual out of a
    // relu linear in a train entry).
    dz = activationGrad(b, loc, getResult(), dy, Activation::relu);
  } else if (getGate() || activation != Activation::none) {
    // The other epilogues need the pre-activation: recompute it.
    SmallVector<Value> operands = {getInput(), getWeight()};
    if (getBias())
      operands.push_back(getBias());
    Value z = make<LinearOp>(
        b, loc, operands,
        {named(b, "operandSegmentSizes",
               b.getDenseI32ArrayAttr({1, 1, getBias() ? 1 : 0, 0, 0}))});
    Value dactivated = dy;
    if (Value gate = getGate()) {
      dgate = make<MulOp>(b, loc, {dy, applyActivation(b, loc, z, activation)});
      dactivated = make<MulOp>(b, loc, {dy, gate});
    }
    dz = activation == Activation::none
             ? dactivated
             : activationGrad(b, loc, z, dactivated, activation);
  }
  auto grad = b.create<LinearGradOp>(loc, ValueRange{getInput(), getWeight(), dz},
                                     ArrayRef<NamedAttribute>{});
  out.push_back(grad.getDinput());
  out.push_back(grad.getDweight());
  if (getBias())
    out.push_back(grad.getDbias());
  if (getGate())
    out.push_back(dgate);
  if (getResidual())
    out.push_back(dy);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, loss
//===----------------------------------------------------------------------===//

static LogicalResult checkLastAxis(Operation *op, int64_t axis) {
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  if (axis == -1 || axis == rank - 1)
    return success();
  return op->emitOpError("gradient is implemented for the last axis only, "
                         "got axis ")
         << axis;
}

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  if (failed(checkLastAxis(*this, getAxis())))
    return failure();
  out.push_back(make<SoftmaxGradOp>(b, getLoc(), {getResult(), grads[0]}));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  if (failed(checkLastAxis(*this, getAxis())))
    return failure();
  out.push_back(make<SoftmaxGradOp>(b, getLoc(), {getResult(), grads[0]},
                                    {named(b, "log", b.getUnitAttr())}));
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  Value dweight, dbias;
  out.push_back(layerNormGrad(b, getLoc(), getInput(), nullptr, getWeight(),
                              grads[0], nullptr, getEpsilonAttr(), dweight,
                              dbias));
  out.push_back(dweight);
  if (getBias())
    out.push_back(dbias);
  return success();
}

LogicalResult AddLayerNormOp::buildVJP(OpBuilder &b, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  Value dy = grads[0], dsum = grads[1];
  if (!dy) { // only the sum is used
    out.append({dsum, dsum, nullptr});
    if (getBias())
      out.push_back(nullptr);
    return success();
  }
  Value dweight, dbias;
  // A sum the forward writes anyway (it has users) is read once instead of
  // adding its operands again.
  bool sumKept = !getSum().use_empty();
  Value ds = layerNormGrad(b, getLoc(), sumKept ? getSum() : getLhs(),
                           sumKept ? Value() : getRhs(), getWeight(), dy, dsum,
                           getEpsilonAttr(), dweight, dbias);
  out.append({ds, ds, dweight});
  if (getBias())
    out.push_back(dbias);
  return success();
}

LogicalResult RmsNormOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  Value dweight;
  out.push_back(rmsNormGrad(b, getLoc(), getInput(), nullptr, getWeight(),
                            grads[0], nullptr, getEpsilonAttr(), dweight));
  out.push_back(dweight);
  return success();
}

LogicalResult AddRmsNormOp::buildVJP(OpBuilder &b, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  Value dy = grads[0], dsum = grads[1];
  if (!dy) { // only the sum is used
    out.append({dsum, dsum, nullptr});
    return success();
  }
  Value dweight;
  // As for add_layer_norm: a sum the forward writes anyway is read once.
  bool sumKept = !getSum().use_empty();
  Value ds = rmsNormGrad(b, getLoc(), sumKept ? getSum() : getLhs(),
                         sumKept ? Value() : getRhs(), getWeight(), dy, dsum,
                         getEpsilonAttr(), dweight);
  out.append({ds, ds, dweight});
  return success();
}

bool mlir::tx::dependsOnParameter(Value value) {
  SmallVector<Value> work = {value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue; // an entry input, or seen
    if (isa<ParamOp>(def))
      return true;
    work.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

LogicalResult RopeOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  // A rotation: its gradient is the inverse rotation of the output's.
  SmallVector<NamedAttribute> attrs = {named(b, "heads", getHeadsAttr()),
                                       named(b, "base", getBaseAttr())};
  if (getRotaryDims() != 0)
    attrs.push_back(named(b, "rotary_dims", getRotaryDimsAttr()));
  if (!getInverse())
    attrs.push_back(named(b, "inverse", b.getUnitAttr()));
  // Angles from positions (arange), constants or entry inputs take no
  // gradient; a table that depends on a parameter would need one.
  if (getAngles() && dependsOnParameter(getAngles()))
    return emitOpError("gradient through rope angles that depend on a "
                       "parameter is not implemented");
  SmallVector<Value> operands = {grads[0]};
  if (Value angles = getAngles())
    operands.push_back(angles);
  auto grad = make<RopeOp>(b, getLoc(), operands, attrs);
  // The decoding offset (tx-decode-step) holds for the gradient too.
  if (Attribute offset = (*this)->getAttr("tx.position_offset"))
    grad.getDefiningOp()->setAttr("tx.position_offset", offset);
  out.push_back(grad);
  if (getAngles())
    out.push_back(nullptr);
  return success();
}

namespace {

/// The logits' gradient of a cross-entropy (tx.cross_entropy or its
/// training form) from the saved `lse`, or recomputing it when `lse` is
/// null; the targets get none.
template <typename Loss>
void crossEntropyGrads(OpBuilder &b, Loss loss, Value dloss, Value lse,
                       SmallVectorImpl<Value> &out) {
  SmallVector<Value> operands = {loss.getLogits(), loss.getTargets(), dloss};
  if (lse)
    operands.push_back(lse);
  out.push_back(make<CrossEntropyGradOp>(
      b, loss.getLoc(), operands,
      {named(b, "ignore_index", loss.getIgnoreIndexAttr()),
       named(b, "label_smoothing", loss.getLabelSmoothingAttr())}));
  out.push_back(nullptr);
}

} // namespace

LogicalResult CrossEntropyOp::buildVJP(OpBuilder &b, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  // tx-autodiff turns the training loss into tx.cross_entropy_train, which
  // saves the lse; without it the gradient recomputes each row's.
  crossEntropyGrads(b, *this, grads[0], /*lse=*/nullptr, out);
  return success();
}

LogicalResult CrossEntropyTrainOp::buildVJP(OpBuilder &b, ValueRange grads,
                                            SmallVectorImpl<Value> &out) {
  crossEntropyGrads(b, *this, grads[0], getLse(), out);
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes and reductions
//===----------------------------------------------------------------------===//

LogicalResult CastOp::buildVJP(OpBuilder &b, ValueRange grads,
                               SmallVectorImpl<Value> &out) {
  // The gradient flows back in the input's type.
  if (grads[0].getType() == getInput().getType())
    out.push_back(grads[0]);
  else
    out.push_back(
        b.create<CastOp>(getLoc(), getInput().getType(), grads[0]));
  return success();
}

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ValueRange grads,
                                  SmallVectorImpl<Value> &out) {
  out.push_back(
      b.create<ReshapeOp>(getLoc(), getInput().getType(), grads[0]));
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  out.push_back(make<TransposeOp>(
      b, getLoc(), {grads[0]},
      {named(b, "permutation", b.getDenseI64ArrayAttr(inverse))}));
  return success();
}

LogicalResult SplitHeadsOp::buildVJP(OpBuilder &b, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  out.push_back(make<MergeHeadsOp>(b, getLoc(), {grads[0]}));
  return success();
}

LogicalResult MergeHeadsOp::buildVJP(OpBuilder &b, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  int64_t heads = cast<RankedTensorType>(getInput().getType()).getShape()[1];
  out.push_back(make<SplitHeadsOp>(
      b, getLoc(), {grads[0]},
      {named(b, "heads", b.getI64IntegerAttr(heads))}));
  return success();
}

/// dy of a reduction broadcast back to the input; for a mean, divided by
/// the number of elements it averaged (tx.reduce_mean_grad counts them at
/// run time, so means over symbolic dimensions work too).
static LogicalResult reduceGrad(OpBuilder &b, Operation *op, Value input,
                                ArrayRef<int64_t> axes, bool keepdim,
                                bool mean, Value dy,
                                SmallVectorImpl<Value> &out) {
  Location loc = op->getLoc();
  auto inType = cast<RankedTensorType>(input.getType());
  Shape in = getShape(inType);
  llvm::SmallDenseSet<int64_t> reduced;
  for (int64_t axis : axes)
    reduced.insert(axis < 0 ? axis + inType.getRank() : axis);
  Shape kept;
  for (int64_t i = 0, e = in.size(); i < e; ++i)
    kept.push_back(reduced.count(i) ? Dim::fixed(1) : in[i]);
  Value grad = dy;
  if (!keepdim)
    grad = b.create<ReshapeOp>(loc, getTensorType(kept, inType.getElementType()),
                               grad);
  if (mean)
    grad = b.create<ReduceMeanGradOp>(loc, inType, grad);
  else
    grad = b.create<BroadcastToOp>(loc, inType, grad);
  out.push_back(grad);
  return success();
}

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  return reduceGrad(b, *this, getInput(), getAxes(), getKeepdim(),
                    /*mean=*/false, grads[0], out);
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return reduceGrad(b, *this, getInput(), getAxes(), getKeepdim(),
                    /*mean=*/true, grads[0], out);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionTrainOp::buildVJP(OpBuilder &b, ValueRange grads,
                                         SmallVectorImpl<Value> &out) {
  if (getDropout().convertToDouble() > 0.0 && failed(needsRng(*this)))
    return failure();
  attentionGrads(b, getLoc(), *this, getQuery(), getKey(), getValue(),
                 getMask(), getResult(), getLse(), grads[0], out);
  return success();
}

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  // tx-autodiff turns training attention into tx.attention_train, which
  // saves the lse. Here the forward is recomputed for it.
  if (getDropout().convertToDouble() > 0.0 && failed(needsRng(*this)))
    return failure();
  SmallVector<NamedAttribute> attrs(getOperation()->getAttrs());
  SmallVector<Value> operands = {getQuery(), getKey(), getValue()};
  if (getMask())
    operands.push_back(getMask());
  auto recompute = b.create<AttentionTrainOp>(getLoc(), operands, attrs);
  attentionGrads(b, getLoc(), *this, getQuery(), getKey(), getValue(),
                 getMask(), recompute.getResult(), recompute.getLse(),
                 grads[0], out);
  return success();
}
