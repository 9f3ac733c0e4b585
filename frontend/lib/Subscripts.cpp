//===- Subscripts.cpp - PyTorch indexing of tensors to tx ops -------------===//
//
// `x[...]` as PyTorch reads it: integers pick one element of a dimension and
// drop it (`x[:, 0]`), slices keep it (`x[..., :h]`, `x[1:5:2]`, `wpe[:T]`),
// `...` stands for the dimensions not named, `None` inserts one of size 1
// (`m[:, None, None, :]`), and one i32 tensor index gathers along its
// dimension (`table[ids]`, `x[:, idx]`). Every range is
// checked here against the shape, at compile time: a static dimension with
// Python's rules (negative bounds count from the end, slice bounds clamp,
// an empty slice is an error since tensors have no empty dimensions), a
// symbolic one only with the ranges that hold for each of its sizes (all of
// it, its first or last element). The result is a tx.slice, then a
// tx.reshape that drops the integer-indexed dimensions, then a tx.gather,
// then a tx.reshape that inserts the new axes.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tx;
using namespace txc;
using namespace txc::detail;

namespace {

std::string indexText(const ast::Index &index) {
  switch (index.kind) {
  case ast::Index::Kind::Ellipsis:
    return "...";
  case ast::Index::Kind::Single:
    return ast::print(*index.value);
  case ast::Index::Kind::Slice:
    break;
  }
  std::string text = index.start ? ast::print(*index.start) : "";
  text += ":";
  if (index.stop)
    text += ast::print(*index.stop);
  if (index.step)
    text += ":" + ast::print(*index.step);
  return text;
}

/// A compile-time index or bound as an integer: an Int, or a Float with an
/// integral value (`d / 2` is a Float in the spec language), else nullopt.
std::optional<int64_t> integralValue(const ConstValue &value) {
  if (value.kind == ConstValue::Kind::Int)
    return value.i;
  if (value.kind != ConstValue::Kind::Float || value.f != std::floor(value.f) ||
      !(std::fabs(value.f) < 9223372036854775808.0))
    return std::nullopt;
  return static_cast<int64_t>(value.f);
}

} // namespace

std::optional<Dim> MLIRGenImpl::namedDim(const ast::Expr &expr) {
  auto *name = llvm::dyn_cast<ast::NameExpr>(&expr);
  if (!name || (!frames.empty() && frames.back().vars.count(name->name)))
    return std::nullopt;
  // A def's shape variable bound to a dim at this call is that dim
  // (`wpe[:L]` in a def taking `x: [B, L, d]`): it was "no value at compile
  // time" and a second error, where the dim's own name worked.
  std::string symbol = name->name;
  if (!frames.empty())
    if (auto shapeVar = frames.back().symbolicShapeVars.find(name->name);
        shapeVar != frames.back().symbolicShapeVars.end())
      symbol = shapeVar->second;
  auto dim = dims.find(symbol);
  if (dim == dims.end())
    return std::nullopt;
  return Dim::symbolic(StringAttr::get(&context, dim->second->name),
                       dim->second->bound);
}

bool MLIRGenImpl::checkDimIsBound(SourceLoc loc, const Dim &dim,
                                  StringRef what) {
  if (!dim.isSymbolic() || llvm::is_contained(entryDims, dim.symbol))
    return true;
  std::string name = dim.symbol.getValue().str();
  diags.error(loc,
              what.str() + " has dim " + name + ", which is not the size of "
                  "any input of entry '" + entryName +
                  "': its value would be unknown when the entry runs",
              "give the entry an input with " + name + " in its shape");
  return false;
}

bool MLIRGenImpl::checkArangeIds(SourceLoc loc, Value ids, const Dim &rows,
                                 bool negativeWrap, StringRef what) {
  // Through reshapes (`arange(T)[None, :]` adds an axis).
  while (auto reshape = ids.getDefiningOp<ReshapeOp>())
    ids = reshape.getInput();
  auto arange = ids.getDefiningOp<ArangeOp>();
  if (!arange)
    return true;
  const Dim length = getShape(cast<RankedTensorType>(ids.getType()))[0];
  // A symbolic dim's rows are checked against its bound only for static
  // ids (`x[:, arange(9)]` with T <= 8 can never run); others at run time.
  const int64_t n = rows.isSymbolic() ? rows.bound : rows.size;
  if (n <= 0 ||
      (length.isSymbolic() && (rows.isSymbolic() || length.bound <= 0)))
    return true;
  const int64_t start = arange.getStart();
  const int64_t last =
      start + (length.isSymbolic() ? length.bound : length.size) - 1;
  const int64_t lowest = negativeWrap ? -n : 0;
  if (start >= lowest && last < n)
    return true;
  if (length.isSymbolic()) {
    const std::string name = formatDim(length);
    diags.error(loc,
                "arange(" + name + ") indexes " + what.str() + " up to " +
                    name + " - 1, which needs " + name +
                    " <= " + std::to_string(n) + ", but dim " + name +
                    " may be up to " + std::to_string(length.bound),
                "declare `dim " + name + " <= " + std::to_string(n) +
                    "` or make the dimension larger");
    return false;
  }
  diags.error(
      loc, "arange(" + std::to_string(start) + ", " + std::to_string(last + 1) +
               ") gives ids outside " + what.str() +
               (rows.isSymbolic() ? ", whose dim " + formatDim(rows) +
                                        " is at most " + std::to_string(n)
                                  : " (ids in [" + std::to_string(lowest) +
                                        ", " + std::to_string(n) + "))"));
  return false;
}

Val MLIRGenImpl::genSubscript(const ast::SubscriptExpr &expr) {
  Val base = genExpr(*expr.base);
  if (!base.valid())
    return {};
  if (!base.isTensor()) {
    diags.error(expr.getLoc(), "only tensors can be subscripted, got " +
                                   base.constant->str());
    return {};
  }
  Value x = base.tensor;
  auto type = cast<RankedTensorType>(x.getType());
  Shape shape = getShape(type);
  size_t rank = shape.size();
  std::string typeText = formatType(type);

  // `None` inserts an axis of size 1 (as in PyTorch). A variable, config
  // value, loop variable or dim named `None` made it an integer index
  // instead, silently (`x[:, None]` became `x[:, 1]`): that is an error.
  auto isNewAxis = [&](const ast::Index &index) {
    auto *name = index.kind == ast::Index::Kind::Single
                     ? llvm::dyn_cast<ast::NameExpr>(index.value.get())
                     : nullptr;
    return name && name->name == "None";
  };
  for (const ast::Index &index : expr.indices) {
    if (!isNewAxis(index))
      continue;
    const char *what =
        !frames.empty() && frames.back().vars.count("None") ? "a variable"
        : env.lookup("None")                                ? "a config value or loop variable"
        : dims.count("None")                                ? "a dim"
                                                            : nullptr;
    if (what) {
      diags.error(index.loc,
                  std::string("'None' in a subscript adds an axis of size 1 "
                              "(as in PyTorch), but ") +
                      what + " is named 'None' here",
                  "rename it");
      return {};
    }
  }
  auto addressesDim = [&](const ast::Index &index) {
    return index.kind != ast::Index::Kind::Ellipsis && !isNewAxis(index);
  };

  // Which dimension each index addresses: left to right up to `...`, right
  // aligned after it.
  size_t named = 0;
  for (const ast::Index &index : expr.indices)
    named += addressesDim(index);
  if (named > rank) {
    size_t seen = 0;
    for (const ast::Index &index : expr.indices)
      if (addressesDim(index) && seen++ == rank) {
        diags.error(index.loc, "too many indices for " + typeText + ": " +
                                   std::to_string(named) + " for rank " +
                                   std::to_string(rank));
        break;
      }
    return {};
  }
  std::vector<DimIndex> dimIndices(rank);
  // The dimension each index addresses (rank for `...` and `None`).
  std::vector<size_t> addressed(expr.indices.size(), rank);
  size_t next = 0;
  bool ok = true;
  for (size_t i = 0; i < expr.indices.size(); ++i) {
    const ast::Index &index = expr.indices[i];
    if (index.kind == ast::Index::Kind::Ellipsis) {
      size_t after = 0;
      for (size_t j = i + 1; j < expr.indices.size(); ++j)
        after += addressesDim(expr.indices[j]);
      next = rank - after;
      continue;
    }
    if (isNewAxis(index))
      continue;
    addressed[i] = next;
    DimIndex &d = dimIndices[next++];
    d.loc = index.loc;
    d.text = indexText(index);
    if (index.kind == ast::Index::Kind::Single) {
      if (isConstExpr(*index.value)) {
        std::optional<ConstValue> value = evalConst(*index.value);
        if (!value) {
          ok = false;
          continue;
        }
        std::optional<int64_t> integer = integralValue(*value);
        if (!integer) {
          diags.error(index.loc, "an index must be an integer, got " +
                                     value->str());
          ok = false;
          continue;
        }
        d.kind = DimIndex::Kind::Integer;
        d.integer = *integer;
        continue;
      }
      if (std::optional<Dim> dim = namedDim(*index.value)) {
        diags.error(index.loc, "dim '" + formatDim(*dim) + "' is not an index",
                    "a dim may end a slice: `x[:" + formatDim(*dim) + "]`");
        ok = false;
        continue;
      }
      Val value = genExpr(*index.value);
      if (!value.isTensor()) {
        ok = false;
        continue;
      }
      Type element =
          cast<RankedTensorType>(value.tensor.getType()).getElementType();
      if (element.isInteger(1)) {
        diags.error(index.loc,
                    "a bool mask cannot index a tensor: it selects a number "
                    "of elements known only at run time",
                    "keep the shape with `where(mask, x, 0.0)`");
        ok = false;
        continue;
      }
      if (!element.isInteger(32)) {
        diags.error(index.loc, "a tensor index must hold i32 ids, got " +
                                   formatType(value.tensor.getType()));
        ok = false;
        continue;
      }
      d.kind = DimIndex::Kind::Tensor;
      d.tensor = value.tensor;
      continue;
    }
    // A slice: compile-time integers, and a dim may end it.
    d.kind = DimIndex::Kind::Slice;
    auto bound = [&](const ast::ExprPtr &part, std::optional<int64_t> &slot,
                     const char *which) {
      if (!part)
        return true;
      if (std::optional<Dim> dim = namedDim(*part)) {
        if (&part == &index.stop) {
          d.stopDim = dim;
          return true;
        }
        diags.error(part->getLoc(),
                    std::string("the ") + which + " of a slice cannot be a dim",
                    "a dim may end a slice: `x[:" + formatDim(*dim) + "]`");
        return false;
      }
      if (!isConstExpr(*part)) {
        // What is wrong with it, if anything: then that is the one error
        // (a def that calls itself was also "must be a compile-time
        // integer", with a hint about tensors of ids).
        // A value with none is a name an earlier error left unbound
        // (`k = bad(2)`), reported there.
        unsigned errorsBefore = diags.getNumErrorReports();
        Val value = genExpr(*part);
        if (diags.getNumErrorReports() > errorsBefore || !value.valid())
          return false;
        diags.error(part->getLoc(),
                    std::string("the ") + which +
                        " of a slice must be a compile-time integer",
                    "index with a tensor of ids to pick entries at run time");
        return false;
      }
      std::optional<ConstValue> value = evalConst(*part);
      if (!value)
        return false;
      std::optional<int64_t> integer = integralValue(*value);
      if (!integer) {
        diags.error(part->getLoc(), std::string("the ") + which +
                                        " of a slice must be an integer, got " +
                                        value->str(),
                    "round it with `//`, e.g. `x[..., :d // 3]`");
        return false;
      }
      slot = *integer;
      return true;
    };
    ok &= bound(index.start, d.start, "start") &&
          bound(index.stop, d.stop, "end") && bound(index.step, d.step, "step");
  }
  if (!ok)
    return {};
  Val result = indexTensor(expr.getLoc(), x, dimIndices);
  if (!result.isTensor())
    return result;

  // The new axes, at their places in the result: after the dimensions that
  // the indices before them keep.
  SmallVector<size_t> newAxes;
  size_t place = 0;
  for (size_t i = 0; i < expr.indices.size(); ++i) {
    const ast::Index &index = expr.indices[i];
    if (index.kind == ast::Index::Kind::Ellipsis) {
      place += rank - named;
    } else if (isNewAxis(index)) {
      newAxes.push_back(place++);
    } else {
      const DimIndex &d = dimIndices[addressed[i]];
      if (d.kind == DimIndex::Kind::Tensor)
        place += cast<RankedTensorType>(d.tensor.getType()).getRank();
      else if (d.kind != DimIndex::Kind::Integer)
        place += 1;
    }
  }
  if (newAxes.empty())
    return result;
  auto resultType = cast<RankedTensorType>(result.tensor.getType());
  Shape expanded = getShape(resultType);
  for (size_t axis : newAxes)
    expanded.insert(expanded.begin() + axis, Dim::fixed(1));
  return Val::of(builder.create<ReshapeOp>(
      getLoc(expr.getLoc()),
      getTensorType(expanded, resultType.getElementType()), result.tensor));
}

Val MLIRGenImpl::indexTensor(SourceLoc loc, Value x,
                             ArrayRef<DimIndex> dimIndices) {
  auto type = cast<RankedTensorType>(x.getType());
  Shape shape = getShape(type);
  size_t rank = shape.size();
  std::string typeText = formatType(type);

  // At most one tensor index, and no integer index beside it (PyTorch
  // would move the gathered dimensions first in some of those cases).
  const DimIndex *tensorIndex = nullptr, *integerIndex = nullptr;
  for (const DimIndex &d : dimIndices) {
    if (d.kind == DimIndex::Kind::Tensor) {
      if (tensorIndex) {
        diags.error(d.loc, "a subscript takes at most one tensor index",
                    "PyTorch's `x[i, j]` pairs the ids of i and j; here, "
                    "gather the rows and pick each one's column with a "
                    "one-hot mask (ids are compared, not computed with): "
                    "`reduce_sum(x[i] * float(j[:, None] == arange(n1)[None, "
                    ":]), -1)` (`x[i][:, j]` would take every pair)");
        return {};
      }
      tensorIndex = &d;
    }
    if (d.kind == DimIndex::Kind::Integer && !integerIndex)
      integerIndex = &d;
  }
  if (tensorIndex && integerIndex) {
    diags.error(integerIndex->loc,
                "an integer index cannot go with a tensor index in one "
                "subscript",
                "index in two steps, the integers first: `x[0, ids]` is "
                "`x[0][ids]`, `x[ids, 0]` is `x[:, 0][ids]`");
    return {};
  }

  // Each dimension's range.
  SmallVector<int64_t> starts(rank, 0), strides(rank, 1);
  Shape sliced = shape;
  SmallVector<bool> dropped(rank, false);
  int64_t gatherAxis = -1;
  for (size_t i = 0; i < rank; ++i) {
    const DimIndex &d = dimIndices[i];
    const Dim &dim = shape[i];
    std::string where = "dimension " + std::to_string(i) + " of " + typeText;
    if (d.kind == DimIndex::Kind::Whole)
      continue;
    if (d.kind == DimIndex::Kind::Tensor) {
      gatherAxis = int64_t(i);
      continue;
    }
    if (d.kind == DimIndex::Kind::Integer) {
      int64_t at = d.integer;
      if (dim.isSymbolic()) {
        if (at != 0 && at != -1) {
          diags.error(d.loc,
                      "index " + d.text + " may be outside " + where + ": " +
                          formatDim(dim) + " is between 1 and " +
                          std::to_string(dim.bound) + " at run time",
                      "0 and -1 are inside a dim of any size");
          return {};
        }
      } else {
        if (at < -dim.size || at >= dim.size) {
          diags.error(d.loc, "index " + d.text + " is outside " + where +
                                 " (size " + std::to_string(dim.size) + ")");
          return {};
        }
        at = at < 0 ? at + dim.size : at;
      }
      starts[i] = at;
      sliced[i] = Dim::fixed(1);
      dropped[i] = true;
      continue;
    }
    int64_t step = d.step.value_or(1);
    if (step < 1) {
      diags.error(d.loc, "the step of the slice " + d.text +
                             " must be positive, got " + std::to_string(step));
      return {};
    }
    if (d.stopDim) {
      // `:T`: the first T entries.
      const Dim &end = *d.stopDim;
      if (d.start.value_or(0) != 0 || step != 1) {
        diags.error(d.loc,
                    "a slice that ends at dim " + formatDim(end) +
                        " starts at 0 with step 1, got " + d.text,
                    "its size would be " + formatDim(end) +
                        " minus a number, which is not a dim");
        return {};
      }
      if (dim == end)
        continue;
      if (dim.isSymbolic()) {
        diags.error(d.loc,
                    "the slice " + d.text + " of " + where + " needs " +
                        formatDim(end) + " <= " + formatDim(dim) +
                        ", which holds only for some sizes of the two dims");
        return {};
      }
      if (end.bound > dim.size) {
        diags.error(d.loc,
                    "the slice " + d.text + " of " + where + " needs " +
                        formatDim(end) + " <= " + std::to_string(dim.size) +
                        ", but dim " + formatDim(end) + " may be up to " +
                        std::to_string(end.bound),
                    "declare `dim " + formatDim(end) +
                        " <= " + std::to_string(dim.size) +
                        "` or make the dimension larger");
        return {};
      }
      if (!checkDimIsBound(d.loc, end, "the slice " + d.text))
        return {};
      sliced[i] = end;
      continue;
    }
    if (dim.isSymbolic()) {
      // Only ranges inside every size of the dim, with a size that is a dim
      // or a number: all of it, its first or last entry.
      std::optional<int64_t> start = d.start, stop = d.stop;
      bool whole = step == 1 && start.value_or(0) == 0 && !stop;
      // One entry whatever the step (`0:1:2` is `:1`; it was refused as a
      // size that depends on the dim).
      bool first = start.value_or(0) == 0 && stop == 1;
      bool last = start == -1 && !stop;
      if (whole)
        continue;
      if (!first && !last) {
        diags.error(d.loc,
                    "the slice " + d.text + " of " + where +
                        " has a size that depends on " + formatDim(dim) +
                        " and is not a dim",
                    "a dim can be sliced whole (`:`), to its first entry "
                    "(`:1`) or to its last (`-1:`); slice a static "
                    "dimension, or gather with a tensor of ids");
        return {};
      }
      starts[i] = first ? 0 : -1;
      sliced[i] = Dim::fixed(1);
      continue;
    }
    // Python's slice rules on a static size.
    int64_t size = dim.size;
    auto clampBound = [&](std::optional<int64_t> value, int64_t absent) {
      if (!value)
        return absent;
      int64_t v = *value < 0 ? *value + size : *value;
      return std::min(std::max<int64_t>(v, 0), size);
    };
    int64_t start = clampBound(d.start, 0), stop = clampBound(d.stop, size);
    // ceil((stop - start) / step) without overflow at steps near 2^63.
    int64_t count = stop > start ? (stop - start - 1) / step + 1 : 0;
    if (count == 0) {
      diags.error(d.loc, "the slice " + d.text + " of " + where +
                             " (size " + std::to_string(size) +
                             ") is empty",
                  "tensors have no empty dimensions");
      return {};
    }
    if (start == 0 && count == size && step == 1)
      continue;
    starts[i] = start;
    strides[i] = step;
    sliced[i] = Dim::fixed(count);
  }

  // tx.slice, then a reshape that drops the integer-indexed dimensions,
  // then the gather.
  Type element = type.getElementType();
  Value result = x;
  bool partial = false;
  for (size_t i = 0; i < rank; ++i)
    partial |= starts[i] != 0 || strides[i] != 1 || sliced[i] != shape[i];
  if (partial) {
    bool unitStrides = llvm::all_of(strides, [](int64_t s) { return s == 1; });
    auto op = builder.create<SliceOp>(
        getLoc(loc), getTensorType(sliced, element), x,
        builder.getDenseI64ArrayAttr(starts),
        unitStrides ? DenseI64ArrayAttr() : builder.getDenseI64ArrayAttr(strides));
    if (failed(op.verify())) {
      op.erase();
      return {};
    }
    result = op.getResult();
  }
  if (llvm::is_contained(dropped, true)) {
    Shape kept;
    for (size_t i = 0; i < rank; ++i)
      if (!dropped[i])
        kept.push_back(sliced[i]);
    result = builder.create<ReshapeOp>(getLoc(loc),
                                       getTensorType(kept, element), result);
  }
  if (gatherAxis >= 0) {
    if (!checkArangeIds(tensorIndex->loc, tensorIndex->tensor,
                        shape[size_t(gatherAxis)], /*negativeWrap=*/true,
                        "dimension " + std::to_string(gatherAxis) + " of " +
                            typeText))
      return {};
    OpBuilder &b = builder;
    return createValue<GatherOp>(
        tensorIndex->loc, {result, tensorIndex->tensor},
        {b.getNamedAttr("axis", b.getI64IntegerAttr(gatherAxis))});
  }
  return Val::of(result);
}
