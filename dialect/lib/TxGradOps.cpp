//===- TxGradOps.cpp - shape rules of the gradient and optimizer ops ------===//
//
// Result-type inference and verifiers of the ops tx-autodiff and
// tx-optimizer build: the training forward of attention, the gradient ops
// with their own kernels, sum_to / broadcast_to, and the parameter updates.
// Gradients have the types of what they are gradients of.
//
//===----------------------------------------------------------------------===//
#include "VerifyHelpers.h"
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::verify;

namespace {

RankedTensorType tensorOf(Value value) {
  auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  return type && isWellFormedTensor(type) ? type : nullptr;
}

/// Checks that `grad` has exactly the type of `of` (what it is the gradient
/// of).
LogicalResult checkSameType(std::optional<Location> loc, Value grad,
                            Value of, StringRef what) {
  if (grad.getType() != of.getType())
    return fail(loc, what + " must have type " + formatType(of.getType()) +
                         ", got " + formatType(grad.getType()));
  return success();
}

/// Whether `small` broadcasts to `large` (NumPy rules, `large` unchanged).
bool broadcastsTo(RankedTensorType small, RankedTensorType large) {
  Shape merged;
  std::string why;
  Shape to = getShape(large);
  return broadcastShapes(getShape(small), to, merged, why) && merged == to;
}

} // namespace

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionTrainOp::inferReturnTypes(MLIRContext *context,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  AttentionOp::Adaptor forward(adaptor.getOperands(), adaptor.getAttributes());
  if (failed(AttentionOp::inferReturnTypes(context, loc, forward, types)))
    return failure();
  Shape q = getShape(cast<RankedTensorType>(adaptor.getQuery().getType()));
  types.push_back(getTensorType(ArrayRef<Dim>(q).drop_back(),
                                Float32Type::get(context)));
  return success();
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyTrainOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  CrossEntropyOp::Adaptor forward(adaptor.getOperands(),
                                  adaptor.getAttributes());
  if (failed(CrossEntropyOp::inferReturnTypes(context, loc, forward, types)))
    return failure();
  Shape logits = getShape(cast<RankedTensorType>(adaptor.getLogits().getType()));
  types.push_back(getTensorType(ArrayRef<Dim>(logits).drop_back(),
                                Float32Type::get(context)));
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(MLIRContext *context,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  SmallVector<Value> forwardOperands = {adaptor.getQuery(), adaptor.getKey(),
                                        adaptor.getValue()};
  if (adaptor.getMask())
    forwardOperands.push_back(adaptor.getMask());
  AttentionTrainOp::Adaptor forward(forwardOperands, adaptor.getAttributes());
  SmallVector<Type> forwardTypes;
  if (failed(AttentionTrainOp::inferReturnTypes(context, loc, forward,
                                                forwardTypes)))
    return failure();
  if (adaptor.getOut().getType() != forwardTypes[0] ||
      adaptor.getDout().getType() != forwardTypes[0])
    return fail(loc, "attention_grad out and dout must have type " +
                         formatType(forwardTypes[0]));
  if (adaptor.getLse().getType() != forwardTypes[1])
    return fail(loc, "attention_grad lse must have type " +
                         formatType(forwardTypes[1]));
  types.push_back(adaptor.getQuery().getType());
  types.push_back(adaptor.getKey().getType());
  types.push_back(adaptor.getValue().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise and normalization gradients
//===----------------------------------------------------------------------===//

LogicalResult ActivationGradOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  if (failed(checkSameType(loc, adaptor.getDresult(), adaptor.getInput(),
                           "activation_grad dresult")))
    return failure();
  if (adaptor.getActivation() == Activation::none)
    return fail(loc, "activation_grad needs relu or gelu");
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult SoftmaxGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  if (failed(checkSameType(loc, adaptor.getDresult(), adaptor.getOutput(),
                           "softmax_grad dresult")))
    return failure();
  types.push_back(adaptor.getOutput().getType());
  return success();
}

LogicalResult LayerNormGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  if (!input || !weight || input.getRank() < 1 || weight.getRank() != 1 ||
      weight.getShape()[0] != input.getShape().back())
    return fail(loc, "layer_norm_grad weight must be [d] for an input [..., d]");
  if (failed(checkSameType(loc, adaptor.getDresult(), adaptor.getInput(),
                           "layer_norm_grad dresult")))
    return failure();
  if (adaptor.getRhs() &&
      failed(checkSameType(loc, adaptor.getRhs(), adaptor.getInput(),
                           "layer_norm_grad rhs")))
    return failure();
  if (adaptor.getDsum() &&
      failed(checkSameType(loc, adaptor.getDsum(), adaptor.getInput(),
                           "layer_norm_grad dsum")))
    return failure();
  types.push_back(input);
  types.push_back(weight);
  types.push_back(weight);
  return success();
}

LogicalResult RmsNormGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  if (!input || !weight || input.getRank() < 1 || weight.getRank() != 1 ||
      weight.getShape()[0] != input.getShape().back())
    return fail(loc, "rms_norm_grad weight must be [d] for an input [..., d]");
  for (auto [value, what] :
       {std::make_pair(adaptor.getDresult(), "rms_norm_grad dresult"),
        std::make_pair(adaptor.getRhs(), "rms_norm_grad rhs"),
        std::make_pair(adaptor.getDsum(), "rms_norm_grad dsum")})
    if (value && failed(checkSameType(loc, value, adaptor.getInput(), what)))
      return failure();
  types.push_back(input);
  types.push_back(weight);
  return success();
}

LogicalResult LinearGradOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  RankedTensorType dy = tensorOf(adaptor.getDresult());
  if (!input || !weight || !dy || weight.getRank() != 2 ||
      input.getRank() < 1 || dy.getRank() != input.getRank())
    return fail(loc, "linear_grad needs input [..., in], weight [out, in] and "
                     "dresult [..., out]");
  Shape in = getShape(input), out = getShape(dy);
  Shape expected(in.begin(), in.end() - 1);
  expected.push_back(Dim::fixed(weight.getShape()[0]));
  if (in.back() != Dim::fixed(weight.getShape()[1]) || out != expected)
    return fail(loc, "linear_grad dresult must be " + formatShape(expected) +
                         " for input " + formatShape(in) + " and weight " +
                         formatType(weight));
  if (input.getElementType() != weight.getElementType())
    return fail(loc, "linear_grad input " + formatType(input) +
                         " and weight " + formatType(weight) +
                         " must have the same element type");
  // Gradients are f32 whatever the operands' precision.
  Type f32 = Float32Type::get(input.getContext());
  RankedTensorType dinput = input.clone(f32);
  if (Value addend = adaptor.getAddend(); addend && addend.getType() != dinput)
    return fail(loc, "linear_grad addend " + formatType(addend.getType()) +
                         " must have dinput's type " + formatType(dinput));
  types.push_back(dinput);
  types.push_back(weight.clone(f32));
  types.push_back(getTensorType({Dim::fixed(weight.getShape()[0])}, f32));
  return success();
}

LogicalResult EmbeddingGradOp::inferReturnTypes(MLIRContext *context,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  RankedTensorType ids = tensorOf(adaptor.getIds());
  RankedTensorType dy = tensorOf(adaptor.getDresult());
  if (!ids || !dy || dy.getRank() != ids.getRank() + 1 ||
      ShapedType::isDynamic(dy.getShape().back()))
    return fail(loc, "embedding_grad needs ids [...] and dresult [..., dim]");
  int64_t vocab = static_cast<int64_t>(adaptor.getVocab());
  if (vocab <= 0)
    return fail(loc, "embedding_grad vocab must be positive");
  types.push_back(RankedTensorType::get({vocab, dy.getShape().back()},
                                        Float32Type::get(context)));
  return success();
}

LogicalResult CrossEntropyGradOp::inferReturnTypes(MLIRContext *,
                                                   std::optional<Location> loc,
                                                   Adaptor adaptor,
                                                   SmallVectorImpl<Type> &types) {
  RankedTensorType logits = tensorOf(adaptor.getLogits());
  RankedTensorType dloss = tensorOf(adaptor.getDloss());
  if (!logits || !dloss || dloss.getRank() != 0)
    return fail(loc, "cross_entropy_grad needs logits and a scalar dloss");
  if (Value lse = adaptor.getLse()) {
    RankedTensorType lseType = tensorOf(lse);
    if (!lseType || lseType.getRank() == 0 ||
        lseType.getShape() != logits.getShape().drop_back())
      return fail(loc, "cross_entropy_grad lse must be the logits' shape "
                       "without the class dimension");
  }
  types.push_back(logits);
  return success();
}

LogicalResult DropoutGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  double rate = adaptor.getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return fail(loc, "dropout_grad rate must be in [0, 1)");
  types.push_back(adaptor.getDresult().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting adjoints
//===----------------------------------------------------------------------===//

LogicalResult SumToOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getType());
  if (!broadcastsTo(result, input))
    return emitOpError("result ")
           << formatType(result) << " does not broadcast to the input "
           << formatType(input);
  return success();
}

LogicalResult BroadcastToOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getType());
  if (!broadcastsTo(input, result))
    return emitOpError("input ")
           << formatType(input) << " does not broadcast to "
           << formatType(result);
  return success();
}

//===----------------------------------------------------------------------===//
// Parameter updates
//===----------------------------------------------------------------------===//

static LogicalResult verifyGradOfParameter(Operation *op,
                                           FlatSymbolRefAttr name, Type grad,
                                           SymbolTableCollection &symbols) {
  auto parameter = symbols.lookupNearestSymbolFrom<ParameterOp>(op, name);
  if (!parameter)
    return op->emitOpError("refers to no tx.parameter named ") << name;
  if (parameter.getType() != grad)
    return op->emitOpError("gradient type ")
           << grad << " differs from parameter " << name << " of type "
           << parameter.getType();
  return success();
}

LogicalResult StoreGradOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyGradOfParameter(*this, getNameAttr(), getGrad().getType(),
                               symbols);
}

LogicalResult AdamUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyGradOfParameter(*this, getNameAttr(), getGrad().getType(),
                               symbols);
}

LogicalResult AdamUpdateOp::verify() {
  StringRef schedule = getSchedule();
  if (schedule != "noam" && schedule != "constant")
    return emitOpError("schedule must be \"noam\" or \"constant\", got \"")
           << schedule << "\"";
  auto inUnit = [](double v) { return v >= 0.0 && v < 1.0; };
  if (!inUnit(getBeta1().convertToDouble()) ||
      !inUnit(getBeta2().convertToDouble()))
    return emitOpError("beta1 and beta2 must be in [0, 1)");
  if (!(getEps().convertToDouble() > 0.0) || !(getLr().convertToDouble() > 0.0))
    return emitOpError("lr and eps must be positive");
  if (schedule == "noam" && (!(getDModel().convertToDouble() > 0.0) ||
                             !(getWarmup().convertToDouble() > 0.0)))
    return emitOpError("noam needs positive d_model and warmup");
  if (Value scale = getScale())
    if (cast<RankedTensorType>(scale.getType()).getRank() != 0)
      return emitOpError("scale must be a scalar tensor<f32>");
  return success();
}

LogicalResult GradNormOp::verify() {
  if (cast<RankedTensorType>(getType()).getRank() != 0)
    return emitOpError("result must be a scalar tensor<f32>, got ")
           << formatType(getType());
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  if (auto clip = getClip())
    if (!(clip->convertToDouble() > 0.0))
      return emitOpError("clip must be positive");
  return success();
}

//===----------------------------------------------------------------------===//
// Incremental decoding
//===----------------------------------------------------------------------===//

LogicalResult CacheWriteOp::verify() {
  Shape cache = getShape(cast<RankedTensorType>(getCache().getType()));
  Shape update = getShape(cast<RankedTensorType>(getUpdate().getType()));
  if (cache.size() != 3 || update.size() != 3 || cache[0] != update[0] ||
      cache[2] != update[2])
    return emitOpError("cache must be [B, P, d] and update [B, T, d], got ")
           << formatShape(cache) << " and " << formatShape(update);
  return success();
}
