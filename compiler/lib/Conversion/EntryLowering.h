//===- EntryLowering.h - lowering one planned entry (private) ---*- C++ -*-===//
//
// The state and helpers tx-lower-entries uses for one entry: pointers of
// every tensor, runtime dims, runtime calls with status checks, outlined
// linalg glue. The forward ops are lowered in LowerEntries.cpp, attention and
// the training ops (gradients, optimizer) in LowerTraining.cpp, tensor math
// in LowerMath.cpp, slicing and gathering in LowerIndex.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_LIB_CONVERSION_ENTRYLOWERING_H
#define TXC_LIB_CONVERSION_ENTRYLOWERING_H

#include "txc/Conversion/RuntimeAPI.h"
#include "txc/Transforms/MemoryPlan.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::tx::detail {

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

  /// Where the call sites go (the module's "tx.sites" table, SiteTable.h);
  /// null: not recorded.
  std::vector<Attribute> *siteTable = nullptr;

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
  Value site() {
    recordSite(nextSite);
    return i64(nextSite++);
  }
  /// Adds call site `id` of the op being lowered to siteTable.
  void recordSite(int64_t id);
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

  /// The i64 input and output dims of a reduction of `in` over the axes
  /// `reduced` marks, for txrt_reduce (rank 1..6): axes of static size 1
  /// are left out and neighbours of one kind (both reduced, both kept)
  /// merged, so a rank-7 broadcast's gradient (`[B, 1, 2, 1, 3, 1, 2]`)
  /// reduces as the rank 4 it is. Nothing when more than 6 runs remain.
  std::optional<std::pair<SmallVector<Value>, SmallVector<Value>>>
  reductionDims(RankedTensorType in, ArrayRef<bool> reduced) {
    SmallVector<std::pair<bool, SmallVector<Value>>> runs;
    Shape shape = getShape(in);
    for (auto [i, dim] : llvm::enumerate(shape)) {
      if (!dim.isSymbolic() && dim.size == 1)
        continue;
      if (runs.empty() || runs.back().first != reduced[i])
        runs.push_back({reduced[i], {}});
      runs.back().second.push_back(dimSize(dim));
    }
    if (runs.size() > 6)
      return std::nullopt;
    SmallVector<Value> inDims, outDims;
    for (auto &[isReduced, sizes] : runs) {
      Value size = toI64(sizes.size() == 1 ? sizes[0] : product(sizes));
      inDims.push_back(size);
      outDims.push_back(isReduced ? i64(1) : size);
    }
    if (inDims.empty()) { // every axis of size 1: a copy of one element
      inDims.push_back(i64(1));
      outDims.push_back(i64(1));
    }
    return std::make_pair(inDims, outDims);
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
    Value elements = product(sizes); // sequenced: see LowerMath.cpp
    Value bytes = builder.create<arith::MulIOp>(loc, elements,
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
    func::FuncOp &callee = runtimeFns[static_cast<unsigned>(fn)];
    if (!callee)
      callee = getOrDeclareRuntimeFn(module, fn);
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

  /// Copies tensor `from` into tensor `to` (same type) unless the two are
  /// one buffer, which the plan may or may not have made them: the check is
  /// on the addresses, at run time, so no copy reads and writes one place.
  void copyUnlessSame(Value from, Value to) {
    Value differ = builder.create<LLVM::ICmpOp>(
        loc, LLVM::ICmpPredicate::ne, ptrs.lookup(from), ptrs.lookup(to));
    Block *current = builder.getInsertionBlock();
    Block *copy = builder.createBlock(exitBlock);
    Block *next = builder.createBlock(exitBlock);
    builder.setInsertionPointToEnd(current);
    builder.create<cf::CondBranchOp>(loc, differ, copy, ValueRange{}, next,
                                     ValueRange{});
    builder.setInsertionPointToStart(copy);
    Value source = view(from); // views in their own statements (LowerMath.cpp)
    Value target = view(to);
    builder.create<memref::CopyOp>(loc, source, target);
    builder.create<cf::BranchOp>(loc, next);
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
  /// by [B, 1, 1, S] as a 3-D nest. `scalars` (0-d memrefs, values known
  /// only at run time) follow the inputs among the body's arguments.
  void elementwise(Value out, ArrayRef<Value> inputs,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                   ArrayRef<Value> scalars = {}) {
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
    for (Value scalar : scalars) {
      views.push_back(scalar);
      maps.push_back(AffineMap::get(collapsedRank, 0, {}, context));
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
  /// The cast to bf16 that the op defining `value` writes itself
  /// (tx.cast by_producer), or null.
  static CastOp copyByProducer(Value value);
  /// Where `copy`'s planned buffer lives (the producer's bf16 output).
  FailureOr<Value> plannedPtr(Operation *op, Value copy);
  LogicalResult lowerMatmul(MatmulOp op);
  LogicalResult lowerAttention(Operation *op, Value query, Value key,
                               Value value, Value mask, Value lse,
                               FloatAttr scale, bool causal, FloatAttr dropout);
  LogicalResult lowerAttentionGrad(AttentionGradOp op);
  LogicalResult lowerGradOp(Operation *op);
  /// The ops of TxMathOps.td (LowerMath.cpp); nullopt for any other op.
  std::optional<LogicalResult> lowerMathOp(Operation *op);
  /// A slice or split whose results are views into its operand
  /// (isOffsetView): points each result into the operand's data and emits
  /// no copy. nullopt for any other op (LowerIndex.cpp).
  std::optional<LogicalResult> lowerOffsetView(Operation *op);
  /// The other ops of TxIndexOps.td (LowerIndex.cpp): copies through
  /// strided subviews, gathers, arange; nullopt for any other op.
  std::optional<LogicalResult> lowerIndexOp(Operation *op);
  /// The memref of `tensor` seen through the window `starts` (negative:
  /// from the end of the dimension at run time), `sizes` of `window`'s
  /// shape and `strides`.
  Value stridedWindow(Value tensor, ArrayRef<int64_t> starts,
                      RankedTensorType window, ArrayRef<int64_t> strides);
  /// Copies `from` to `to` (memrefs of one shape) in a glue kernel.
  void copy(Value from, Value to);
  /// txrt_attention_*'s mask arguments for an attention's keep `mask` (may
  /// be null) and `fill` attribute: the mask's address, its strides over
  /// (batch, head, query, key) (0 where it broadcasts), then the fill (-inf
  /// without the attribute).
  SmallVector<Value> attentionMask(Value mask, Attribute fill);
  /// The call site of a random op: its tx.rng key (shared with its
  /// gradient, so backward regenerates the mask), else a fresh one.
  Value rngSite(Operation *op) {
    if (auto key = op->getAttrOfType<IntegerAttr>("tx.rng")) {
      recordSite(key.getInt());
      return i64(key.getInt());
    }
    return site();
  }
  /// Address of a parameter's slot (`offset`, `grad_offset`, ...).
  FailureOr<Value> paramSlot(Operation *op, FlatSymbolRefAttr name,
                             StringRef which);
  /// The module's `tx.parameter` named `name` (null if none), from a table
  /// built on the first call: `module.lookupSymbol` scans the whole module,
  /// once per parameter read that made lowering quadratic in depth.
  ParameterOp parameterDecl(FlatSymbolRefAttr name);
  LogicalResult lowerConstant(ConstantOp op);
  /// At the op, by the name a spec writes it ('matmul', not 'tx.matmul').
  LogicalResult fail(Operation *op, const Twine &why) {
    return op->emitError() << "'" << op->getName().stripDialect()
                           << "' cannot be lowered to native code: " << why;
  }
  /// Fails unless a tensor of `type` at its bounds, placed at `offset`,
  /// lies within `arenaBytes` (a hand-edited plan could place it past
  /// the arena the driver allocates).
  LogicalResult checkInArena(Operation *op, int64_t offset, Type type,
                             int64_t arenaBytes, StringRef arena) {
    std::optional<int64_t> bytes = getUpperBoundBytes(type);
    if (offset >= 0 && bytes && offset <= arenaBytes - *bytes)
      return success();
    return fail(op, "its planned offset " + std::to_string(offset) + " (" +
                        (bytes ? std::to_string(*bytes) : std::string("?")) +
                        " bytes) is not within " + arena.str() + " of " +
                        std::to_string(arenaBytes) + " bytes");
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
  // Lookups that would otherwise scan the module each time (see
  // parameterDecl); entry lowering adds no parameters and declares each
  // runtime function once.
  std::optional<llvm::DenseMap<StringAttr, ParameterOp>> parameterDecls;
  llvm::DenseMap<unsigned, func::FuncOp> runtimeFns;
  bool isTrain = false;
  Value stepValue, seedValue; // the training step and seed (i64)
};

} // namespace mlir::tx::detail

#endif // TXC_LIB_CONVERSION_ENTRYLOWERING_H
