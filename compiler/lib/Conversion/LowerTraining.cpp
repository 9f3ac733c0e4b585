//===- LowerTraining.cpp - attention, gradient and optimizer ops ----------===//
//
// The part of tx-lower-entries for fused attention (forward, training forward
// with its log-sum-exp, backward), the gradient ops with libtxrt kernels,
// sum_to / broadcast_to glue and parameter updates (store_grad,
// adam_update, grad_norm).
//
//===----------------------------------------------------------------------===//
#include "EntryLowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tx;
using mlir::tx::detail::EntryLowering;

FailureOr<Value> EntryLowering::keyLengthsOf(Operation *op, Value mask) {
  if (!mask)
    return nullPtr();
  auto padding = mask.getDefiningOp<PaddingMaskOp>();
  if (!padding)
    return fail(op, "attention masks must come from padding_mask");
  Value ids = padding.getIds();
  SmallVector<Value> idSizes = dimSizes(cast<RankedTensorType>(ids.getType()));
  auto lengthsType = MemRefType::get({ShapedType::kDynamic}, builder.getI32Type());
  Value lengths =
      builder.create<memref::AllocaOp>(loc, lengthsType, ValueRange{idSizes[0]});
  Value keyLengths = pointerOf(lengths);
  call(RuntimeFn::KeyLengths,
       {toI64(idSizes[0]), toI64(idSizes[1]), ptrs.lookup(ids),
        i32(padding.getPad()), keyLengths});
  return keyLengths;
}

/// The [B, T, h*d] tensor a split_heads operand of attention reads.
static Value splitSource(Value v) {
  if (auto split = v.getDefiningOp<SplitHeadsOp>())
    return split.getInput();
  return nullptr;
}

LogicalResult EntryLowering::lowerAttention(Operation *op, Value query,
                                            Value key, Value value, Value mask,
                                            Value lse, FloatAttr scale,
                                            bool causal, FloatAttr dropout) {
  // The kernel reads Q, K, V as [B, T, h*d] and writes O as [B, T, h*d]:
  // look through the split_heads that made the operands, and let the
  // merge_heads that consumes the result copy it as it is.
  Value q = splitSource(query), k = splitSource(key), v = splitSource(value);
  if (!q || !k || !v)
    return fail(op, "attention operands must come from tx.split_heads");
  for (Operation *user : op->getResult(0).getUsers())
    if (!isa<MergeHeadsOp, AttentionGradOp>(user))
      return fail(op, "attention results must be consumed by tx.merge_heads");
  FailureOr<Value> keyLengths = keyLengthsOf(op, mask);
  if (failed(keyLengths))
    return failure();
  auto qType = cast<RankedTensorType>(query.getType());
  auto kType = cast<RankedTensorType>(key.getType());
  SmallVector<Value> qSizes = dimSizes(qType), kSizes = dimSizes(kType);
  int64_t heads = qType.getShape()[1], headDim = qType.getShape()[3];
  int64_t ld = heads * headDim;
  call(RuntimeFn::AttentionFwd,
       {rngSite(op), toI64(qSizes[0]), i64(heads), toI64(qSizes[2]),
        toI64(kSizes[2]), i64(headDim), ptrs.lookup(q), i64(ld),
        ptrs.lookup(k), i64(ld), ptrs.lookup(v), i64(ld),
        ptrs.lookup(op->getResult(0)), i64(ld),
        lse ? ptrs.lookup(lse) : nullPtr(), *keyLengths, i32(causal ? 1 : 0),
        f32(scale.getValueAsDouble()),
        f32(isTrain ? dropout.getValueAsDouble() : 0.0), seedValue,
        stepValue});
  return success();
}

LogicalResult EntryLowering::lowerAttentionGrad(AttentionGradOp op) {
  Value q = splitSource(op.getQuery()), k = splitSource(op.getKey()),
        v = splitSource(op.getValue()), dout = splitSource(op.getDout());
  if (!q || !k || !v || !dout)
    return fail(op, "attention_grad operands must come from tx.split_heads");
  for (Value result : op->getResults())
    for (Operation *user : result.getUsers())
      if (!isa<MergeHeadsOp>(user))
        return fail(op, "attention_grad results must be consumed by "
                        "tx.merge_heads");
  FailureOr<Value> keyLengths = keyLengthsOf(op, op.getMask());
  if (failed(keyLengths))
    return failure();
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  SmallVector<Value> qSizes = dimSizes(qType), kSizes = dimSizes(kType);
  int64_t heads = qType.getShape()[1], headDim = qType.getShape()[3];
  Value ld = i64(heads * headDim);
  Value fwdSite = rngSite(op);
  call(RuntimeFn::AttentionBwd,
       {site(), fwdSite, toI64(qSizes[0]), i64(heads), toI64(qSizes[2]),
        toI64(kSizes[2]), i64(headDim), ptrs.lookup(q), ld, ptrs.lookup(k),
        ld, ptrs.lookup(v), ld, ptrs.lookup(op.getOut()), ld,
        ptrs.lookup(op.getLse()), ptrs.lookup(dout), ld,
        ptrs.lookup(op.getDquery()), ld, ptrs.lookup(op.getDkey()), ld,
        ptrs.lookup(op.getDvalue()), ld, *keyLengths,
        i32(op.getCausal() ? 1 : 0),
        f32(op.getScale().convertToDouble()),
        f32(op.getDropout().convertToDouble()), seedValue, stepValue});
  return success();
}

FailureOr<Value> EntryLowering::paramSlot(Operation *op, FlatSymbolRefAttr name,
                                          StringRef which) {
  auto decl = module.lookupSymbol<ParameterOp>(name.getAttr());
  auto offset = decl ? decl->getAttrOfType<IntegerAttr>(which) : nullptr;
  if (!offset)
    return fail(op, "parameter has no planned " + which +
                        " (run tx-plan-memory)");
  return offsetPtr(params, i64(offset.getInt()));
}

LogicalResult EntryLowering::lowerGradOp(Operation *op) {
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // A result nobody reads is not computed (the kernels take NULL).
  auto ptrOrNull = [&](Value v) { return v.use_empty() ? nullPtr() : ptrs.lookup(v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ActivationGradOp grad) {
        call(RuntimeFn::ActivationBwd,
             {site(), i32(static_cast<int32_t>(grad.getActivation())),
              toI64(numElements(typeOf(grad.getInput()))),
              ptrs.lookup(grad.getInput()), ptrs.lookup(grad.getDresult()),
              ptrs.lookup(grad.getResult())});
        return success();
      })
      .Case([&](SoftmaxGradOp grad) {
        RankedTensorType type = typeOf(grad.getOutput());
        call(RuntimeFn::SoftmaxBwd,
             {site(), toI64(rows(type)), toI64(dimSizes(type).back()),
              ptrs.lookup(grad.getOutput()), ptrs.lookup(grad.getDresult()),
              ptrs.lookup(grad.getResult()), i32(grad.getLog() ? 1 : 0)});
        return success();
      })
      .Case([&](LayerNormGradOp grad) {
        RankedTensorType type = typeOf(grad.getInput());
        Value rowsValue = toI64(rows(type));
        Value cols = toI64(dimSizes(type).back());
        Value eps = f32(grad.getEpsilon().convertToDouble());
        if (Value rhs = grad.getRhs()) {
          call(RuntimeFn::AddLayerNormBwd,
               {site(), rowsValue, cols, ptrs.lookup(grad.getInput()),
                ptrs.lookup(rhs), nullPtr(), ptrs.lookup(grad.getWeight()),
                nullPtr(), nullPtr(), eps, ptrs.lookup(grad.getDresult()),
                grad.getDsum() ? ptrs.lookup(grad.getDsum()) : nullPtr(),
                ptrs.lookup(grad.getDinput()), ptrOrNull(grad.getDweight()),
                ptrOrNull(grad.getDbias()), i32(0), i32(0)});
          return success();
        }
        call(RuntimeFn::LayerNormBwd,
             {site(), rowsValue, cols, ptrs.lookup(grad.getInput()),
              ptrs.lookup(grad.getWeight()), nullPtr(), nullPtr(), eps,
              ptrs.lookup(grad.getDresult()), ptrs.lookup(grad.getDinput()),
              ptrOrNull(grad.getDweight()), ptrOrNull(grad.getDbias()), i32(0),
              i32(0)});
        return success();
      })
      .Case([&](LinearGradOp grad) {
        RankedTensorType w = typeOf(grad.getWeight());
        call(RuntimeFn::LinearBwd,
             {site(), toI64(rows(typeOf(grad.getInput()))), i64(w.getShape()[0]),
              i64(w.getShape()[1]), ptrs.lookup(grad.getInput()),
              ptrs.lookup(grad.getWeight()), ptrs.lookup(grad.getDresult()),
              ptrOrNull(grad.getDinput()), ptrOrNull(grad.getDweight()),
              ptrOrNull(grad.getDbias()), i32(0), i32(0)});
        return success();
      })
      .Case([&](EmbeddingGradOp grad) {
        RankedTensorType table = typeOf(grad.getResult());
        call(RuntimeFn::EmbeddingBwd,
             {site(), toI64(numElements(typeOf(grad.getIds()))),
              i64(table.getShape()[0]), i64(table.getShape()[1]),
              ptrs.lookup(grad.getIds()), ptrs.lookup(grad.getDresult()),
              f32(1.0), i32(-1), ptrs.lookup(grad.getResult()), i32(0)});
        return success();
      })
      .Case([&](CrossEntropyGradOp grad) {
        RankedTensorType logits = typeOf(grad.getLogits());
        call(RuntimeFn::CrossEntropyBwd,
             {site(), toI64(rows(logits)), toI64(dimSizes(logits).back()),
              ptrs.lookup(grad.getLogits()), ptrs.lookup(grad.getTargets()),
              nullPtr(), i32(grad.getIgnoreIndex()),
              f32(grad.getLabelSmoothing().convertToDouble()),
              i32(0 /*TXRT_LOSS_MEAN*/), ptrs.lookup(grad.getDloss()),
              ptrs.lookup(grad.getResult())});
        return success();
      })
      .Case([&](DropoutGradOp grad) {
        call(RuntimeFn::DropoutBwd,
             {rngSite(grad), toI64(numElements(typeOf(grad.getDresult()))),
              f32(grad.getRate().convertToDouble()), seedValue, stepValue,
              ptrs.lookup(grad.getDresult()), ptrs.lookup(grad.getResult())});
        return success();
      })
      .Case([&](SumToOp sum) {
        RankedTensorType in = typeOf(sum.getInput()), out = typeOf(sum.getResult());
        if (in.getRank() > 6)
          return fail(sum, "sum_to supports rank <= 6");
        SmallVector<Value> in64, out64;
        for (Value v : dimSizes(in))
          in64.push_back(toI64(v));
        SmallVector<Value> outSizes = dimSizes(out);
        for (int64_t i = 0; i < in.getRank(); ++i) {
          int64_t j = i - (in.getRank() - out.getRank());
          out64.push_back(j < 0 ? i64(1) : toI64(outSizes[j]));
        }
        call(RuntimeFn::Reduce,
             {site(), i32(0 /*TXRT_REDUCE_SUM*/), i32(in.getRank()),
              stackArray(in64), ptrs.lookup(sum.getInput()), stackArray(out64),
              ptrs.lookup(sum.getResult())});
        return success();
      })
      .Case([&](BroadcastToOp broadcast) {
        elementwise(broadcast.getResult(), {broadcast.getInput()},
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; });
        return success();
      })
      .Case([&](StoreGradOp store) -> LogicalResult {
        FailureOr<Value> slot = paramSlot(store, store.getNameAttr(), "grad_offset");
        if (failed(slot))
          return failure();
        builder.create<memref::CopyOp>(loc, view(store.getGrad()),
                                       viewAt(*slot, typeOf(store.getGrad())));
        return success();
      })
      .Case([&](AdamUpdateOp adam) -> LogicalResult {
        FailureOr<Value> param = paramSlot(adam, adam.getNameAttr(), "offset");
        FailureOr<Value> m = paramSlot(adam, adam.getNameAttr(), "exp_avg_offset");
        FailureOr<Value> v = paramSlot(adam, adam.getNameAttr(), "exp_avg_sq_offset");
        if (failed(param) || failed(m) || failed(v))
          return failure();
        bool noam = adam.getSchedule() == "noam";
        auto f = [&](llvm::APFloat value) { return f32(value.convertToDouble()); };
        call(RuntimeFn::AdamStep,
             {site(), toI64(numElements(typeOf(adam.getGrad()))), *param,
              ptrs.lookup(adam.getGrad()), *m, *v,
              adam.getScale() ? ptrs.lookup(adam.getScale()) : nullPtr(),
              i32(noam ? 1 : 0), f(adam.getLr()), f(adam.getDModel()),
              f(adam.getWarmup()), f(adam.getBeta1()), f(adam.getBeta2()),
              f(adam.getEps()), f(adam.getWeightDecay())});
        return success();
      })
      .Case([&](GradNormOp norm) {
        Value out = view(norm.getResult()); // memref<f32>
        builder.create<memref::StoreOp>(loc, f32(0.0), out, ValueRange{});
        Value accumulator = ptrs.lookup(norm.getResult());
        for (Value grad : norm.getGrads())
          call(RuntimeFn::SumSquares,
               {site(), toI64(numElements(typeOf(grad))), ptrs.lookup(grad),
                accumulator});
        out = view(norm.getResult());
        Value total = builder.create<memref::LoadOp>(loc, out, ValueRange{});
        Value result = builder.create<math::SqrtOp>(loc, total);
        if (auto clip = norm.getClip()) {
          // min(1, clip / (norm + 1e-6))
          Value denominator = builder.create<arith::AddFOp>(loc, result, f32(1e-6));
          Value ratio = builder.create<arith::DivFOp>(
              loc, f32(clip->convertToDouble()), denominator);
          result = builder.create<arith::MinimumFOp>(loc, ratio, f32(1.0));
        }
        builder.create<memref::StoreOp>(loc, result, out, ValueRange{});
        return success();
      })
      .Default([&](Operation *other) {
        return fail(other, "no lowering for this op");
      });
}

