//===- LowerEntries.cpp - planned tx entries to runtime calls and loops ---===//
//
// tx-lower-entries: turns each planned entry into the C-callable function
//
//   int32_t txc_entry_<name>(txrt_context *ctx, char *params, char *arena,
//                            const int64_t *dims, void *const *inputs,
//                            void *const *outputs)
//
// Every tx tensor becomes a pointer: entry inputs are read from `inputs`,
// parameters live at their offset in `params`, intermediates at their
// planned offset in `arena`. Heavy ops become calls into libtxrt (through
// RuntimeAPI) whose status is checked after each call; element-wise and
// layout glue becomes linalg.generic on memref views of those pointers, which
// the rest of the pipeline turns into loops that LLVM vectorizes. Results are
// copied to `outputs`.
//
//===----------------------------------------------------------------------===//
#include "EntryLowering.h"
#include "txc/Transforms/EntrySignature.h"

#include "txc/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <type_traits>

namespace mlir::tx {
#define GEN_PASS_DEF_LOWERENTRIESPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;
using mlir::tx::detail::EntryLowering;

/// "[2, 3, 2]": the first `rank` dims of `type` (symbols by name).
static std::string formatBatch(RankedTensorType type, int64_t rank) {
  std::string text = "[";
  Shape shape = getShape(type);
  for (int64_t i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += shape[size_t(i)].isSymbolic()
                ? shape[size_t(i)].symbol.getValue().str()
                : std::to_string(shape[size_t(i)].size);
  }
  return text + "]";
}

LogicalResult EntryLowering::lower() {
  auto kind = entry->getAttrOfType<StringAttr>("tx.entry");
  isTrain = kind && kind.getValue() == "train";
  loc = entry.getLoc();
  builder.setInsertionPointAfter(entry);
  Type ptr = ptrType();
  auto fn = builder.create<func::FuncOp>(
      loc, ("txc_entry_" + entry.getSymName()).str(),
      builder.getFunctionType({ptr, ptr, ptr, ptr, ptr, ptr},
                              {builder.getI32Type()}));
  Block *body = fn.addEntryBlock();
  exitBlock = builder.createBlock(&fn.getBody(), fn.getBody().end(),
                                  {builder.getI32Type()}, {loc});
  builder.create<func::ReturnOp>(loc, exitBlock->getArgument(0));
  builder.setInsertionPointToStart(body);
  ctx = body->getArgument(0);
  params = body->getArgument(1);
  arena = body->getArgument(2);
  dims = body->getArgument(3);
  inputs = body->getArgument(4);
  outputs = body->getArgument(5);
  // Whatever the status, the exit releases the context and arena that
  // txrt_check_entry claimed for this call (none when it failed).
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(exitBlock);
    builder.create<func::CallOp>(
        loc, getOrDeclareRuntimeFn(module, RuntimeFn::EntryDone),
        ValueRange{ctx, arena});
  }

  // The dims the entry reads (its types'): only those are loaded and
  // checked, so a caller may leave the others out (examples/embed).
  llvm::SmallDenseSet<StringAttr> used;
  auto addDims = [&](TypeRange types) {
    for (Type type : types)
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        for (const Dim &dim : getShape(tensor))
          if (dim.isSymbolic())
            used.insert(dim.symbol);
  };
  addDims(entry.getArgumentTypes());
  entry.walk([&](Operation *op) {
    addDims(op->getOperandTypes());
    addDims(op->getResultTypes());
  });
  auto order = module->getAttrOfType<DictionaryAttr>("tx.dims");

  // Before anything is read: each dim in [0, its bound] (a larger one runs
  // past the arena), no NULL where the entry will read (txrt_check_entry).
  {
    SmallVector<Value> checkedIndex, checkedBound;
    if (order)
      for (auto [i, attr] : llvm::enumerate(order))
        if (used.contains(attr.getName())) {
          checkedIndex.push_back(i64(int64_t(i)));
          checkedBound.push_back(
              i64(cast<IntegerAttr>(attr.getValue()).getInt()));
        }
    int64_t arenaBytes = 0;
    if (auto bytes = entry->getAttrOfType<IntegerAttr>("tx.arena_bytes"))
      arenaBytes = bytes.getInt();
    Value indexArray = checkedIndex.empty() ? nullPtr()
                                            : stackArray(checkedIndex);
    Value boundArray = checkedBound.empty() ? nullPtr()
                                            : stackArray(checkedBound);
    // The parameter arena, when the entry reads a parameter.
    int64_t paramsBytes = 0;
    if (auto bytes = module->getAttrOfType<IntegerAttr>("tx.param_arena_bytes"))
      if (entry
              .walk([](Operation *op) {
                return isa<ParamOp, StoreGradOp, AdamUpdateOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted())
        paramsBytes = bytes.getInt();
    call(RuntimeFn::CheckEntry,
         {dims, indexArray, boundArray, i64(int64_t(checkedIndex.size())),
          arena, i64(arenaBytes), inputs, i64(entry.getNumArguments()),
          outputs, i64(entry.getNumResults()), params, i64(paramsBytes)});
  }

  // Runtime sizes of the symbolic dimensions, in the module's dim order.
  if (order) {
    for (auto [i, attr] : llvm::enumerate(order)) {
      if (!used.contains(attr.getName()))
        continue;
      Value slot = builder.create<LLVM::GEPOp>(
          loc, ptr, builder.getI64Type(), dims,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      Value value =
          builder.create<LLVM::LoadOp>(loc, builder.getI64Type(), slot);
      dimValues[attr.getName()] = builder.create<arith::IndexCastOp>(
          loc, builder.getIndexType(), value);
    }
  }
  for (auto [i, arg] : llvm::enumerate(entry.getArguments()))
    ptrs[arg] = loadPtr(inputs, i);

  // A cache written in place (decode_step, lm_step) takes the new positions
  // at its last rows: with fewer rows than new ones (cache 1, T 3, each in
  // its range) the write began before the caller's buffer.
  for (auto [i, arg] : llvm::enumerate(entry.getArguments()))
    for (Operation *user : arg.getUsers())
      if (auto write = dyn_cast<CacheWriteOp>(user);
          write && write.getCache() == arg) {
        auto rows = [&](Value v) {
          return toI64(dimSizes(cast<RankedTensorType>(v.getType()))[1]);
        };
        Value written = rows(write.getUpdate());
        Value held = rows(arg);
        call(RuntimeFn::CheckCacheRows, {i64(int64_t(i)), written, held});
        break;
      }

  // A fixed position of a symbolic dim (`x[:, 0]`, `x[:, -1:]`, a slice
  // with a static size, an argmax along it) needs that many entries: with the
  // dim at 0, which an entry otherwise accepts, it read before or past the
  // caller's buffer. The most any slice needs, per dim.
  {
    llvm::MapVector<StringAttr, int64_t> minimum;
    entry.walk([&](SliceOp slice) {
      Shape in = getShape(cast<RankedTensorType>(slice.getInput().getType()));
      Shape out = getShape(cast<RankedTensorType>(slice.getType()));
      ArrayRef<int64_t> starts = slice.getStarts();
      SmallVector<int64_t> strides = slice.getStrideValues();
      for (size_t i = 0; i < in.size(); ++i) {
        if (!in[i].isSymbolic() || out[i].isSymbolic() || out[i].size == 0)
          continue;
        int64_t start = starts[i];
        int64_t needed =
            start >= 0 ? start + (out[i].size - 1) * strides[i] + 1 : -start;
        int64_t &slot = minimum[in[i].symbol];
        slot = std::max(slot, needed);
      }
    });
    // argmax along a symbolic dim needs one entry: along none it has no
    // index to give (torch refuses an empty reduction).
    entry.walk([&](ArgmaxOp argmax) {
      auto type = cast<RankedTensorType>(argmax.getInput().getType());
      Shape in = getShape(type);
      int64_t axis = argmax.getAxis();
      if (axis < 0)
        axis += type.getRank();
      if (in[axis].isSymbolic()) {
        int64_t &slot = minimum[in[axis].symbol];
        slot = std::max<int64_t>(slot, 1);
      }
    });
    if (order)
      for (auto [i, attr] : llvm::enumerate(order)) {
        auto it = minimum.find(attr.getName());
        if (it == minimum.end() || it->second <= 0)
          continue;
        call(RuntimeFn::CheckDimMin,
             {i64(int64_t(i)), toI64(dimValues.lookup(attr.getName())),
              i64(it->second)});
      }
  }

  // Training entries read the step and seed the driver set (dropout masks,
  // the learning rate); others use 0.
  if (isTrain) {
    auto slotType = MemRefType::get({2}, builder.getI64Type());
    Value slots = builder.create<memref::AllocaOp>(loc, slotType);
    Value stepPtr = pointerOf(slots);
    Value seedPtr = offsetPtr(stepPtr, i64(8));
    call(RuntimeFn::TrainState, {stepPtr, seedPtr});
    stepValue = builder.create<memref::LoadOp>(loc, slots, ValueRange{index(0)});
    seedValue = builder.create<memref::LoadOp>(loc, slots, ValueRange{index(1)});
  } else {
    stepValue = i64(0);
    seedValue = i64(0);
  }

  // Every symbolic dimension needs its runtime value.
  WalkResult missing = entry.walk([&](Operation *op) {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type type : types)
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        for (const Dim &dim : getShape(tensor))
          if (dim.isSymbolic() && !dimValues.count(dim.symbol)) {
            op->emitOpError("uses dimension '")
                << dim.symbol.getValue()
                << "' that the module's tx.dims does not declare";
            return WalkResult::interrupt();
          }
    return WalkResult::advance();
  });
  if (missing.wasInterrupted())
    return failure();

  Block &source = entry.front();
  for (Operation &op : source.without_terminator())
    if (failed(lowerOp(&op)))
      return failure();

  auto ret = cast<func::ReturnOp>(source.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    std::optional<int64_t> output = getPlannedOutput(value);
    if (output && *output == int64_t(i))
      continue; // computed in place
    auto type = cast<RankedTensorType>(value.getType());
    Value out = viewAt(loadPtr(outputs, i), type);
    builder.create<memref::CopyOp>(loc, view(value), out);
  }
  // Through the exit, which releases the call's claims.
  builder.create<cf::BranchOp>(loc, exitBlock, ValueRange{i32(0)});
  return success();
}

void EntryLowering::recordSite(int64_t id) {
  if (!siteTable)
    return;
  Builder b(context);
  Operation *op = currentOp;
  siteTable->push_back(b.getDictionaryAttr({
      b.getNamedAttr("site", b.getI64IntegerAttr(id)),
      b.getNamedAttr("entry", b.getStringAttr(entry.getSymName())),
      b.getNamedAttr("op", b.getStringAttr(op ? op->getName().stripDialect()
                                              : StringRef("entry"))),
      b.getNamedAttr("loc", op ? Attribute(op->getLoc())
                               : Attribute(entry.getLoc())),
  }));
}

CastOp EntryLowering::copyByProducer(Value value) {
  for (Operation *user : value.getUsers())
    if (auto castOp = dyn_cast<CastOp>(user))
      if (castOp.getByProducer() && castOp.getInput() == value)
        return castOp;
  return nullptr;
}

FailureOr<Value> EntryLowering::plannedPtr(Operation *op, Value copy) {
  if (std::optional<int64_t> output = getPlannedOutput(copy))
    return loadPtr(outputs, *output);
  std::optional<int64_t> offset = getPlannedOffset(copy);
  if (!offset)
    return fail(op, "the bf16 copy of the result has no planned offset (run "
                    "tx-plan-memory)");
  return offsetPtr(arena, i64(*offset));
}

LogicalResult EntryLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  currentOp = op;
  // Where the op's (first) result lives.
  if (op->getNumResults() > 0) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      auto decl = parameterDecl(param.getNameAttr());
      auto offset = decl ? decl->getAttrOfType<IntegerAttr>("offset") : nullptr;
      if (!offset)
        return fail(op, "parameter has no planned offset (run tx-plan-memory)");
      auto arenaBytes =
          module->getAttrOfType<IntegerAttr>("tx.param_arena_bytes");
      if (failed(checkInArena(op, offset.getInt(), param.getType(),
                              arenaBytes ? arenaBytes.getInt() : 0,
                              "the parameter arena (tx.param_arena_bytes)")))
        return failure();
      ptrs[param.getResult()] = offsetPtr(params, i64(offset.getInt()));
      return success();
    }
    if (auto constant = dyn_cast<ConstantOp>(op))
      return lowerConstant(constant);
    // The bf16 cast of a parameter with a bf16 copy (tx-precision) is that
    // copy: the Adam step and the driver keep it current.
    if (auto castOp = dyn_cast<CastOp>(op))
      if (auto param = castOp.getInput().getDefiningOp<ParamOp>()) {
        auto decl = parameterDecl(param.getNameAttr());
        if (auto copy = decl ? decl->getAttrOfType<IntegerAttr>("bf16_offset")
                             : nullptr) {
          ptrs[castOp.getResult()] = offsetPtr(params, i64(copy.getInt()));
          return success();
        }
      }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      ptrs[reshape.getResult()] = ptrs.lookup(reshape.getInput());
      return success();
    }
    // Read through strides by its users: the operand's data (which may be a
    // view at an offset into its buffer).
    if (isStridedView(op)) {
      ptrs[op->getResult(0)] = ptrs.lookup(op->getOperand(0));
      return success();
    }
    if (std::optional<LogicalResult> view = lowerOffsetView(op))
      return *view;
    // A cache write updates its cache operand's buffer in place.
    if (auto write = dyn_cast<CacheWriteOp>(op))
      ptrs[write.getResult()] = ptrs.lookup(write.getCache());
    for (Value result :
         isa<CacheWriteOp>(op) ? ValueRange{} : ValueRange(op->getResults())) {
      if (std::optional<int64_t> output = getPlannedOutput(result)) {
        ptrs[result] = loadPtr(outputs, *output);
        continue;
      }
      std::optional<int64_t> offset = getPlannedOffset(result);
      if (!offset)
        return fail(op, "result has no planned offset (run tx-plan-memory)");
      auto arenaBytes = entry->getAttrOfType<IntegerAttr>("tx.arena_bytes");
      if (failed(checkInArena(op, *offset, result.getType(),
                              arenaBytes ? arenaBytes.getInt() : 0,
                              "the entry's arena (tx.arena_bytes)")))
        return failure();
      ptrs[result] = offsetPtr(arena, i64(*offset));
    }
  }
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // A norm whose output has a cast its kernel writes (tx.cast by_producer)
  // calls the kernel's bf16 form with that cast's buffer as y_bf16.
  auto callNorm = [&](Operation *norm, RuntimeFn plain, RuntimeFn withCopy,
                      SmallVector<Value> &args) -> LogicalResult {
    CastOp copy = copyByProducer(norm->getResult(0));
    if (!copy) {
      call(plain, args);
      return success();
    }
    FailureOr<Value> copyPtr = plannedPtr(norm, copy.getResult());
    if (failed(copyPtr))
      return failure();
    args.push_back(*copyPtr);
    call(withCopy, args);
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, SubOp, MulOp, DivOp>([&](auto binary) {
        Operation *o = binary.getOperation();
        elementwise(binary.getResult(), {binary.getLhs(), binary.getRhs()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      if (isa<AddOp>(o))
                        return b.create<arith::AddFOp>(l, a[0], a[1]);
                      if (isa<SubOp>(o))
                        return b.create<arith::SubFOp>(l, a[0], a[1]);
                      if (isa<MulOp>(o))
                        return b.create<arith::MulFOp>(l, a[0], a[1]);
                      return b.create<arith::DivFOp>(l, a[0], a[1]);
                    });
        return success();
      })
      .Case([&](NegOp neg) {
        elementwise(neg.getResult(), {neg.getInput()},
                    [](OpBuilder &b, Location l, ValueRange a) -> Value {
                      return b.create<arith::NegFOp>(l, a[0]);
                    });
        return success();
      })
      .Case([&](ScaleOp scale) {
        float factor = scale.getFactor().convertToFloat();
        elementwise(scale.getResult(), {scale.getInput()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value f = b.create<arith::ConstantFloatOp>(
                          l, APFloat(factor), b.getF32Type());
                      return b.create<arith::MulFOp>(l, a[0], f);
                    });
        return success();
      })
      .Case([&](GeluOp gelu) {
        call(RuntimeFn::ActivationFwd,
             {site(), i32(2 /*TXRT_ACTIVATION_GELU*/),
              toI64(numElements(typeOf(gelu.getInput()))),
              ptrs.lookup(gelu.getInput()), ptrs.lookup(gelu.getResult())});
        return success();
      })
      .Case([&](MaskedFillOp fill) {
        float value = fill.getValue().convertToFloat();
        elementwise(fill.getResult(), {fill.getInput(), fill.getMask()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value v = b.create<arith::ConstantFloatOp>(
                          l, APFloat(value), b.getF32Type());
                      return b.create<arith::SelectOp>(l, a[1], v, a[0]);
                    });
        return success();
      })
      .Case([&](CmpOp cmp) {
        bool isFloat = typeOf(cmp.getLhs()).getElementType().isF32();
        CmpPredicate predicate = cmp.getPredicate();
        elementwise(
            cmp.getResult(), {cmp.getLhs(), cmp.getRhs()},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              if (isFloat) {
                arith::CmpFPredicate p =
                    predicate == CmpPredicate::eq   ? arith::CmpFPredicate::OEQ
                    : predicate == CmpPredicate::ne ? arith::CmpFPredicate::UNE
                    : predicate == CmpPredicate::lt ? arith::CmpFPredicate::OLT
                    : predicate == CmpPredicate::le ? arith::CmpFPredicate::OLE
                    : predicate == CmpPredicate::gt ? arith::CmpFPredicate::OGT
                                                    : arith::CmpFPredicate::OGE;
                return b.create<arith::CmpFOp>(l, p, a[0], a[1]);
              }
              arith::CmpIPredicate p =
                  predicate == CmpPredicate::eq   ? arith::CmpIPredicate::eq
                  : predicate == CmpPredicate::ne ? arith::CmpIPredicate::ne
                  : predicate == CmpPredicate::lt ? arith::CmpIPredicate::slt
                  : predicate == CmpPredicate::le ? arith::CmpIPredicate::sle
                  : predicate == CmpPredicate::gt ? arith::CmpIPredicate::sgt
                                                  : arith::CmpIPredicate::sge;
              return b.create<arith::CmpIOp>(l, p, a[0], a[1]);
            });
        return success();
      })
      .Case<AndOp, OrOp>([&](auto logical) {
        bool isAnd = isa<AndOp>(logical.getOperation());
        elementwise(logical.getResult(), {logical.getLhs(), logical.getRhs()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      if (isAnd)
                        return b.create<arith::AndIOp>(l, a[0], a[1]);
                      return b.create<arith::OrIOp>(l, a[0], a[1]);
                    });
        return success();
      })
      .Case([&](NotOp notOp) {
        elementwise(notOp.getResult(), {notOp.getInput()},
                    [](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value one = b.create<arith::ConstantIntOp>(l, 1, 1);
                      return b.create<arith::XOrIOp>(l, a[0], one);
                    });
        return success();
      })
      .Case([&](PaddingMaskOp mask) {
        // out[b, 0, 0, s] = ids[b, s] != pad
        int64_t pad = mask.getPad();
        auto map = AffineMap::get(4, 0,
                                  {getAffineDimExpr(0, context),
                                   getAffineDimExpr(3, context)},
                                  context);
        generic({view(mask.getIds()), view(mask.getResult())},
                {map, AffineMap::getMultiDimIdentityMap(4, context)},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value p = b.create<arith::ConstantIntOp>(l, pad, 32);
                  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne,
                                                 a[0], p);
                });
        return success();
      })
      .Case([&](CausalMaskOp mask) {
        // out[i, j] = j <= i
        generic({view(mask.getResult())},
                {AffineMap::getMultiDimIdentityMap(2, context)},
                [](OpBuilder &b, Location l, ValueRange) -> Value {
                  Value i = b.create<linalg::IndexOp>(l, 0);
                  Value j = b.create<linalg::IndexOp>(l, 1);
                  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ule,
                                                 j, i);
                });
        return success();
      })
      .Case([&](PositionalEncodingOp pe) {
        // pe[p, c] = sin(p * w) for even c, cos(p * w) for odd c, with
        // w = exp(-(c - c % 2) * ln(10000) / d).
        // Row p is position start + p: start is 0, or, for an incremental
        // decoding step (tx.position_offset = the cache dim), the number of
        // positions before the new ones.
        int64_t d = typeOf(pe.getResult()).getShape().back();
        double k = -std::log(10000.0) / double(d);
        Value start = i64(0);
        if (auto dim = pe->getAttrOfType<StringAttr>("tx.position_offset")) {
          Value total = dimValues.lookup(dim);
          if (!total)
            return fail(pe, "tx.position_offset names an unknown dimension");
          Value rowCount = dimSizes(typeOf(pe.getResult()))[0];
          start = toI64(builder.create<arith::SubIOp>(loc, total, rowCount));
        }
        Value startBuffer = builder.create<memref::AllocaOp>(
            loc, MemRefType::get({}, builder.getI64Type()));
        builder.create<memref::StoreOp>(loc, start, startBuffer, ValueRange{});
        generic({startBuffer, view(pe.getResult())},
                {AffineMap::get(2, 0, {}, context),
                 AffineMap::getMultiDimIdentityMap(2, context)},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              FloatType f32Type = b.getF32Type();
              Type i64Type = b.getI64Type();
              Value p = b.create<arith::AddIOp>(
                  l, a[0],
                  b.create<arith::IndexCastOp>(l, i64Type,
                                               b.create<linalg::IndexOp>(l, 0)));
              Value c = b.create<arith::IndexCastOp>(l, i64Type,
                                                     b.create<linalg::IndexOp>(l, 1));
              Value one = b.create<arith::ConstantIntOp>(l, 1, 64);
              Value odd = b.create<arith::AndIOp>(l, c, one);
              Value even = b.create<arith::SubIOp>(l, c, odd);
              Value evenF = b.create<arith::SIToFPOp>(l, f32Type, even);
              Value scale = b.create<arith::ConstantFloatOp>(l, APFloat(float(k)), f32Type);
              Value w = b.create<math::ExpOp>(l, b.create<arith::MulFOp>(l, evenF, scale));
              Value angle = b.create<arith::MulFOp>(
                  l, b.create<arith::SIToFPOp>(l, f32Type, p), w);
              Value isOdd = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne,
                                                    odd, b.create<arith::ConstantIntOp>(l, 0, 64));
              // One op per statement: argument order is unspecified in C++,
              // and the IR must not depend on the compiler that built txc.
              Value sine = b.create<math::SinOp>(l, angle);
              Value cosine = b.create<math::CosOp>(l, angle);
              return b.create<arith::SelectOp>(l, isOdd, cosine, sine);
            });
        return success();
      })
      .Case([&](CacheWriteOp write) {
        // cache[:, P-T+t, :] = update[:, t, :], in place (the result is the
        // cache's buffer, bound above).
        RankedTensorType update = typeOf(write.getUpdate());
        SmallVector<Value> cacheSizes = dimSizes(typeOf(write.getCache()));
        SmallVector<Value> updateSizes = dimSizes(update);
        Value cacheView = view(write.getCache());
        Value start = builder.create<arith::SubIOp>(loc, cacheSizes[1],
                                                    updateSizes[1]);
        // The index constants in their own statements: the IR must not
        // depend on the order a compiler evaluates arguments in.
        SmallVector<OpFoldResult> strides = {index(1), index(1), index(1)};
        SmallVector<OpFoldResult> offsets = {index(0), start, index(0)};
        SmallVector<OpFoldResult> sizes = {updateSizes[0], updateSizes[1],
                                           updateSizes[2]};
        Value target = builder.create<memref::SubViewOp>(loc, cacheView,
                                                         offsets, sizes,
                                                         strides);
        permuteCopy(view(write.getUpdate()), target,
                    AffineMap::getMultiDimIdentityMap(3, context));
        return success();
      })
      .Case([&](TransposeOp transpose) {
        // out[i...] = in[perm^-1 applied]: input dim perm[k] is read at
        // output position k.
        ArrayRef<int64_t> perm = transpose.getPermutation();
        SmallVector<AffineExpr> exprs(perm.size());
        for (auto [k, p] : llvm::enumerate(perm))
          exprs[p] = getAffineDimExpr(k, context);
        // Each view in its own statement, here and below: the IR must not
        // depend on the order a compiler evaluates arguments in
        // (LowerMath.cpp).
        Value out = view(transpose.getResult());
        Value in = view(transpose.getInput());
        permuteCopy(in, out, AffineMap::get(perm.size(), 0, exprs, context));
        return success();
      })
      .Case([&](SplitHeadsOp split) {
        // out[b, h, t, k] = in[b, t, h, k] (in seen as [B, T, h, d/h])
        RankedTensorType out = typeOf(split.getResult());
        Shape o = getShape(out);
        RankedTensorType in4 = getTensorType({o[0], o[2], o[1], o[3]},
                                             out.getElementType());
        auto map = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3}, context);
        Value outView = view(split.getResult());
        Value inView = viewAs(split.getInput(), in4);
        permuteCopy(inView, outView, map);
        return success();
      })
      .Case([&](MergeHeadsOp merge) {
        RankedTensorType in = typeOf(merge.getInput());
        Shape i = getShape(in);
        RankedTensorType out4 = getTensorType({i[0], i[2], i[1], i[3]},
                                              in.getElementType());
        if (isa_and_nonnull<AttentionOp, AttentionTrainOp, AttentionGradOp>(
                merge.getInput().getDefiningOp())) {
          // tx.attention already wrote [B, T, h, d]: a plain copy.
          Value to = viewAs(merge.getResult(), out4);
          Value from = viewAs(merge.getInput(), out4);
          builder.create<memref::CopyOp>(loc, from, to);
          return success();
        }
        // out[b, t, h, k] = in[b, h, t, k]
        auto map = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3}, context);
        Value outView = viewAs(merge.getResult(), out4);
        Value inView = view(merge.getInput());
        permuteCopy(inView, outView, map);
        return success();
      })
      .Case([&](DropoutOp dropout) {
        // Inference entries have no dropout left (tx-strip-dropout). In
        // training the mask comes from (seed, step, site).
        call(RuntimeFn::DropoutFwd,
             {rngSite(dropout), toI64(numElements(typeOf(dropout.getInput()))),
              f32(dropout.getRate().convertToDouble()), seedValue, stepValue,
              ptrs.lookup(dropout.getInput()), ptrs.lookup(dropout.getResult())});
        return success();
      })
      .Case([&](LinearOp linear) {
        RankedTensorType in = typeOf(linear.getInput());
        RankedTensorType w = typeOf(linear.getWeight());
        int32_t activation = static_cast<int32_t>(linear.getActivation());
        SmallVector<Value> args = {
            site(), toI64(rows(in)), i64(w.getShape()[0]),
            i64(w.getShape()[1]), ptrs.lookup(linear.getInput()),
            ptrs.lookup(linear.getWeight()),
            linear.getBias() ? ptrs.lookup(linear.getBias()) : nullPtr(),
            i32(activation)};
        if (linear.getGate())
          args.push_back(ptrs.lookup(linear.getGate()));
        args.push_back(linear.getResidual() ? ptrs.lookup(linear.getResidual())
                                            : nullPtr());
        args.push_back(ptrs.lookup(linear.getResult()));
        bool bf16 = in.getElementType().isBF16();
        call(linear.getGate() ? (bf16 ? RuntimeFn::LinearGatedFwdBf16
                                      : RuntimeFn::LinearGatedFwd)
             : bf16           ? RuntimeFn::LinearFwdBf16
                              : RuntimeFn::LinearFwd,
             args);
        return success();
      })
      .Case([&](CastOp castOp) {
        // Written by its producer's bf16 kernel (tx.cast by_producer).
        if (copyByProducer(castOp.getInput()) == castOp)
          return success();
        RankedTensorType in = typeOf(castOp.getInput());
        call(in.getElementType().isBF16() ? RuntimeFn::CastBf16ToF32
                                          : RuntimeFn::CastF32ToBf16,
             {toI64(numElements(in)), ptrs.lookup(castOp.getInput()),
              ptrs.lookup(castOp.getResult())});
        return success();
      })
      .Case([&](MatmulOp matmul) { return lowerMatmul(matmul); })
      .Case([&](LayerNormOp norm) {
        RankedTensorType in = typeOf(norm.getInput());
        call(RuntimeFn::LayerNormFwd,
             {site(), toI64(rows(in)), toI64(dimSizes(in).back()),
              ptrs.lookup(norm.getInput()), ptrs.lookup(norm.getWeight()),
              norm.getBias() ? ptrs.lookup(norm.getBias()) : nullPtr(),
              f32(norm.getEpsilon().convertToDouble()),
              ptrs.lookup(norm.getResult()), nullPtr(), nullPtr()});
        return success();
      })
      .Case([&](AddLayerNormOp norm) {
        RankedTensorType in = typeOf(norm.getLhs());
        Value sum = norm.getSum().use_empty() ? nullPtr()
                                              : ptrs.lookup(norm.getSum());
        SmallVector<Value> args = {
            site(), toI64(rows(in)), toI64(dimSizes(in).back()),
            ptrs.lookup(norm.getLhs()), ptrs.lookup(norm.getRhs()),
            ptrs.lookup(norm.getWeight()),
            norm.getBias() ? ptrs.lookup(norm.getBias()) : nullPtr(),
            f32(norm.getEpsilon().convertToDouble()),
            ptrs.lookup(norm.getResult()), sum, nullPtr(), nullPtr()};
        return callNorm(norm, RuntimeFn::AddLayerNormFwd,
                        RuntimeFn::AddLayerNormFwdBf16, args);
      })
      .Case([&](RopeOp rope) {
        // Positions start at 0, or, in an incremental decoding step
        // (tx.position_offset = the cache dim), after the cached ones.
        RankedTensorType type = typeOf(rope.getInput());
        SmallVector<Value> sizes = dimSizes(type);
        Value start = i64(0);
        if (auto dim = rope->getAttrOfType<StringAttr>("tx.position_offset")) {
          Value total = dimValues.lookup(dim);
          if (!total)
            return fail(rope, "tx.position_offset names an unknown dimension");
          start = toI64(builder.create<arith::SubIOp>(
              loc, total, sizes[sizes.size() - 2]));
        }
        int64_t heads = int64_t(rope.getHeads());
        int64_t headDim = type.getShape().back() / heads;
        // A partial rotation (rotary_dims < the head) takes the _partial
        // functions; a whole one keeps the calls it always made.
        const bool partial = rope.getRotatedDims() != headDim;
        SmallVector<Value> args = {
            site(), toI64(product(ArrayRef<Value>(sizes).drop_back(2))),
            toI64(sizes[sizes.size() - 2]), i64(heads), i64(headDim)};
        if (partial)
          args.push_back(i64(rope.getRotatedDims()));
        args.append(
            {ptrs.lookup(rope.getInput()), ptrs.lookup(rope.getResult())});
        if (Value angles = rope.getAngles()) {
          if (rope->hasAttr("tx.position_offset"))
            return fail(rope, "a rope with an angle table cannot decode at a "
                              "cache offset");
          args.append({ptrs.lookup(angles), i32(rope.getInverse() ? 1 : 0)});
          call(partial ? RuntimeFn::RopeAnglesPartial : RuntimeFn::RopeAngles,
               args);
          return success();
        }
        args.append({start, f32(rope.getBase().convertToDouble()),
                     i32(rope.getInverse() ? 1 : 0)});
        call(partial ? RuntimeFn::RopePartial : RuntimeFn::Rope, args);
        return success();
      })
      .Case([&](RmsNormOp norm) {
        RankedTensorType in = typeOf(norm.getInput());
        SmallVector<Value> args = {
            site(), toI64(rows(in)), toI64(dimSizes(in).back()),
            ptrs.lookup(norm.getInput()), nullPtr(),
            ptrs.lookup(norm.getWeight()),
            f32(norm.getEpsilon().convertToDouble()),
            ptrs.lookup(norm.getResult()), nullPtr()};
        return callNorm(norm, RuntimeFn::RmsNormFwd, RuntimeFn::RmsNormFwdBf16,
                        args);
      })
      .Case([&](AddRmsNormOp norm) {
        RankedTensorType in = typeOf(norm.getLhs());
        Value sum = norm.getSum().use_empty() ? nullPtr()
                                              : ptrs.lookup(norm.getSum());
        SmallVector<Value> args = {
            site(), toI64(rows(in)), toI64(dimSizes(in).back()),
            ptrs.lookup(norm.getLhs()), ptrs.lookup(norm.getRhs()),
            ptrs.lookup(norm.getWeight()),
            f32(norm.getEpsilon().convertToDouble()),
            ptrs.lookup(norm.getResult()), sum};
        return callNorm(norm, RuntimeFn::RmsNormFwd, RuntimeFn::RmsNormFwdBf16,
                        args);
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        RankedTensorType in = typeOf(softmax.getInput());
        int64_t axis = softmax.getAxis();
        if (axis != -1 && axis != in.getRank() - 1)
          return fail(softmax, "softmax over a dimension other than the last");
        bool isLog = isa<LogSoftmaxOp>(softmax.getOperation());
        call(RuntimeFn::SoftmaxFwd,
             {site(), toI64(rows(in)), toI64(dimSizes(in).back()),
              ptrs.lookup(softmax.getInput()), ptrs.lookup(softmax.getResult()),
              i32(isLog ? 1 : 0)});
        return success();
      })
      .Case([&](EmbeddingOp embedding) {
        RankedTensorType table = typeOf(embedding.getTable());
        call(RuntimeFn::EmbeddingFwd,
             {site(), toI64(numElements(typeOf(embedding.getIds()))),
              i64(table.getShape()[0]), i64(table.getShape()[1]),
              ptrs.lookup(embedding.getIds()), ptrs.lookup(embedding.getTable()),
              f32(1.0), nullPtr(), i64(1), ptrs.lookup(embedding.getResult())});
        return success();
      })
      .Case<CrossEntropyOp, CrossEntropyTrainOp>([&](auto loss) {
        RankedTensorType logits = typeOf(loss.getLogits());
        Value lse = nullPtr();
        if constexpr (std::is_same_v<decltype(loss), CrossEntropyTrainOp>)
          lse = ptrs.lookup(loss.getLse());
        call(RuntimeFn::CrossEntropyFwd,
             {site(), toI64(rows(logits)), toI64(dimSizes(logits).back()),
              ptrs.lookup(loss.getLogits()), ptrs.lookup(loss.getTargets()),
              i32(loss.getIgnoreIndex()),
              f32(loss.getLabelSmoothing().convertToDouble()),
              i32(0 /*TXRT_LOSS_MEAN*/), ptrs.lookup(loss.getResult()), lse,
              nullPtr(), nullPtr()});
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp>([&](auto reduce) {
        RankedTensorType in = typeOf(reduce.getInput());
        SmallVector<bool> reduced(in.getRank(), false);
        for (int64_t axis : reduce.getAxes())
          reduced[axis < 0 ? axis + in.getRank() : axis] = true;
        auto dims = reductionDims(in, reduced);
        if (!dims)
          return fail(reduce, "this reduction of " + formatType(in) +
                                  " alternates reduced and kept axes more "
                                  "than 6 times, beyond the runtime's "
                                  "reductions (rank 6): reshape to merge "
                                  "neighbouring axes");
        bool isMean = isa<ReduceMeanOp>(reduce.getOperation());
        call(RuntimeFn::Reduce,
             {site(), i32(isMean ? 1 : 0), i32(dims->first.size()),
              stackArray(dims->first), ptrs.lookup(reduce.getInput()),
              stackArray(dims->second), ptrs.lookup(reduce.getResult())});
        return success();
      })
      .Case([&](AttentionOp attention) {
        return lowerAttention(attention, attention.getQuery(),
                              attention.getKey(), attention.getValue(),
                              attention.getMask(), nullptr,
                              attention.getScaleAttr(), attention.getCausal(),
                              attention.getDropoutAttr());
      })
      .Case([&](AttentionTrainOp attention) {
        return lowerAttention(attention, attention.getQuery(),
                              attention.getKey(), attention.getValue(),
                              attention.getMask(), attention.getLse(),
                              attention.getScaleAttr(), attention.getCausal(),
                              attention.getDropoutAttr());
      })
      .Case([&](AttentionGradOp grad) { return lowerAttentionGrad(grad); })
      .Default([&](Operation *other) {
        if (std::optional<LogicalResult> math = lowerMathOp(other))
          return *math;
        if (std::optional<LogicalResult> index = lowerIndexOp(other))
          return *index;
        return lowerGradOp(other);
      });
}

LogicalResult EntryLowering::lowerConstant(ConstantOp constant) {
  auto type = cast<RankedTensorType>(constant.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  std::string name = "__txc_constant_" + std::to_string(nextGlobal++);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(module.getBody());
    builder.create<memref::GlobalOp>(
        loc, name, builder.getStringAttr("private"), memrefType,
        constant.getValue(), /*constant=*/true, /*alignment=*/nullptr);
  }
  Value global = builder.create<memref::GetGlobalOp>(loc, memrefType, name);
  ptrs[constant.getResult()] = pointerOf(global);
  return success();
}

LogicalResult EntryLowering::lowerMatmul(MatmulOp op) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t batchRank = outType.getRank() - 2;
  Shape out = getShape(outType);
  SmallVector<Value> outSizes = dimSizes(outType);

  // Dense row-major strides of a tensor (in elements).
  auto denseStrides = [&](RankedTensorType type) {
    SmallVector<Value> sizes = dimSizes(type);
    SmallVector<Value> strides(sizes.size());
    Value stride = index(1);
    for (int64_t i = sizes.size() - 1; i >= 0; --i) {
      strides[i] = stride;
      stride = builder.create<arith::MulIOp>(loc, stride, sizes[i]);
    }
    return strides;
  };
  // The address and per-dimension strides of a matmul operand, looking
  // through transposes and split_heads that are read by strides.
  // contiguous[i]: dim i's stride is dim i+1's times its size (row-major
  // between the two), which lets them merge into one.
  struct View {
    Value ptr;
    SmallVector<Value> strides;
    SmallVector<bool> contiguous;
  };
  std::function<View(Value)> operandView = [&](Value v) -> View {
    Operation *def = v.getDefiningOp();
    // A merge_heads view is its matmul's result, which that matmul wrote in
    // the merged layout: dense below.
    if (def && isStridedView(def) && !isa<MergeHeadsOp>(def)) {
      if (auto transpose = dyn_cast<TransposeOp>(def)) {
        View in = operandView(transpose.getInput());
        ArrayRef<int64_t> perm = transpose.getPermutation();
        View result{in.ptr, {}, {}};
        for (auto [j, p] : llvm::enumerate(perm)) {
          result.strides.push_back(in.strides[p]);
          result.contiguous.push_back(j + 1 < perm.size() &&
                                      perm[j + 1] == p + 1 && in.contiguous[p]);
        }
        return result;
      }
      auto split = cast<SplitHeadsOp>(def);
      View in = operandView(split.getInput()); // [B, T, h*d]
      int64_t headDim = cast<RankedTensorType>(v.getType()).getShape()[3];
      Value headStride =
          builder.create<arith::MulIOp>(loc, index(headDim), in.strides[2]);
      return {in.ptr,
              {in.strides[0], headStride, in.strides[1], in.strides[2]},
              {false, false, false, false}};
    }
    auto type = cast<RankedTensorType>(v.getType());
    return {ptrs.lookup(v), denseStrides(type),
            SmallVector<bool>(type.getRank(), true)};
  };
  // An operand's strides along the output's batch dims (0 where it
  // broadcasts), whether it may merge each with the next, and its row and
  // column strides.
  struct BatchView {
    SmallVector<Value> batch;
    SmallVector<bool> broadcast, mergesWithNext;
    Value row, col;
  };
  auto batchView = [&](RankedTensorType type, const View &view,
                       bool transposed) {
    Shape shape = getShape(type);
    int64_t rank = type.getRank(), ownBatch = rank - 2;
    BatchView result;
    for (int64_t q = 0; q < batchRank; ++q) {
      int64_t i = q - (batchRank - ownBatch);
      bool broadcast = i < 0 || (!shape[i].isSymbolic() && shape[i].size == 1 &&
                                 out[q] != shape[i]);
      result.broadcast.push_back(broadcast);
      result.batch.push_back(broadcast ? index(0) : view.strides[i]);
      result.mergesWithNext.push_back(i >= 0 && view.contiguous[i]);
    }
    result.row = view.strides[rank - 2];
    result.col = view.strides[rank - 1];
    if (transposed)
      std::swap(result.row, result.col);
    return result;
  };

  SmallVector<Value> lhsSizes = dimSizes(lhsType);
  Value m = outSizes[batchRank], n = outSizes[batchRank + 1];
  Value k = op.getTransposeLhs() ? lhsSizes[lhsType.getRank() - 2]
                                 : lhsSizes[lhsType.getRank() - 1];
  View lhsView = operandView(op.getLhs()), rhsView = operandView(op.getRhs());
  View outView{ptrs.lookup(op.getResult()), denseStrides(outType),
               SmallVector<bool>(outType.getRank(), true)};
  if (op->hasOneUse() && isa<MergeHeadsOp>(*op->user_begin()) &&
      isStridedView(*op->user_begin())) {
    // The merge_heads that consumes the result reads [B, T, h*d]: write the
    // logical [B, h, T, d] result in that layout. (Any other single reader
    // that is a strided view, a transpose or a split_heads, reads the
    // result's own dense layout.)
    SmallVector<Value> sizes = dimSizes(outType); // B, h, T, d
    Value d = sizes[3];
    Value hd = builder.create<arith::MulIOp>(loc, sizes[1], d);
    Value thd = builder.create<arith::MulIOp>(loc, sizes[2], hd);
    outView.strides = {thd, d, hd, index(1)};
    outView.contiguous.assign(4, false);
  }
  BatchView views[3] = {batchView(lhsType, lhsView, op.getTransposeLhs()),
                        batchView(rhsType, rhsView, op.getTransposeRhs()),
                        batchView(outType, outView, false)};
  // libtxrt takes two batch dims: merge adjacent ones that every operand
  // either spans row-major or broadcasts, e.g. [B, g1, g2] of a
  // grouped-query product over keys [B, g1, 1] becomes [B * g1, g2].
  SmallVector<Value> batchSizes(outSizes.begin(), outSizes.begin() + batchRank);
  while (int64_t(batchSizes.size()) > 2) {
    int64_t merge = -1;
    for (int64_t q = 0; q + 1 < int64_t(batchSizes.size()) && merge < 0; ++q) {
      bool ok = true;
      for (const BatchView &view : views)
        ok = ok && view.broadcast[q] == view.broadcast[q + 1] &&
             (view.broadcast[q] || view.mergesWithNext[q]);
      if (ok)
        merge = q;
    }
    if (merge < 0)
      return fail(op, "its batch dimensions (the result's " +
                          formatBatch(outType, batchRank) +
                          ") cannot be merged into the two the runtime's "
                          "product takes: a dimension one operand "
                          "broadcasts lies between two it does not, or one "
                          "is strided; reshape the operands so that each "
                          "one's broadcast dimensions are adjacent (or "
                          "merge the others into one)");
    batchSizes[merge] = builder.create<arith::MulIOp>(loc, batchSizes[merge],
                                                      batchSizes[merge + 1]);
    batchSizes.erase(batchSizes.begin() + merge + 1);
    // The merged dim keeps the inner one's stride (0 when both broadcast)
    // and its contiguity with the next.
    for (BatchView &view : views) {
      view.batch.erase(view.batch.begin() + merge);
      view.broadcast.erase(view.broadcast.begin() + merge);
      view.mergesWithNext.erase(view.mergesWithNext.begin() + merge);
    }
  }
  auto stridesArray = [&](const BatchView &view) {
    SmallVector<Value> batch = view.batch;
    while (batch.size() < 2)
      batch.insert(batch.begin(), index(0));
    SmallVector<Value> result;
    for (Value v : {batch[0], batch[1], view.row, view.col})
      result.push_back(toI64(v));
    return stackArray(result);
  };
  Value batch0 = batchSizes.size() >= 2 ? batchSizes[0] : index(1);
  Value batch1 = batchSizes.size() >= 1 ? batchSizes.back() : index(1);
  call(RuntimeFn::Matmul,
       {site(), toI64(batch0), toI64(batch1), toI64(m), toI64(n), toI64(k),
        lhsView.ptr, stridesArray(views[0]), rhsView.ptr,
        stridesArray(views[1]), outView.ptr, stridesArray(views[2]),
        nullPtr(), i32(0), nullPtr(), f32(1.0),
        f32(0.0)});
  return success();
}


namespace {

struct LowerEntriesPass
    : mlir::tx::impl::LowerEntriesPassBase<LowerEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    bool ok = true;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func->hasAttr("tx.entry")) {
        // Every signature type is read as a tx tensor below (an `i32`
        // result crashed the pass).
        if (failed(checkEntrySignature(func)))
          ok = false;
        entries.push_back(func);
        continue;
      }
      // The parameters are erased below: a function that is no entry and
      // reads one was left reading a parameter that no longer exists.
      func.walk([&](ParamOp param) {
        param.emitError("reads parameter ")
            << param.getNameAttr() << " in function '" << func.getSymName()
            << "', which is no entry: tx-lower-entries lowers the entries "
               "(tx.entry) and the parameters they read; call it from an "
               "entry after inlining, or make it one";
        ok = false;
      });
    }
    // The bounds each call's dims are checked against (the module's
    // tx.dims) must be the ones the arenas were planned for (the types').
    if (auto order = module->getAttrOfType<DictionaryAttr>("tx.dims"))
      for (func::FuncOp entry : entries) {
        auto mismatch = [&](Type type) {
          auto tensor = dyn_cast<RankedTensorType>(type);
          if (!tensor || !isWellFormedTensor(type))
            return false;
          for (const Dim &dim : getShape(tensor)) {
            auto bound =
                dim.isSymbolic()
                    ? dyn_cast_or_null<IntegerAttr>(order.get(dim.symbol))
                    : nullptr;
            if (dim.isSymbolic() && (!bound || bound.getInt() != dim.bound)) {
              entry.emitError("dim '")
                  << dim.symbol.getValue() << "' has bound " << dim.bound
                  << " in entry '" << entry.getSymName() << "''s types but "
                  << (bound ? "bound " + std::to_string(bound.getInt())
                            : std::string("no bound"))
                  << " in the module's tx.dims";
              return true;
            }
          }
          return false;
        };
        bool found = false;
        for (Type type : entry.getFunctionType().getInputs())
          found = found || mismatch(type);
        for (Type type : entry.getFunctionType().getResults())
          found = found || mismatch(type);
        if (found)
          ok = false;
      }
    if (!ok)
      return signalPassFailure();
    int64_t nextSite = 1, nextGlobal = 0;
    std::map<std::string, func::FuncOp> kernels;
    std::vector<Attribute> sites;
    for (func::FuncOp entry : entries) {
      EntryLowering lowering(module, entry, nextSite, nextGlobal, kernels);
      lowering.siteTable = &sites;
      if (failed(lowering.lower()))
        return signalPassFailure();
    }
    // Which op of the spec each runtime call site is: the profiler's table
    // (txc puts it in the metadata, SiteTable.h).
    module->setAttr("tx.sites", ArrayAttr::get(module.getContext(), sites));
    for (func::FuncOp entry : entries)
      entry.erase();
    for (auto param : llvm::make_early_inc_range(module.getOps<ParameterOp>()))
      param.erase();
  }
};

} // namespace

