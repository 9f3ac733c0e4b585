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

#include <limits>

using namespace mlir;
using namespace mlir::tx;
using mlir::tx::detail::EntryLowering;

SmallVector<Value> EntryLowering::attentionMask(Value mask, Attribute fill) {
  float fillValue = -std::numeric_limits<float>::infinity();
  if (auto attr = dyn_cast_or_null<FloatAttr>(fill))
    fillValue = float(attr.getValueAsDouble());
  if (!mask)
    return {nullPtr(), i64(0), i64(0), i64(0), i64(0), f32(fillValue)};
  // Strides over the scores' (batch, head, query, key): the mask's dense
  // row-major strides, 0 along the axes it broadcasts (size 1 or absent).
  auto type = cast<RankedTensorType>(mask.getType());
  Shape shape = getShape(type);
  SmallVector<Value> sizes = dimSizes(type);
  SmallVector<Value> strides(4, i64(0));
  Value stride = index(1);
  for (int64_t axis = int64_t(shape.size()) - 1; axis >= 0; --axis) {
    int64_t scoreAxis = axis + 4 - int64_t(shape.size());
    bool broadcast = !shape[axis].isSymbolic() && shape[axis].size == 1;
    if (scoreAxis >= 0 && !broadcast)
      strides[scoreAxis] = toI64(stride);
    stride = builder.create<arith::MulIOp>(loc, stride, sizes[axis]);
  }
  SmallVector<Value> args = {ptrs.lookup(mask)};
  args.append(strides);
  args.push_back(f32(fillValue));
  return args;
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
  auto qType = cast<RankedTensorType>(query.getType());
  auto kType = cast<RankedTensorType>(key.getType());
  if (qType.getRank() != 4)
    return fail(op, "attention operands must be [B, h, T, d]");
  SmallVector<Value> qSizes = dimSizes(qType), kSizes = dimSizes(kType);
  int64_t heads = qType.getShape()[1], kvHeads = kType.getShape()[1];
  int64_t headDim = qType.getShape()[3];
  SmallVector<Value> args = {
      rngSite(op),     toI64(qSizes[0]), i64(heads),
      i64(kvHeads),    toI64(qSizes[2]), toI64(kSizes[2]),
      i64(headDim),    ptrs.lookup(q),   i64(heads * headDim),
      ptrs.lookup(k),  i64(kvHeads * headDim),
      ptrs.lookup(v),  i64(kvHeads * headDim),
      ptrs.lookup(op->getResult(0)), i64(heads * headDim),
      lse ? ptrs.lookup(lse) : nullPtr()};
  SmallVector<Value> maskArgs = attentionMask(mask, op->getAttr("fill"));
  args.append(maskArgs.begin(), maskArgs.end() - 1);
  args.append({i32(causal ? 1 : 0), f32(scale.getValueAsDouble()),
               maskArgs.back(),
               f32(isTrain ? dropout.getValueAsDouble() : 0.0), seedValue,
               stepValue});
  call(op->hasAttr("bf16") ? RuntimeFn::AttentionFwdBf16
                           : RuntimeFn::AttentionFwd,
       args);
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
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  if (qType.getRank() != 4)
    return fail(op, "attention operands must be [B, h, T, d]");
  SmallVector<Value> qSizes = dimSizes(qType), kSizes = dimSizes(kType);
  int64_t heads = qType.getShape()[1], kvHeads = kType.getShape()[1];
  int64_t headDim = qType.getShape()[3];
  Value ld = i64(heads * headDim), kvLd = i64(kvHeads * headDim);
  Value fwdSite = rngSite(op);
  SmallVector<Value> args = {site(),
                             fwdSite,
                             toI64(qSizes[0]),
                             i64(heads),
                             i64(kvHeads),
                             toI64(qSizes[2]),
                             toI64(kSizes[2]),
                             i64(headDim),
                             ptrs.lookup(q),
                             ld,
                             ptrs.lookup(k),
                             kvLd,
                             ptrs.lookup(v),
                             kvLd,
                             ptrs.lookup(op.getOut()),
                             ld,
                             ptrs.lookup(op.getLse()),
                             ptrs.lookup(dout),
                             ld,
                             ptrs.lookup(op.getDquery()),
                             ld,
                             ptrs.lookup(op.getDkey()),
                             kvLd,
                             ptrs.lookup(op.getDvalue()),
                             kvLd};
  SmallVector<Value> maskArgs = attentionMask(op.getMask(), op->getAttr("fill"));
  args.append(maskArgs.begin(), maskArgs.end() - 1);
  args.append({i32(op.getCausal() ? 1 : 0),
               f32(op.getScale().convertToDouble()), maskArgs.back(),
               f32(op.getDropout().convertToDouble()), seedValue, stepValue});
  call(op->hasAttr("bf16") ? RuntimeFn::AttentionBwdBf16
                           : RuntimeFn::AttentionBwd,
       args);
  return success();
}

ParameterOp EntryLowering::parameterDecl(FlatSymbolRefAttr name) {
  if (!parameterDecls) {
    parameterDecls.emplace();
    for (auto decl : module.getOps<ParameterOp>())
      parameterDecls->try_emplace(decl.getSymNameAttr(), decl);
  }
  return parameterDecls->lookup(name.getAttr());
}

FailureOr<Value> EntryLowering::paramSlot(Operation *op, FlatSymbolRefAttr name,
                                          StringRef which) {
  auto decl = parameterDecl(name);
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
        // With a dsum (the gradient of a sum the forward kept) and no rhs,
        // the input is that sum: the add + norm backward reads it directly
        // and adds dsum (the plain layer-norm backward has no dsum).
        if (grad.getRhs() || grad.getDsum()) {
          Value rhs = grad.getRhs();
          Value input = ptrs.lookup(grad.getInput());
          call(RuntimeFn::AddLayerNormBwd,
               {site(), rowsValue, cols, rhs ? input : nullPtr(),
                rhs ? ptrs.lookup(rhs) : nullPtr(), rhs ? nullPtr() : input,
                ptrs.lookup(grad.getWeight()),
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
      .Case([&](RmsNormGradOp grad) {
        RankedTensorType type = typeOf(grad.getInput());
        call(RuntimeFn::RmsNormBwd,
             {site(), toI64(rows(type)), toI64(dimSizes(type).back()),
              ptrs.lookup(grad.getInput()),
              grad.getRhs() ? ptrs.lookup(grad.getRhs()) : nullPtr(),
              ptrs.lookup(grad.getWeight()),
              f32(grad.getEpsilon().convertToDouble()),
              ptrs.lookup(grad.getDresult()),
              grad.getDsum() ? ptrs.lookup(grad.getDsum()) : nullPtr(),
              ptrs.lookup(grad.getDinput()), ptrOrNull(grad.getDweight()),
              i32(0), i32(0)});
        return success();
      })
      .Case([&](LinearGradOp grad) {
        RankedTensorType w = typeOf(grad.getWeight());
        // With an addend the product accumulates into dinput, which holds
        // the addend: the planner gives dinput the addend's buffer when it
        // can (it dies here, nothing else here reads it), else it is copied.
        Value addend = grad.getAddend();
        if (addend)
          copyUnlessSame(addend, grad.getDinput());
        call(w.getElementType().isBF16() ? RuntimeFn::LinearBwdBf16
                                         : RuntimeFn::LinearBwd,
             {site(), toI64(rows(typeOf(grad.getInput()))), i64(w.getShape()[0]),
              i64(w.getShape()[1]), ptrs.lookup(grad.getInput()),
              ptrs.lookup(grad.getWeight()), ptrs.lookup(grad.getDresult()),
              ptrOrNull(grad.getDinput()), ptrOrNull(grad.getDweight()),
              ptrOrNull(grad.getDbias()), i32(addend ? 1 : 0), i32(0)});
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
              grad.getLse() ? ptrs.lookup(grad.getLse()) : nullPtr(),
              i32(grad.getIgnoreIndex()),
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
      .Case([&](SumToOp sum) -> LogicalResult {
        RankedTensorType in = typeOf(sum.getInput()), out = typeOf(sum.getResult());
        // An axis is summed where the result has none or 1 (a broadcast's
        // gradient, tx-autodiff), kept where it has the input's size.
        auto inShape = getShape(in), outShape = getShape(out);
        SmallVector<bool> reduced;
        for (int64_t i = 0; i < in.getRank(); ++i) {
          int64_t j = i - (in.getRank() - out.getRank());
          reduced.push_back(j < 0 || (!outShape[j].isSymbolic() &&
                                      outShape[j].size == 1 &&
                                      inShape[i] != outShape[j]));
        }
        auto dims = reductionDims(in, reduced);
        if (!dims)
          // Named as the user wrote it: sum_to is tx-autodiff's.
          return sum->emitError()
                 << "the gradient of this broadcast from " << formatType(out)
                 << " to " << formatType(in)
                 << " sums over more than 6 alternating runs of broadcast "
                    "and kept axes, beyond the runtime's reductions (rank "
                    "6): reshape to merge neighbouring axes";
        call(RuntimeFn::Reduce,
             {site(), i32(0 /*TXRT_REDUCE_SUM*/), i32(dims->first.size()),
              stackArray(dims->first), ptrs.lookup(sum.getInput()),
              stackArray(dims->second), ptrs.lookup(sum.getResult())});
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
        // Views in their own statements: the IR must not depend on the
        // order a compiler evaluates arguments in (LowerMath.cpp).
        Value to = viewAt(*slot, typeOf(store.getGrad()));
        Value from = view(store.getGrad());
        builder.create<memref::CopyOp>(loc, from, to);
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
        SmallVector<Value> args = {
            site(), toI64(numElements(typeOf(adam.getGrad()))), *param,
            ptrs.lookup(adam.getGrad()), *m, *v,
            adam.getScale() ? ptrs.lookup(adam.getScale()) : nullPtr(),
            i32(noam ? 1 : 0), f(adam.getLr()), f(adam.getDModel()),
            f(adam.getWarmup()), f(adam.getBeta1()), f(adam.getBeta2()),
            f(adam.getEps()), f(adam.getWeightDecay())};
        // A parameter with a bf16 copy (tx-precision) has it rewritten by
        // the same pass.
        auto decl = parameterDecl(adam.getNameAttr());
        if (!decl || !decl->hasAttr("bf16_offset")) {
          call(RuntimeFn::AdamStep, args);
          return success();
        }
        FailureOr<Value> copy =
            paramSlot(adam, adam.getNameAttr(), "bf16_offset");
        if (failed(copy))
          return failure();
        args.push_back(*copy);
        call(RuntimeFn::AdamStepBf16, args);
        return success();
      })
      .Case([&](GradNormOp norm) {
        // The norm's buffer is in an arena: device memory under
        // --target=cuda, so it is zeroed and finished by glue kernels
        // (one-thread kernels there), never by host loads and stores.
        Value out = view(norm.getResult()); // memref<f32>
        AffineMap scalar = AffineMap::get(0, 0, context);
        generic({out}, {scalar}, [&](OpBuilder &b, Location l, ValueRange) {
          return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f))
              .getResult();
        });
        Value accumulator = ptrs.lookup(norm.getResult());
        for (Value grad : norm.getGrads())
          call(RuntimeFn::SumSquares,
               {site(), toI64(numElements(typeOf(grad))), ptrs.lookup(grad),
                accumulator});
        std::optional<double> clip;
        if (auto bound = norm.getClip())
          clip = bound->convertToDouble();
        // The sum of squares in, the norm (or min(1, clip / (norm + 1e-6)),
        // the clipping factor) out, in place.
        generic({out, out}, {scalar, scalar},
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value result = b.create<math::SqrtOp>(l, a[0]);
                  if (!clip)
                    return result;
                  auto constant = [&](double x) {
                    return b.create<arith::ConstantOp>(
                        l, b.getF32FloatAttr(float(x)));
                  };
                  Value denominator =
                      b.create<arith::AddFOp>(l, result, constant(1e-6));
                  Value ratio =
                      b.create<arith::DivFOp>(l, constant(*clip), denominator);
                  return b.create<arith::MinimumFOp>(l, ratio, constant(1.0))
                      .getResult();
                });
        return success();
      })
      .Default([&](Operation *other) {
        return fail(other, "no lowering for this op");
      });
}

