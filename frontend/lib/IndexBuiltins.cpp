//===- IndexBuiltins.cpp - joining, cutting and gathering builtins --------===//
//
// The PyTorch functions that join, cut and pick from tensors, as builtins:
// `concat` (torch.cat, also spelled `cat`), `stack`, `split`, `chunk`,
// `index_select`, `select`, `narrow` and `arange`. They emit the ops of
// TxIndexOps.td; `split` and `chunk` give several tensors, bound by a tuple
// assignment `a, b = chunk(x, 2, axis = -1)`. Subscripts (`x[..., :h]`) are
// in Subscripts.cpp; `select` and `narrow` share its range checks.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

using namespace mlir;
using namespace mlir::tx;
using namespace txc;
using namespace txc::detail;

namespace {

NamedAttribute axisAttr(MLIRGenImpl &gen, int64_t axis) {
  return gen.getBuilder().getNamedAttr(
      "axis", gen.getBuilder().getI64IntegerAttr(axis));
}

/// The positional arguments of a call, in order (a variadic builtin reads
/// them itself).
std::vector<const ast::Arg *> positionalArgs(const ast::CallExpr &call) {
  std::vector<const ast::Arg *> positional;
  for (const ast::Arg &arg : call.args)
    if (arg.keyword.empty())
      positional.push_back(&arg);
  return positional;
}

/// Evaluates the positional arguments of `concat` / `stack` as tensors.
std::optional<SmallVector<Value>> tensorList(MLIRGenImpl &gen,
                                             const ast::CallExpr &call) {
  std::vector<const ast::Arg *> positional = positionalArgs(call);
  if (positional.empty()) {
    gen.getDiags().error(call.getLoc(),
                         "'" + call.callee + "' needs at least one tensor",
                         "e.g. `" + call.callee + "(a, b, axis = -1)`");
    return std::nullopt;
  }
  SmallVector<Value> tensors;
  bool ok = true;
  for (const ast::Arg *arg : positional) {
    Val value = gen.genArgument(*arg->value);
    if (!value.valid()) {
      ok = false;
      continue;
    }
    if (!value.isTensor()) {
      bool integer = value.constant->kind == ConstValue::Kind::Int;
      gen.getDiags().error(
          arg->loc,
          "'" + call.callee + "' joins tensors, got " + value.constant->str(),
          integer ? "the axis is a keyword argument: `" + call.callee +
                        "(a, b, axis = " + value.constant->str() + ")`"
                  : "");
      ok = false;
      continue;
    }
    tensors.push_back(value.tensor);
  }
  if (!ok)
    return std::nullopt;
  return tensors;
}

/// `axis` normalized against `rank`, or reports at `loc`.
std::optional<int64_t> normalizeAxis(MLIRGenImpl &gen, SourceLoc loc,
                                     int64_t axis, int64_t rank,
                                     StringRef what) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    gen.getDiags().error(loc,
                         "axis " + std::to_string(axis) +
                             " is out of range for " + what.str() +
                             " of rank " + std::to_string(rank),
                         axisRangeHint(rank));
    return std::nullopt;
  }
  return normalized;
}

//===----------------------------------------------------------------------===//
// Joining
//===----------------------------------------------------------------------===//

/// `concat(a, b, ..., axis = 0)`: torch.cat.
Val genConcat(MLIRGenImpl &gen, const ast::CallExpr &call,
              const BoundArgs &args) {
  std::optional<SmallVector<Value>> inputs = tensorList(gen, call);
  if (!inputs)
    return {};
  auto first = cast<RankedTensorType>((*inputs)[0].getType());
  if (!normalizeAxis(gen, args.locs[0], args.integer(0), first.getRank(),
                     formatType(first)))
    return {};
  return gen.createValue<ConcatOp>(call.getLoc(), *inputs,
                                   {axisAttr(gen, args.integer(0))});
}

/// `stack(a, b, ..., axis = 0)`: torch.stack, a size-1 dimension inserted
/// at `axis` in each input (a reshape), then concatenated along it.
Val genStack(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  std::optional<SmallVector<Value>> inputs = tensorList(gen, call);
  if (!inputs)
    return {};
  auto first = cast<RankedTensorType>((*inputs)[0].getType());
  int64_t rank = first.getRank();
  std::optional<int64_t> axis = normalizeAxis(
      gen, args.locs[0], args.integer(0), rank + 1, "the result of 'stack'");
  if (!axis)
    return {};
  SmallVector<Value> expanded;
  for (auto [i, input] : llvm::enumerate(*inputs)) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type != first) {
      gen.getDiags().error(call.getLoc(),
                           "'stack' needs tensors of one type: input " +
                               std::to_string(i) + " is " + formatType(type) +
                               ", input 0 is " + formatType(first));
      return {};
    }
    Shape shape = getShape(type);
    shape.insert(shape.begin() + *axis, Dim::fixed(1));
    expanded.push_back(gen.getBuilder().create<ReshapeOp>(
        gen.getLoc(call.getLoc()), getTensorType(shape, type.getElementType()),
        input));
  }
  if (expanded.size() == 1)
    return Val::of(expanded[0]);
  return gen.createValue<ConcatOp>(call.getLoc(), expanded,
                                   {axisAttr(gen, *axis)});
}

//===----------------------------------------------------------------------===//
// Cutting
//===----------------------------------------------------------------------===//

/// tx.split of `x` into `sizes` along `axis`: several tensors, or one.
Val emitSplit(MLIRGenImpl &gen, SourceLoc loc, Value x, int64_t axis,
              ArrayRef<int64_t> sizes) {
  if (sizes.size() == 1)
    return Val::of(x);
  Operation *op = gen.create<SplitOp>(
      loc, x,
      {axisAttr(gen, axis), gen.getBuilder().getNamedAttr(
                                "sizes", gen.getBuilder().getDenseI64ArrayAttr(
                                             sizes))});
  if (!op)
    return {};
  return Val::ofTuple(
      std::vector<Value>(op->getResults().begin(), op->getResults().end()));
}

/// The static size of dimension `axis` of `x`, or reports that it is a dim.
std::optional<int64_t> staticAxisSize(MLIRGenImpl &gen, SourceLoc loc,
                                      Value x, int64_t axis, StringRef what) {
  auto type = cast<RankedTensorType>(x.getType());
  Dim dim = getShape(type)[axis];
  if (dim.isSymbolic()) {
    gen.getDiags().error(loc,
                         what.str() + " cuts dimension " +
                             std::to_string(axis) + " of " + formatType(type) +
                             ", which is the dim " +
                             dim.symbol.getValue().str() +
                             ": its pieces would have sizes known only at "
                             "run time",
                         "cut a static dimension");
    return std::nullopt;
  }
  return dim.size;
}

/// `chunk(x, chunks, axis = 0)`: torch.chunk. Pieces of ceil(n / chunks)
/// entries, the last one smaller when they do not divide n (so there may be
/// fewer than `chunks` of them, as in PyTorch).
Val genChunk(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  Value x = args.tensor(0);
  int64_t chunks = args.integer(1);
  if (chunks < 1) {
    gen.getDiags().error(args.locs[1], "chunk needs at least one chunk, got " +
                                           std::to_string(chunks));
    return {};
  }
  std::optional<int64_t> axis =
      normalizeAxis(gen, args.locs[2], args.integer(2),
                    cast<RankedTensorType>(x.getType()).getRank(),
                    formatType(x.getType()));
  if (!axis)
    return {};
  std::optional<int64_t> n =
      staticAxisSize(gen, call.getLoc(), x, *axis, "chunk");
  if (!n)
    return {};
  int64_t size = (*n + std::min(chunks, *n) - 1) / std::min(chunks, *n);
  SmallVector<int64_t> sizes;
  for (int64_t done = 0; done < *n; done += size)
    sizes.push_back(std::min(size, *n - done));
  return emitSplit(gen, call.getLoc(), x, *axis, sizes);
}

/// `split(x, size, axis = 0)` (pieces of `size`, the last one smaller) or
/// `split(x, s0, s1, ..., axis = 0)` (the given sizes, which sum to the
/// dimension): torch.split with an int or a list of sizes.
Val genSplit(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  std::vector<const ast::Arg *> positional = positionalArgs(call);
  if (positional.size() < 2) {
    gen.getDiags().error(call.getLoc(), "split needs a tensor and sizes",
                         "e.g. `a, b = split(x, 64, 192, axis = -1)`");
    return {};
  }
  Val input = gen.genArgument(*positional[0]->value);
  if (!input.valid())
    return {};
  if (!input.isTensor()) {
    gen.getDiags().error(positional[0]->loc,
                         "split cuts a tensor, got " + input.constant->str());
    return {};
  }
  Value x = input.tensor;
  SmallVector<int64_t> given;
  for (size_t i = 1; i < positional.size(); ++i) {
    const ast::Arg &arg = *positional[i];
    if (!gen.isConstant(*arg.value)) {
      // The evaluator says why where it can (`L // 2` with L a def's shape
      // variable bound to a dim).
      unsigned before = gen.getDiags().getNumErrorReports();
      (void)gen.evalConstant(*arg.value);
      if (gen.getDiags().getNumErrorReports() == before)
        gen.getDiags().error(arg.loc, "the sizes of a split are compile-time "
                                      "integers");
      return {};
    }
    std::optional<ConstValue> value = gen.evalConstant(*arg.value);
    if (!value)
      return {};
    if (value->kind != ConstValue::Kind::Int || value->i < 1) {
      gen.getDiags().error(arg.loc,
                           "a split size must be a positive integer, got " +
                               value->str());
      return {};
    }
    given.push_back(value->i);
  }
  std::optional<int64_t> axis =
      normalizeAxis(gen, args.locs[0], args.integer(0),
                    cast<RankedTensorType>(x.getType()).getRank(),
                    formatType(x.getType()));
  if (!axis)
    return {};
  std::optional<int64_t> n =
      staticAxisSize(gen, call.getLoc(), x, *axis, "split");
  if (!n)
    return {};
  SmallVector<int64_t> sizes;
  if (given.size() == 1) {
    int64_t size = std::min(given[0], *n);
    for (int64_t done = 0; done < *n; done += size)
      sizes.push_back(std::min(size, *n - done));
  } else {
    int64_t total = 0;
    for (int64_t size : given)
      total += std::min(size, *n + 1); // no overflow, still != n if over
    if (total != *n) {
      std::string list;
      // The true sum for the message (the clamped one is only a test; it
      // printed 100 + 5 = 22), or "more than 2^63" when it overflows.
      int64_t sum = 0;
      bool overflow = false;
      for (size_t i = 0; i < given.size(); ++i) {
        list += (i ? " + " : "") + std::to_string(given[i]);
        overflow = overflow || __builtin_add_overflow(sum, given[i], &sum);
      }
      gen.getDiags().error(
          positional[1]->loc,
          "the split sizes " + list + " = " +
              (overflow ? std::string("more than 2^63") : std::to_string(sum)) +
              " do not add up to " + std::to_string(*n) +
              ", the size of dimension " + std::to_string(*axis) + " of " +
              formatType(x.getType()));
      return {};
    }
    sizes = given;
  }
  return emitSplit(gen, call.getLoc(), x, *axis, sizes);
}

//===----------------------------------------------------------------------===//
// Picking
//===----------------------------------------------------------------------===//

/// `index_select(x, axis, ids)`: torch.index_select, with `ids` of any
/// rank (its shape replaces dimension `axis`, as `x[:, ids]` does).
Val genIndexSelect(MLIRGenImpl &gen, const ast::CallExpr &call,
                   const BoundArgs &args) {
  Value x = args.tensor(0), ids = args.tensor(2);
  if (!cast<RankedTensorType>(ids.getType()).getElementType().isInteger(32)) {
    gen.getDiags().error(args.locs[2],
                         "the indices of index_select must be i32 ids, got " +
                             formatType(ids.getType()));
    return {};
  }
  std::optional<int64_t> axis =
      normalizeAxis(gen, args.locs[1], args.integer(1),
                    cast<RankedTensorType>(x.getType()).getRank(),
                    formatType(x.getType()));
  if (!axis)
    return {};
  if (!gen.checkArangeIds(args.locs[2], ids,
                          getShape(cast<RankedTensorType>(x.getType()))[*axis],
                          /*negativeWrap=*/true,
                          "dimension " + std::to_string(*axis) + " of " +
                              formatType(x.getType())))
    return {};
  return gen.createValue<GatherOp>(call.getLoc(), {x, ids},
                                   {axisAttr(gen, *axis)});
}

/// `select(x, axis, index)` (torch.select: `x[..., index, ...]`, dropping
/// the axis) and `narrow(x, axis, start, length)` (torch.narrow:
/// `x[..., start:start + length, ...]`).
Val genSelectOrNarrow(MLIRGenImpl &gen, const ast::CallExpr &call,
                      const BoundArgs &args) {
  Value x = args.tensor(0);
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  std::optional<int64_t> axis = normalizeAxis(
      gen, args.locs[1], args.integer(1), rank, formatType(x.getType()));
  if (!axis)
    return {};
  std::vector<DimIndex> indices(rank);
  DimIndex &d = indices[*axis];
  d.loc = args.locs[2];
  int64_t start = args.integer(2);
  if (call.callee == "select") {
    d.kind = DimIndex::Kind::Integer;
    d.integer = start;
    d.text = std::to_string(start);
  } else {
    int64_t length = args.integer(3);
    if (length < 1) {
      gen.getDiags().error(args.locs[3],
                           "narrow needs a positive length, got " +
                               std::to_string(length));
      return {};
    }
    // PyTorch refuses a range that leaves the dimension; slices clamp.
    Dim dim = getShape(cast<RankedTensorType>(x.getType()))[*axis];
    int64_t stop = 0;
    // start + length past int64 (narrow(x, 0, 3, 2**63 - 1)) wrapped to a
    // negative stop: "the slice 3:-9223372036854775806 is empty".
    const bool overflows = __builtin_add_overflow(start, length, &stop);
    int64_t begin = start < 0 && !dim.isSymbolic() ? start + dim.size : start;
    if (overflows || (!dim.isSymbolic() && (begin < 0 || begin >= dim.size ||
                                            length > dim.size - begin))) {
      gen.getDiags().error(
          d.loc, "narrow(" + std::to_string(start) + ", " +
                     std::to_string(length) + ") leaves dimension " +
                     std::to_string(*axis) + " of " + formatType(x.getType()) +
                     " (" +
                     (overflows ? std::string("its end is past "
                                              "2^63 - 1")
                                : "size " + std::to_string(dim.size)) +
                     ")");
      return {};
    }
    d.kind = DimIndex::Kind::Slice;
    d.start = start;
    d.stop = stop;
    d.text = std::to_string(start) + ":" + std::to_string(stop);
    if (start < 0 && !dim.isSymbolic()) {
      d.start = begin;
      d.stop = begin + length;
    }
  }
  return gen.indexTensor(call.getLoc(), x, indices);
}

/// A bound of arange that is not a dim: a compile-time integer, or reports
/// at the argument.
std::optional<int64_t> arangeBound(MLIRGenImpl &gen, const ast::Arg &arg) {
  if (!gen.isConstant(*arg.value)) {
    gen.genArgument(*arg.value);
    gen.getDiags().error(arg.loc, "the bounds of arange are compile-time "
                                  "integers or a dim");
    return std::nullopt;
  }
  std::optional<ConstValue> value = gen.evalConstant(*arg.value);
  if (!value)
    return std::nullopt;
  if (value->kind != ConstValue::Kind::Int) {
    gen.getDiags().error(arg.loc, "the bounds of arange are integers, got " +
                                      value->str());
    return std::nullopt;
  }
  return value->i;
}

/// `arange(end)` or `arange(start, end)` (torch.arange with step 1): i32
/// position ids. `end` may be a dim (`arange(T)`, start 0) that an input of
/// the entry has, so its value is known when the entry runs.
Val genArange(MLIRGenImpl &gen, const ast::CallExpr &call,
              const BoundArgs &args) {
  std::vector<const ast::Arg *> positional = positionalArgs(call);
  if (positional.empty() || positional.size() > 2) {
    gen.getDiags().error(call.getLoc(),
                         "arange takes an end, or a start and an end",
                         "e.g. `arange(T)` or `arange(1, 9)`");
    return {};
  }
  const ast::Arg &endArg = *positional.back();
  Type i32 = gen.getBuilder().getI32Type();
  if (std::optional<Dim> dim = gen.namedDim(*endArg.value)) {
    // `arange(0, T)` is `arange(T)` (torch.arange(0, T)); another start is
    // not a dim's length.
    bool startsAtZero = positional.size() == 1;
    if (!startsAtZero) {
      std::optional<int64_t> start = arangeBound(gen, *positional[0]);
      if (!start)
        return {};
      startsAtZero = *start == 0;
    }
    if (!startsAtZero) {
      gen.getDiags().error(positional[0]->loc,
                           "arange up to the dim " +
                               dim->symbol.getValue().str() +
                               " must start at 0",
                           "its length would be a dim minus a number, which "
                           "is not a dim; shift the table instead "
                           "(`w[1:][arange(T)]`, or `w[1:][:T]`), or the "
                           "values (`float(arange(T)) + 1.0`)");
      return {};
    }
    if (!gen.checkDimIsBound(endArg.loc, *dim, "arange(" +
                                                   dim->symbol.getValue().str() +
                                                   ")"))
      return {};
    return Val::of(gen.getBuilder().create<ArangeOp>(
        gen.getLoc(call.getLoc()), getTensorType({*dim}, i32), 0));
  }
  int64_t bounds[2] = {0, 0};
  for (size_t i = 0; i < positional.size(); ++i) {
    std::optional<int64_t> value = arangeBound(gen, *positional[i]);
    if (!value)
      return {};
    bounds[positional.size() == 1 ? 1 : i] = *value;
  }
  int64_t start = bounds[0], end = bounds[1];
  if (end <= start) {
    gen.getDiags().error(call.getLoc(),
                         "arange(" + std::to_string(start) + ", " +
                             std::to_string(end) + ") is empty",
                         "tensors have no empty dimensions");
    return {};
  }
  if (start < INT32_MIN || end - 1 > INT32_MAX) {
    gen.getDiags().error(call.getLoc(), "arange values must fit in i32");
    return {};
  }
  if (!gen.checkDimSize(call.getLoc(), end - start, "arange length"))
    return {};
  return Val::of(gen.getBuilder().create<ArangeOp>(
      gen.getLoc(call.getLoc()),
      getTensorType({Dim::fixed(end - start)}, i32), start));
}

} // namespace

const std::vector<Builtin> &txc::detail::indexBuiltins() {
  static const std::vector<Builtin> table = {
      {"concat", {{"axis", ArgKind::Int, I(0)}}, genConcat, false,
       /*variadic=*/true, /*restFirst=*/true},
      {"cat", {{"axis", ArgKind::Int, I(0)}}, genConcat, false, true, true},
      {"stack", {{"axis", ArgKind::Int, I(0)}}, genStack, false, true, true},
      {"split", {{"axis", ArgKind::Int, I(0)}}, genSplit, false, true, true},
      {"chunk",
       {{"x", ArgKind::Tensor, {}},
        {"chunks", ArgKind::Int, {}},
        {"axis", ArgKind::Int, I(0)}},
       genChunk},
      {"index_select",
       {{"x", ArgKind::Tensor, {}},
        {"axis", ArgKind::Int, {}},
        {"ids", ArgKind::Tensor, {}}},
       genIndexSelect},
      {"select",
       {{"x", ArgKind::Tensor, {}},
        {"axis", ArgKind::Int, {}},
        {"index", ArgKind::Int, {}}},
       genSelectOrNarrow},
      {"narrow",
       {{"x", ArgKind::Tensor, {}},
        {"axis", ArgKind::Int, {}},
        {"start", ArgKind::Int, {}},
        {"length", ArgKind::Int, {}}},
       genSelectOrNarrow},
      {"arange", {}, genArange, false, true, true},
  };
  return table;
}
