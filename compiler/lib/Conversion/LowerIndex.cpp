//===- LowerIndex.cpp - slicing, joining and gathering to views and glue --===//
//
// The part of tx-lower-entries for the ops of TxIndexOps.td. A slice or
// split piece that is one contiguous run of its operand (isOffsetView) is a
// pointer into the operand's data: no code. Other slices and pieces, the
// inputs of a concat and the gradient of a slice are copies between a dense
// memref and a strided window (memref.subview) of another, in outlined glue
// kernels that the rest of the pipeline turns into vectorized loops; the
// window's start is a run-time value where it counts from the end of a
// symbolic dimension. Gathers and their scatter-add gradients call libtxrt
// (txrt_gather, txrt_gather_bwd), which checks every index. arange is glue.
//
// Where a call takes two values that each create ops (the two views of a
// copy), they are made in statements of their own, destination first: C++
// leaves the order of evaluating arguments unspecified, and the IR must not
// depend on the compiler that built txc (LowerMath.cpp).
//
//===----------------------------------------------------------------------===//
#include "EntryLowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tx;
using mlir::tx::detail::EntryLowering;

namespace {

/// `axis` counted from the front.
int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

} // namespace

Value EntryLowering::stridedWindow(Value tensor, ArrayRef<int64_t> starts,
                                   RankedTensorType window,
                                   ArrayRef<int64_t> strides) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> sizes = dimSizes(type), windowSizes = dimSizes(window);
  SmallVector<OpFoldResult> offsets, extents, steps;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    // A negative start counts from the end of a symbolic dimension.
    if (starts[i] < 0)
      offsets.push_back(
          builder.create<arith::SubIOp>(loc, sizes[i], index(-starts[i]))
              .getResult());
    else
      offsets.push_back(builder.getIndexAttr(starts[i]));
    if (window.isDynamicDim(i))
      extents.push_back(windowSizes[i]);
    else
      extents.push_back(builder.getIndexAttr(window.getDimSize(i)));
    steps.push_back(builder.getIndexAttr(strides[i]));
  }
  return builder.create<memref::SubViewOp>(loc, view(tensor), offsets, extents,
                                           steps);
}

void EntryLowering::copy(Value from, Value to) {
  int64_t rank = cast<MemRefType>(to.getType()).getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  generic({from, to}, {identity, identity},
          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

std::optional<LogicalResult> EntryLowering::lowerOffsetView(Operation *op) {
  if (!isOffsetView(op))
    return std::nullopt;
  Value input = op->getOperand(0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<Value> sizes = dimSizes(type);
  int64_t bytes = elementBytes(type.getElementType());
  // Elements after one step along each dimension (row-major).
  SmallVector<Value> pitch(sizes.size());
  Value stride = index(1);
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; --i) {
    pitch[i] = stride;
    stride = builder.create<arith::MulIOp>(loc, stride, sizes[i]);
  }
  auto at = [&](int64_t axis, Value start) {
    Value elements = builder.create<arith::MulIOp>(loc, start, pitch[axis]);
    Value offset = builder.create<arith::MulIOp>(loc, elements, index(bytes));
    return offsetPtr(ptrs.lookup(input), toI64(offset));
  };
  if (auto slice = dyn_cast<SliceOp>(op)) {
    // Dimensions before the partial one have size 1 and those after it
    // start at 0: only one start counts, but summing all is as cheap.
    Value elements = index(0);
    for (auto [i, start] : llvm::enumerate(slice.getStarts())) {
      if (start == 0)
        continue;
      Value first =
          start < 0
              ? builder.create<arith::SubIOp>(loc, sizes[i], index(-start))
                    .getResult()
              : index(start);
      elements = builder.create<arith::AddIOp>(
          loc, elements, builder.create<arith::MulIOp>(loc, first, pitch[i]));
    }
    Value offset = builder.create<arith::MulIOp>(loc, elements, index(bytes));
    ptrs[slice.getResult()] = offsetPtr(ptrs.lookup(input), toI64(offset));
    return success();
  }
  auto split = cast<SplitOp>(op);
  int64_t axis = normalized(int64_t(split.getAxis()), type.getRank());
  int64_t first = 0;
  for (auto [result, size] : llvm::zip(split.getResults(), split.getSizes())) {
    ptrs[result] = at(axis, index(first));
    first += size;
  }
  return success();
}

std::optional<LogicalResult> EntryLowering::lowerIndexOp(Operation *op) {
  using Result = std::optional<LogicalResult>;
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // The sizes of a gather's [outer, n, inner] view of `type` around `axis`.
  auto around = [&](RankedTensorType type, int64_t axis) {
    SmallVector<Value> sizes = dimSizes(type);
    ArrayRef<Value> all(sizes);
    Value inner = toI64(product(all.drop_front(axis + 1)));
    Value n = toI64(sizes[axis]);
    Value outer = toI64(product(all.take_front(axis)));
    return std::make_tuple(outer, n, inner);
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](SliceOp slice) -> Result {
        Value to = view(slice.getResult());
        Value from =
            stridedWindow(slice.getInput(), slice.getStarts(),
                          typeOf(slice.getResult()), slice.getStrideValues());
        copy(from, to);
        return success();
      })
      .Case([&](SliceGradOp grad) -> Result {
        // Zeros, then the slice's gradient at the elements it read.
        Value out = view(grad.getResult());
        int64_t rank = typeOf(grad.getResult()).getRank();
        generic({out}, {AffineMap::getMultiDimIdentityMap(rank, context)},
                [](OpBuilder &b, Location l, ValueRange) -> Value {
                  return b.create<arith::ConstantFloatOp>(l, APFloat(0.0f),
                                                          b.getF32Type());
                });
        Value to =
            stridedWindow(grad.getResult(), grad.getStarts(),
                          typeOf(grad.getDresult()), grad.getStrideValues());
        Value from = view(grad.getDresult());
        copy(from, to);
        return success();
      })
      .Case([&](ConcatOp concat) -> Result {
        RankedTensorType type = typeOf(concat.getResult());
        int64_t axis = normalized(int64_t(concat.getAxis()), type.getRank());
        int64_t offset = 0;
        for (Value input : concat.getInputs()) {
          SmallVector<int64_t> starts(type.getRank(), 0);
          starts[axis] = offset;
          offset += typeOf(input).getDimSize(axis);
          Value to = stridedWindow(concat.getResult(), starts, typeOf(input),
                                   SmallVector<int64_t>(type.getRank(), 1));
          Value from = view(input);
          copy(from, to);
        }
        return success();
      })
      .Case([&](SplitOp split) -> Result {
        RankedTensorType type = typeOf(split.getInput());
        int64_t axis = normalized(int64_t(split.getAxis()), type.getRank());
        int64_t offset = 0;
        for (Value result : split.getResults()) {
          SmallVector<int64_t> starts(type.getRank(), 0);
          starts[axis] = offset;
          offset += typeOf(result).getDimSize(axis);
          Value to = view(result);
          Value from = stridedWindow(split.getInput(), starts, typeOf(result),
                                     SmallVector<int64_t>(type.getRank(), 1));
          copy(from, to);
        }
        return success();
      })
      .Case([&](GatherOp gather) -> Result {
        RankedTensorType type = typeOf(gather.getInput());
        int64_t axis = normalized(int64_t(gather.getAxis()), type.getRank());
        auto [outer, n, inner] = around(type, axis);
        call(RuntimeFn::Gather,
             {site(), outer, n, inner, i64(elementBytes(type.getElementType())),
              ptrs.lookup(gather.getIndices()),
              toI64(numElements(typeOf(gather.getIndices()))),
              ptrs.lookup(gather.getInput()), ptrs.lookup(gather.getResult())});
        return success();
      })
      .Case([&](GatherGradOp grad) -> Result {
        RankedTensorType type = typeOf(grad.getResult());
        int64_t axis = normalized(int64_t(grad.getAxis()), type.getRank());
        auto [outer, n, inner] = around(type, axis);
        call(RuntimeFn::GatherBwd,
             {site(), outer, n, inner, ptrs.lookup(grad.getIndices()),
              toI64(numElements(typeOf(grad.getIndices()))),
              ptrs.lookup(grad.getDresult()), ptrs.lookup(grad.getResult())});
        return success();
      })
      .Case([&](ArangeOp arange) -> Result {
        // In an incremental decoding step (tx.position_offset = the cache
        // dim) the positions follow the cached ones: start + cache - T.
        Value start = i64(arange.getStart());
        if (auto dim =
                arange->getAttrOfType<StringAttr>("tx.position_offset")) {
          Value total = dimValues.lookup(dim);
          if (!total)
            return fail(arange,
                        "tx.position_offset names an unknown dimension");
          Value length = dimSizes(typeOf(arange.getResult()))[0];
          start = builder.create<arith::AddIOp>(
              loc, start,
              toI64(builder.create<arith::SubIOp>(loc, total, length)));
        }
        Value startBuffer = builder.create<memref::AllocaOp>(
            loc, MemRefType::get({}, builder.getI64Type()));
        builder.create<memref::StoreOp>(loc, start, startBuffer, ValueRange{});
        generic({startBuffer, view(arange.getResult())},
                {AffineMap::get(1, 0, {}, context),
                 AffineMap::getMultiDimIdentityMap(1, context)},
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value i = b.create<arith::IndexCastOp>(
                      l, b.getI64Type(), b.create<linalg::IndexOp>(l, 0));
                  return b.create<arith::TruncIOp>(
                      l, b.getI32Type(),
                      b.create<arith::AddIOp>(l, i, args[0]));
                });
        return success();
      })
      .Default([](Operation *) -> Result { return std::nullopt; });
}
