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
#include "txc/Conversion/RuntimeAPI.h"
#include "txc/Transforms/MemoryPlan.h"
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <map>

namespace mlir::tx {
#define GEN_PASS_DEF_LOWERENTRIESPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// Lowers one planned entry into a new function; reports and returns
/// failure on an op it cannot lower.
class EntryLowering {
public:
  EntryLowering(ModuleOp module, func::FuncOp entry, int64_t &nextSite,
                int64_t &nextGlobal,
                std::map<std::string, func::FuncOp> &kernels)
      : module(module), entry(entry), builder(module.getContext()),
        context(module.getContext()), nextSite(nextSite),
        nextGlobal(nextGlobal), kernels(kernels) {}

  LogicalResult lower();

private:
  //===--------------------------------------------------------------------===//
  // Small builders
  //===--------------------------------------------------------------------===//

  Type ptrType() { return LLVM::LLVMPointerType::get(context); }
  Value i64(int64_t v) {
    return builder.create<arith::ConstantIntOp>(loc, v, 64);
  }
  Value i32(int64_t v) {
    return builder.create<arith::ConstantIntOp>(loc, v, 32);
  }
  Value f32(double v) {
    return builder.create<arith::ConstantFloatOp>(loc, APFloat(float(v)),
                                                  builder.getF32Type());
  }
  Value index(int64_t v) {
    return builder.create<arith::ConstantIndexOp>(loc, v);
  }
  Value nullPtr() { return builder.create<LLVM::ZeroOp>(loc, ptrType()); }
  Value toI64(Value indexValue) {
    return builder.create<arith::IndexCastOp>(loc, builder.getI64Type(),
                                              indexValue);
  }
  Value site() { return i64(nextSite++); }
  Value offsetPtr(Value base, Value byteOffsetI64) {
    return builder.create<LLVM::GEPOp>(loc, ptrType(), builder.getI8Type(),
                                       base, ValueRange{byteOffsetI64});
  }
  Value loadPtr(Value array, int64_t index) {
    Value slot = builder.create<LLVM::GEPOp>(
        loc, ptrType(), ptrType(), array,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
    return builder.create<LLVM::LoadOp>(loc, ptrType(), slot);
  }

  /// The runtime size of one dimension.
  Value dimSize(const Dim &dim) {
    if (!dim.isSymbolic())
      return index(dim.size);
    return dimValues.lookup(dim.symbol);
  }
  SmallVector<Value> dimSizes(RankedTensorType type) {
    SmallVector<Value> sizes;
    for (const Dim &dim : getShape(type))
      sizes.push_back(dimSize(dim));
    return sizes;
  }
  Value product(ArrayRef<Value> values) {
    Value result = index(1);
    for (Value value : values)
      result = builder.create<arith::MulIOp>(loc, result, value);
    return result;
  }
  Value numElements(RankedTensorType type) { return product(dimSizes(type)); }
  /// Product of every dimension but the last.
  Value rows(RankedTensorType type) {
    SmallVector<Value> sizes = dimSizes(type);
    return product(ArrayRef<Value>(sizes).drop_back());
  }
  int64_t elementBytes(Type element) {
    return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  }

  /// A stack array of i64 values; returns its address.
  Value stackArray(ArrayRef<Value> values) {
    auto type = MemRefType::get({static_cast<int64_t>(values.size())},
                                builder.getI64Type());
    Value array = builder.create<memref::AllocaOp>(loc, type);
    for (auto [i, value] : llvm::enumerate(values))
      builder.create<memref::StoreOp>(loc, value, array, ValueRange{index(i)});
    return pointerOf(array);
  }

  /// The address of a memref's first element.
  Value pointerOf(Value memref) {
    Value address =
        builder.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
    return builder.create<LLVM::IntToPtrOp>(loc, ptrType(), toI64(address));
  }

  /// A memref<?xi8> over `bytes` bytes at `ptr`.
  Value byteMemRef(Value ptr, Value bytes) {
    Type i64Type = builder.getI64Type();
    auto arrayType = LLVM::LLVMArrayType::get(i64Type, 1);
    auto descriptorType = LLVM::LLVMStructType::getLiteral(
        context, {ptrType(), ptrType(), i64Type, arrayType, arrayType});
    Value descriptor = builder.create<LLVM::UndefOp>(loc, descriptorType);
    descriptor = builder.create<LLVM::InsertValueOp>(loc, descriptor, ptr, 0);
    descriptor = builder.create<LLVM::InsertValueOp>(loc, descriptor, ptr, 1);
    descriptor =
        builder.create<LLVM::InsertValueOp>(loc, descriptor, i64(0), 2);
    descriptor = builder.create<LLVM::InsertValueOp>(
        loc, descriptor, toI64(bytes), ArrayRef<int64_t>{3, 0});
    descriptor = builder.create<LLVM::InsertValueOp>(
        loc, descriptor, i64(1), ArrayRef<int64_t>{4, 0});
    auto memrefType =
        MemRefType::get({ShapedType::kDynamic}, builder.getI8Type());
    return builder
        .create<UnrealizedConversionCastOp>(loc, memrefType, descriptor)
        .getResult(0);
  }

  /// A typed, dense, row-major memref view of `type` at `ptr`.
  Value viewAt(Value ptr, RankedTensorType type) {
    return viewWithSizes(ptr, type.getShape(), dimSizes(type),
                         type.getElementType());
  }
  /// A dense row-major memref view at `ptr` with `shape` (kDynamic where the
  /// size is only known at run time) and runtime `sizes`.
  Value viewWithSizes(Value ptr, ArrayRef<int64_t> shape,
                      ArrayRef<Value> sizes, Type element) {
    Value bytes = builder.create<arith::MulIOp>(loc, product(sizes),
                                                index(elementBytes(element)));
    Value base = byteMemRef(ptr, bytes);
    SmallVector<Value> dynamic;
    for (auto [i, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        dynamic.push_back(sizes[i]);
    auto memrefType = MemRefType::get(shape, element);
    return builder.create<memref::ViewOp>(loc, memrefType, base, index(0),
                                          dynamic);
  }
  Value view(Value tensor) {
    return viewAt(ptrs.lookup(tensor),
                  cast<RankedTensorType>(tensor.getType()));
  }
  /// `tensor` seen with another (same-size) type, e.g. [B, T, h*d] as
  /// [B, T, h, d].
  Value viewAs(Value tensor, RankedTensorType type) {
    return viewAt(ptrs.lookup(tensor), type);
  }

  //===--------------------------------------------------------------------===//
  // Runtime calls with status checks
  //===--------------------------------------------------------------------===//

  void call(RuntimeFn fn, ArrayRef<Value> args) {
    func::FuncOp callee = getOrDeclareRuntimeFn(module, fn);
    SmallVector<Value> operands = {ctx};
    operands.append(args.begin(), args.end());
    Value status =
        builder.create<func::CallOp>(loc, callee, operands).getResult(0);
    Value failed = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                                 status, i32(0));
    Block *current = builder.getInsertionBlock();
    Block *next = builder.createBlock(exitBlock);
    builder.setInsertionPointToEnd(current);
    builder.create<cf::CondBranchOp>(loc, failed, exitBlock,
                                     ValueRange{status}, next, ValueRange{});
    builder.setInsertionPointToStart(next);
  }

  //===--------------------------------------------------------------------===//
  // linalg glue
  //===--------------------------------------------------------------------===//

  /// Calls the glue kernel that runs `buildBody` on `views` (memrefs; the
  /// last is written). Kernels are outlined into private functions shared by
  /// every op with the same name, attributes and operand types, so LLVM
  /// optimizes each distinct loop nest once.
  void kernel(ArrayRef<Value> views,
              function_ref<void(OpBuilder &, Location, ValueRange)> buildBody) {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << currentOp->getName();
    for (NamedAttribute attr : currentOp->getAttrs())
      if (attr.getName() != "tx.offsets")
        os << " " << attr.getName() << "=" << attr.getValue();
    for (Value view : views)
      os << " " << view.getType();
    func::FuncOp &fn = kernels[key];
    if (!fn) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToEnd(module.getBody());
      SmallVector<Type> types;
      for (Value view : views)
        types.push_back(view.getType());
      std::string name = "__txc_kernel_" + std::to_string(kernels.size() - 1) +
                         "_" + currentOp->getName().stripDialect().str();
      fn = builder.create<func::FuncOp>(loc, name,
                                        builder.getFunctionType(types, {}));
      fn.setPrivate();
      fn->setAttr("passthrough",
                  builder.getArrayAttr({builder.getStringAttr("noinline")}));
      Block *body = fn.addEntryBlock();
      builder.setInsertionPointToStart(body);
      buildBody(builder, loc, body->getArguments());
      builder.create<func::ReturnOp>(loc);
    }
    builder.create<func::CallOp>(loc, fn, views);
  }

  /// Emits a parallel linalg.generic writing `out` (a tx value) from
  /// `inputs` (tx values, broadcast to it) with `body`. Adjacent dimensions
  /// that every operand either spans or broadcasts alike are collapsed into
  /// one, so `x / c` runs as one flat loop and a [B, h, T, S] tensor masked
  /// by [B, 1, 1, S] as a 3-D nest.
  void elementwise(Value out, ArrayRef<Value> inputs,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    auto outType = cast<RankedTensorType>(out.getType());
    Shape outShape = getShape(outType);
    int64_t rank = outShape.size();
    // stretched[i][d]: input i broadcasts along output dimension d.
    std::vector<std::vector<bool>> stretched;
    for (Value input : inputs) {
      Shape in = getShape(cast<RankedTensorType>(input.getType()));
      std::vector<bool> pattern(rank, true);
      for (size_t j = 0; j < in.size(); ++j) {
        int64_t d = rank - in.size() + j;
        pattern[d] = !in[j].isSymbolic() && in[j].size == 1 && outShape[d] != in[j];
      }
      stretched.push_back(pattern);
    }
    // Groups of adjacent dimensions with the same broadcast pattern.
    SmallVector<SmallVector<int64_t>> groups;
    for (int64_t d = 0; d < rank; ++d) {
      bool same = !groups.empty();
      for (auto &pattern : stretched)
        same = same && pattern[d] == pattern[groups.back().back()];
      if (same)
        groups.back().push_back(d);
      else
        groups.push_back({d});
    }
    SmallVector<Value> outSizes = dimSizes(outType);
    SmallVector<int64_t> collapsedShape;
    SmallVector<Value> collapsedSizes;
    for (auto &group : groups) {
      int64_t size = 1;
      SmallVector<Value> parts;
      for (int64_t d : group) {
        parts.push_back(outSizes[d]);
        size = (size == ShapedType::kDynamic || outShape[d].isSymbolic())
                   ? ShapedType::kDynamic
                   : size * outShape[d].size;
      }
      collapsedShape.push_back(size);
      collapsedSizes.push_back(product(parts));
    }
    int64_t collapsedRank = groups.size();
    SmallVector<Value> views;
    SmallVector<AffineMap> maps;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      SmallVector<int64_t> shape;
      SmallVector<Value> sizes;
      SmallVector<AffineExpr> exprs;
      for (auto [g, group] : llvm::enumerate(groups)) {
        if (stretched[i][group.front()]) {
          shape.push_back(1);
          sizes.push_back(index(1));
          exprs.push_back(getAffineConstantExpr(0, context));
        } else {
          shape.push_back(collapsedShape[g]);
          sizes.push_back(collapsedSizes[g]);
          exprs.push_back(getAffineDimExpr(g, context));
        }
      }
      Type element = cast<RankedTensorType>(input.getType()).getElementType();
      views.push_back(viewWithSizes(ptrs.lookup(input), shape, sizes, element));
      maps.push_back(AffineMap::get(collapsedRank, 0, exprs, context));
    }
    views.push_back(viewWithSizes(ptrs.lookup(out), collapsedShape,
                                  collapsedSizes, outType.getElementType()));
    maps.push_back(AffineMap::getMultiDimIdentityMap(collapsedRank, context));
    SmallVector<utils::IteratorType> iterators(collapsedRank,
                                               utils::IteratorType::parallel);
    kernel(views, [&](OpBuilder &b, Location l, ValueRange args) {
      b.create<linalg::GenericOp>(
          l, TypeRange{}, args.drop_back(), ValueRange{args.back()}, maps,
          iterators, [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value value = body(nb, nl, a.drop_back());
            nb.create<linalg::YieldOp>(nl, value);
          });
    });
  }

  /// A parallel linalg.generic over `views` (the last one is written) with
  /// `maps`, computing the written value with `body`.
  void generic(ArrayRef<Value> views, ArrayRef<AffineMap> maps,
               function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    auto outType = cast<MemRefType>(views.back().getType());
    SmallVector<utils::IteratorType> iterators(outType.getRank(),
                                               utils::IteratorType::parallel);
    kernel(views, [&](OpBuilder &b, Location l, ValueRange args) {
      b.create<linalg::GenericOp>(
          l, TypeRange{}, args.drop_back(), ValueRange{args.back()}, maps,
          iterators, [&](OpBuilder &nb, Location nl, ValueRange a) {
            nb.create<linalg::YieldOp>(nl, body(nb, nl, a.drop_back()));
          });
    });
  }

  /// Copies `in` to `out` through the permutation `inMap` (iteration space
  /// = out's dims) on explicit memref views.
  void permuteCopy(Value inView, Value outView, AffineMap inMap) {
    auto outType = cast<MemRefType>(outView.getType());
    generic({inView, outView},
            {inMap, AffineMap::getMultiDimIdentityMap(outType.getRank(), context)},
            [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  }

  //===--------------------------------------------------------------------===//
  // Per-op lowering
  //===--------------------------------------------------------------------===//

  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerMatmul(MatmulOp op);
  LogicalResult lowerAttention(Operation *op, Value query, Value key,
                               Value value, Value mask, Value lse,
                               FloatAttr scale, bool causal, FloatAttr dropout);
  LogicalResult lowerAttentionGrad(AttentionGradOp op);
  LogicalResult lowerGradOp(Operation *op);
  /// Pointer to per-batch key lengths for an attention mask (NULL: none).
  FailureOr<Value> keyLengthsOf(Operation *op, Value mask);
  /// The call site of a random op: its tx.rng key (shared with its
  /// gradient, so backward regenerates the mask), else a fresh one.
  Value rngSite(Operation *op) {
    if (auto key = op->getAttrOfType<IntegerAttr>("tx.rng"))
      return i64(key.getInt());
    return site();
  }
  /// Address of a parameter's slot (`offset`, `grad_offset`, ...).
  FailureOr<Value> paramSlot(Operation *op, FlatSymbolRefAttr name,
                             StringRef which);
  LogicalResult lowerConstant(ConstantOp op);
  LogicalResult fail(Operation *op, const Twine &why) {
    return op->emitOpError("cannot be lowered to native code: ") << why;
  }

  ModuleOp module;
  func::FuncOp entry;
  OpBuilder builder;
  MLIRContext *context;
  Location loc = UnknownLoc::get(context);
  int64_t &nextSite;
  int64_t &nextGlobal;
  std::map<std::string, func::FuncOp> &kernels;
  Operation *currentOp = nullptr;

  Value ctx, params, arena, dims, inputs, outputs;
  Block *exitBlock = nullptr;
  llvm::DenseMap<StringAttr, Value> dimValues;
  llvm::DenseMap<Value, Value> ptrs; // tx tensor -> address of its data
  bool isTrain = false;
  Value stepValue, seedValue; // the training step and seed (i64)
};

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

  // Runtime sizes of the symbolic dimensions, in the module's dim order.
  if (auto order = module->getAttrOfType<DictionaryAttr>("tx.dims")) {
    for (auto [i, attr] : llvm::enumerate(order)) {
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
  builder.create<func::ReturnOp>(loc, ValueRange{i32(0)});
  return success();
}

LogicalResult EntryLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  currentOp = op;
  // Where the op's (first) result lives.
  if (op->getNumResults() > 0) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      auto decl = module.lookupSymbol<ParameterOp>(param.getNameAttr());
      auto offset = decl ? decl->getAttrOfType<IntegerAttr>("offset") : nullptr;
      if (!offset)
        return fail(op, "parameter has no planned offset (run tx-plan-memory)");
      ptrs[param.getResult()] = offsetPtr(params, i64(offset.getInt()));
      return success();
    }
    if (auto constant = dyn_cast<ConstantOp>(op))
      return lowerConstant(constant);
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      ptrs[reshape.getResult()] = ptrs.lookup(reshape.getInput());
      return success();
    }
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
      if (!offset && isStridedView(op)) {
        // A view of an argument or a cache: its users read the operand.
        ptrs[result] = ptrs.lookup(op->getOperand(0));
        continue;
      }
      if (!offset)
        return fail(op, "result has no planned offset (run tx-plan-memory)");
      ptrs[result] = offsetPtr(arena, i64(*offset));
    }
  }
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  if (isStridedView(op))
    return success(); // read through strides by its users

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
      .Case([&](ReluOp relu) {
        elementwise(relu.getResult(), {relu.getInput()},
                    [](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value zero = b.create<arith::ConstantFloatOp>(
                          l, APFloat(0.0f), b.getF32Type());
                      return b.create<arith::MaximumFOp>(l, a[0], zero);
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
              return b.create<arith::SelectOp>(
                  l, isOdd, b.create<math::CosOp>(l, angle),
                  b.create<math::SinOp>(l, angle));
            });
        return success();
      })
      .Case([&](CacheWriteOp write) {
        // cache[:, P-T+t, :] = update[:, t, :], in place (the result is the
        // cache's buffer).
        ptrs[write.getResult()] = ptrs.lookup(write.getCache());
        RankedTensorType update = typeOf(write.getUpdate());
        SmallVector<Value> cacheSizes = dimSizes(typeOf(write.getCache()));
        SmallVector<Value> updateSizes = dimSizes(update);
        Value cacheView = view(write.getCache());
        Value start = builder.create<arith::SubIOp>(loc, cacheSizes[1],
                                                    updateSizes[1]);
        Value target = builder.create<memref::SubViewOp>(
            loc, cacheView, ArrayRef<OpFoldResult>{index(0), start, index(0)},
            ArrayRef<OpFoldResult>{updateSizes[0], updateSizes[1],
                                   updateSizes[2]},
            ArrayRef<OpFoldResult>{index(1), index(1), index(1)});
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
        permuteCopy(view(transpose.getInput()), view(transpose.getResult()),
                    AffineMap::get(perm.size(), 0, exprs, context));
        return success();
      })
      .Case([&](SplitHeadsOp split) {
        // out[b, h, t, k] = in[b, t, h, k] (in seen as [B, T, h, d/h])
        RankedTensorType out = typeOf(split.getResult());
        Shape o = getShape(out);
        RankedTensorType in4 = getTensorType({o[0], o[2], o[1], o[3]},
                                             out.getElementType());
        auto map = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3}, context);
        permuteCopy(viewAs(split.getInput(), in4), view(split.getResult()), map);
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
          builder.create<memref::CopyOp>(loc, viewAs(merge.getInput(), out4),
                                         viewAs(merge.getResult(), out4));
          return success();
        }
        // out[b, t, h, k] = in[b, h, t, k]
        auto map = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3}, context);
        permuteCopy(view(merge.getInput()), viewAs(merge.getResult(), out4), map);
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
        call(RuntimeFn::LinearFwd,
             {site(), toI64(rows(in)), i64(w.getShape()[0]),
              i64(w.getShape()[1]), ptrs.lookup(linear.getInput()),
              ptrs.lookup(linear.getWeight()),
              linear.getBias() ? ptrs.lookup(linear.getBias()) : nullPtr(),
              i32(activation),
              linear.getResidual() ? ptrs.lookup(linear.getResidual())
                                   : nullPtr(),
              ptrs.lookup(linear.getResult())});
        return success();
      })
      .Case([&](MatmulOp matmul) { return lowerMatmul(matmul); })
      .Case([&](LayerNormOp norm) {
        RankedTensorType in = typeOf(norm.getInput());
        call(RuntimeFn::LayerNormFwd,
             {site(), toI64(rows(in)), toI64(dimSizes(in).back()),
              ptrs.lookup(norm.getInput()), ptrs.lookup(norm.getWeight()),
              ptrs.lookup(norm.getBias()),
              f32(norm.getEpsilon().convertToDouble()),
              ptrs.lookup(norm.getResult()), nullPtr(), nullPtr()});
        return success();
      })
      .Case([&](AddLayerNormOp norm) {
        RankedTensorType in = typeOf(norm.getLhs());
        Value sum = norm.getSum().use_empty() ? nullPtr()
                                              : ptrs.lookup(norm.getSum());
        call(RuntimeFn::AddLayerNormFwd,
             {site(), toI64(rows(in)), toI64(dimSizes(in).back()),
              ptrs.lookup(norm.getLhs()), ptrs.lookup(norm.getRhs()),
              ptrs.lookup(norm.getWeight()), ptrs.lookup(norm.getBias()),
              f32(norm.getEpsilon().convertToDouble()),
              ptrs.lookup(norm.getResult()), sum, nullPtr(), nullPtr()});
        return success();
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
      .Case([&](CrossEntropyOp loss) {
        RankedTensorType logits = typeOf(loss.getLogits());
        call(RuntimeFn::CrossEntropyFwd,
             {site(), toI64(rows(logits)), toI64(dimSizes(logits).back()),
              ptrs.lookup(loss.getLogits()), ptrs.lookup(loss.getTargets()),
              i32(loss.getIgnoreIndex()),
              f32(loss.getLabelSmoothing().convertToDouble()),
              i32(0 /*TXRT_LOSS_MEAN*/), ptrs.lookup(loss.getResult()),
              nullPtr(), nullPtr(), nullPtr()});
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp>([&](auto reduce) {
        RankedTensorType in = typeOf(reduce.getInput());
        if (in.getRank() > 6)
          return fail(reduce, "reductions support rank <= 6");
        SmallVector<Value> inDims = dimSizes(in), outDims;
        llvm::SmallDenseSet<int64_t> axes;
        for (int64_t axis : reduce.getAxes())
          axes.insert(axis < 0 ? axis + in.getRank() : axis);
        for (int64_t i = 0; i < in.getRank(); ++i)
          outDims.push_back(axes.count(i) ? index(1) : inDims[i]);
        SmallVector<Value> in64, out64;
        for (Value v : inDims)
          in64.push_back(toI64(v));
        for (Value v : outDims)
          out64.push_back(toI64(v));
        bool isMean = isa<ReduceMeanOp>(reduce.getOperation());
        call(RuntimeFn::Reduce,
             {site(), i32(isMean ? 1 : 0), i32(in.getRank()), stackArray(in64),
              ptrs.lookup(reduce.getInput()), stackArray(out64),
              ptrs.lookup(reduce.getResult())});
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
      .Default([&](Operation *other) { return lowerGradOp(other); });
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
  if (batchRank > 2)
    return fail(op, "matmul with more than two batch dimensions");
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
  std::function<std::pair<Value, SmallVector<Value>>(Value)> operandView =
      [&](Value v) -> std::pair<Value, SmallVector<Value>> {
    Operation *def = v.getDefiningOp();
    if (def && isStridedView(def)) {
      if (auto transpose = dyn_cast<TransposeOp>(def)) {
        auto [ptr, in] = operandView(transpose.getInput());
        SmallVector<Value> strides;
        for (int64_t p : transpose.getPermutation())
          strides.push_back(in[p]);
        return {ptr, strides};
      }
      auto split = cast<SplitHeadsOp>(def);
      auto [ptr, in] = operandView(split.getInput()); // [B, T, h*d]
      int64_t headDim = cast<RankedTensorType>(v.getType()).getShape()[3];
      Value headStride = builder.create<arith::MulIOp>(loc, index(headDim), in[2]);
      return {ptr, {in[0], headStride, in[1], in[2]}};
    }
    return {ptrs.lookup(v), denseStrides(cast<RankedTensorType>(v.getType()))};
  };
  // {batch0, batch1, row, col} strides of an operand's logical view.
  auto viewStrides = [&](RankedTensorType type, ArrayRef<Value> strides,
                         bool transposed) {
    Shape shape = getShape(type);
    int64_t rank = type.getRank(), ownBatch = rank - 2;
    SmallVector<Value> batch;
    for (int64_t q = 0; q < batchRank; ++q) {
      int64_t i = q - (batchRank - ownBatch);
      bool broadcast = i < 0 || (!shape[i].isSymbolic() && shape[i].size == 1 &&
                                 out[q] != shape[i]);
      batch.push_back(broadcast ? index(0) : strides[i]);
    }
    while (batch.size() < 2)
      batch.insert(batch.begin(), index(0));
    Value row = strides[rank - 2], col = strides[rank - 1];
    if (transposed)
      std::swap(row, col);
    SmallVector<Value> result;
    for (Value v : {batch[0], batch[1], row, col})
      result.push_back(toI64(v));
    return stackArray(result);
  };

  Value batch0 = batchRank >= 2 ? outSizes[0] : index(1);
  Value batch1 = batchRank >= 1 ? outSizes[batchRank - 1] : index(1);
  Value m = outSizes[batchRank], n = outSizes[batchRank + 1];
  SmallVector<Value> lhsSizes = dimSizes(lhsType);
  Value k = op.getTransposeLhs() ? lhsSizes[lhsType.getRank() - 2]
                                 : lhsSizes[lhsType.getRank() - 1];
  auto [lhsPtr, lhsStrides] = operandView(op.getLhs());
  auto [rhsPtr, rhsStrides] = operandView(op.getRhs());
  Value aStrides = viewStrides(lhsType, lhsStrides, op.getTransposeLhs());
  Value bStrides = viewStrides(rhsType, rhsStrides, op.getTransposeRhs());
  SmallVector<Value> outStrides = denseStrides(outType);
  if (op->hasOneUse() && isStridedView(*op->user_begin())) {
    // The merge_heads that consumes the result reads [B, T, h*d]: write the
    // logical [B, h, T, d] result in that layout.
    SmallVector<Value> sizes = dimSizes(outType); // B, h, T, d
    Value d = sizes[3];
    Value hd = builder.create<arith::MulIOp>(loc, sizes[1], d);
    Value thd = builder.create<arith::MulIOp>(loc, sizes[2], hd);
    outStrides = {thd, d, hd, index(1)};
  }
  Value cStrides = viewStrides(outType, outStrides, false);
  call(RuntimeFn::Matmul,
       {site(), toI64(batch0), toI64(batch1), toI64(m), toI64(n), toI64(k),
        lhsPtr, aStrides, rhsPtr, bStrides,
        ptrs.lookup(op.getResult()), cStrides, nullPtr(), i32(0), nullPtr(),
        f32(1.0), f32(0.0)});
  return success();
}

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

struct LowerEntriesPass
    : mlir::tx::impl::LowerEntriesPassBase<LowerEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("tx.entry"))
        entries.push_back(func);
    int64_t nextSite = 1, nextGlobal = 0;
    std::map<std::string, func::FuncOp> kernels;
    for (func::FuncOp entry : entries) {
      EntryLowering lowering(module, entry, nextSite, nextGlobal, kernels);
      if (failed(lowering.lower()))
        return signalPassFailure();
    }
    for (func::FuncOp entry : entries)
      entry.erase();
    for (auto param : llvm::make_early_inc_range(module.getOps<ParameterOp>()))
      param.erase();
  }
};

} // namespace
