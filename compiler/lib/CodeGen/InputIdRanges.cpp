//===- InputIdRanges.cpp - which ids an entry's i32 inputs may hold -------===//
//
// An i32 entry input is valid when every op that reads it can: an embedding
// needs row numbers of its table, an index (`wte[ids]`, tx.gather) one of
// [-n, n) along its axis, cross-entropy class numbers or its
// ignore_index, a comparison (a padding mask) takes any value. The ranges
// are found from the planned IR, through reshapes, and intersected over
// every reader; the metadata carries them so that the driver checks an input
// against what it indexes (not against a config value chosen by the input's
// name).
//
//===----------------------------------------------------------------------===//
#include "txc/CodeGen/InputIdRanges.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::tx;

namespace {

std::string formatLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "";
}

std::string atLocation(Operation *op) {
  std::string where = formatLocation(op->getLoc());
  return where.empty() ? "" : " at " + where;
}

/// The parameter an embedding table comes from (through a cast: a bf16
/// build's weight copy), for messages and the metadata's "tables".
std::string tableName(Value table) {
  while (auto cast = table.getDefiningOp<CastOp>())
    table = cast.getInput();
  if (auto param = table.getDefiningOp<ParamOp>())
    return param.getName().str();
  return "";
}

/// The parameter whose rows are the classes of `logits` (their last axis),
/// through reshapes: the weight of the output projection
/// (`linear(x, vocab) as out`, `x @ transpose(wte)`), or "" when none.
/// A tied output projection makes its classes a table's rows.
std::string classTableName(Value logits) {
  while (auto reshape = logits.getDefiningOp<ReshapeOp>())
    logits = reshape.getInput();
  if (auto linear = logits.getDefiningOp<LinearOp>())
    return tableName(linear.getWeight());
  if (auto matmul = logits.getDefiningOp<MatmulOp>()) {
    if (matmul.getTransposeLhs())
      return "";
    Value rhs = matmul.getRhs();
    if (matmul.getTransposeRhs())
      return tableName(rhs);
    if (auto transpose = rhs.getDefiningOp<TransposeOp>()) {
      llvm::ArrayRef<int64_t> order = transpose.getPermutation();
      if (order.size() == 2 && order[0] == 1 && order[1] == 0)
        return tableName(transpose.getInput());
    }
  }
  return "";
}

/// What an index (`table[ids]`, tx.gather) accepts, for messages: `count`
/// (a number or a dim) rows or entries along `axis` of its input.
std::string gatherRangeText(const std::string &count, int64_t axis,
                            GatherOp gather) {
  std::string table = tableName(gather.getInput());
  return "the " + count + " " +
         (axis == 0 ? "rows" : "entries along axis " + std::to_string(axis)) +
         " of " + (table.empty() ? "the indexed tensor" : "'" + table + "'") +
         " (negative ids count from the end, as in PyTorch)" +
         atLocation(gather);
}

/// What one reader of the ids accepts, or nullopt when it accepts any value.
/// Gradient ops (embedding_grad, cross_entropy_grad) read the same ids as
/// their forward op and add nothing.
std::optional<IdRange> readerRange(Operation *user, Value ids) {
  if (auto embedding = dyn_cast<EmbeddingOp>(user)) {
    if (embedding.getIds() != ids)
      return std::nullopt;
    int64_t rows =
        cast<RankedTensorType>(embedding.getTable().getType()).getDimSize(0);
    if (ShapedType::isDynamic(rows))
      return std::nullopt;
    std::string table = tableName(embedding.getTable());
    IdRange range{0,
                  rows,
                  {},
                  "the " + std::to_string(rows) + " rows of the embedding" +
                      (table.empty() ? "" : " '" + table + "'") +
                      atLocation(user)};
    if (!table.empty())
      range.tables.push_back(table);
    return range;
  }
  if (auto gather = dyn_cast<GatherOp>(user)) {
    // `table[ids]`: PyTorch's indexing, so [-n, n) (negative from the end).
    if (gather.getIndices() != ids)
      return std::nullopt;
    auto input = cast<RankedTensorType>(gather.getInput().getType());
    int64_t axis = gather.getAxis();
    if (axis < 0)
      axis += input.getRank();
    if (axis < 0 || axis >= input.getRank())
      return std::nullopt;
    int64_t n = input.getDimSize(axis);
    if (ShapedType::isDynamic(n))
      return std::nullopt;
    IdRange range{-n, n, {}, gatherRangeText(std::to_string(n), axis, gather)};
    if (std::string table = tableName(gather.getInput());
        !table.empty() && axis == 0)
      range.tables.push_back(table);
    return range;
  }
  auto crossEntropy = [&](Value logits, Value targets,
                          int64_t ignore) -> std::optional<IdRange> {
    if (targets != ids)
      return std::nullopt;
    int64_t classes =
        cast<RankedTensorType>(logits.getType()).getShape().back();
    if (ShapedType::isDynamic(classes))
      return std::nullopt;
    IdRange range{0, classes, {},
                  "the " + std::to_string(classes) +
                      " classes of cross_entropy" + atLocation(user)};
    if (ignore < 0 || ignore >= classes)
      range.also.push_back(ignore);
    range.ignored = ignore;
    range.scored = true;
    if (std::string table = classTableName(logits); !table.empty())
      range.tables.push_back(table);
    return range;
  };
  return llvm::TypeSwitch<Operation *, std::optional<IdRange>>(user)
      .Case<CrossEntropyOp, CrossEntropyTrainOp>([&](auto loss) {
        return crossEntropy(loss.getLogits(), loss.getTargets(),
                            loss.getIgnoreIndex());
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Narrows `range` to the values `other` accepts too.
void intersect(IdRange &range, const IdRange &other) {
  auto accepts = [](const IdRange &r, int64_t v) {
    return (v >= r.begin && v < r.end) || llvm::is_contained(r.also, v);
  };
  IdRange both{std::max(range.begin, other.begin),
               std::min(range.end, other.end),
               {},
               range.what};
  if (both.end < both.begin)
    both.end = both.begin;
  const IdRange *sides[] = {&range, &other};
  for (const IdRange *side : sides)
    for (int64_t v : side->also)
      if (accepts(range, v) && accepts(other, v) &&
          !(v >= both.begin && v < both.end) && !llvm::is_contained(both.also, v))
        both.also.push_back(v);
  // Name the reader whose bound is the tighter one (both when they differ).
  if (other.what != range.what) {
    bool otherTighter = other.end - other.begin < range.end - range.begin;
    both.what = otherTighter ? other.what : range.what;
    if (other.begin == range.begin && other.end == range.end)
      both.what = range.what + " and " + other.what;
  }
  // Two cross-entropies of one target with different ignore_index values
  // ignore neither everywhere: none is recorded.
  both.ignored = range.ignored ? range.ignored : other.ignored;
  if (range.ignored && other.ignored && *range.ignored != *other.ignored)
    both.ignored.reset();
  both.scored = range.scored || other.scored;
  both.tables = range.tables;
  for (const std::string &table : other.tables)
    if (!llvm::is_contained(both.tables, table))
      both.tables.push_back(table);
  range = std::move(both);
}

/// A view that holds exactly the values of its operand (a reshape, a
/// transpose: `cross_entropy(transpose(logits), transpose(labels))`), whose
/// readers' bounds are the input's. The transpose was not looked through:
/// such targets had no range, so ragged rows were padded with `pad` and
/// scored, and a bad id failed in the kernel, not before the run.
Value sameValuesView(Operation *user) {
  if (isa<ReshapeOp, TransposeOp>(user))
    return user->getResult(0);
  return nullptr;
}

void collect(Value ids, std::optional<IdRange> &range) {
  for (Operation *user : ids.getUsers()) {
    if (Value view = sameValuesView(user)) {
      collect(view, range);
      continue;
    }
    std::optional<IdRange> reader = readerRange(user, ids);
    if (!reader)
      continue;
    if (!range)
      range = std::move(reader);
    else
      intersect(*range, *reader);
  }
}

} // namespace

namespace {

/// What one reader accepts when its bound is a dim (readerRange's symbolic
/// twin), or nullopt.
std::optional<DimIdRange> dimReaderRange(Operation *user, Value ids) {
  auto symbolOf = [](Type type, int64_t axis) -> std::string {
    auto tensor = cast<RankedTensorType>(type);
    if (axis < 0)
      axis += tensor.getRank();
    if (axis < 0 || axis >= tensor.getRank())
      return "";
    Dim dim = getShape(tensor)[size_t(axis)];
    return dim.isSymbolic() ? dim.symbol.getValue().str() : "";
  };
  if (auto gather = dyn_cast<GatherOp>(user)) {
    if (gather.getIndices() != ids)
      return std::nullopt;
    int64_t axis = gather.getAxis();
    std::string dim = symbolOf(gather.getInput().getType(), axis);
    if (dim.empty())
      return std::nullopt;
    if (axis < 0)
      axis += cast<RankedTensorType>(gather.getInput().getType()).getRank();
    return DimIdRange{dim, true, {}, gatherRangeText(dim, axis, gather)};
  }
  auto crossEntropy = [&](Value logits, Value targets,
                          int64_t ignore) -> std::optional<DimIdRange> {
    if (targets != ids)
      return std::nullopt;
    std::string dim = symbolOf(logits.getType(), -1);
    if (dim.empty())
      return std::nullopt;
    return DimIdRange{dim,
                      false,
                      {ignore},
                      "the " + dim + " classes of cross_entropy" +
                          atLocation(user)};
  };
  return llvm::TypeSwitch<Operation *, std::optional<DimIdRange>>(user)
      .Case<CrossEntropyOp, CrossEntropyTrainOp>([&](auto loss) {
        return crossEntropy(loss.getLogits(), loss.getTargets(),
                            loss.getIgnoreIndex());
      })
      .Default([](Operation *) { return std::nullopt; });
}

void collectDims(Value ids, llvm::SmallVector<DimIdRange> &ranges) {
  for (Operation *user : ids.getUsers()) {
    if (Value view = sameValuesView(user)) {
      collectDims(view, ranges);
      continue;
    }
    if (std::optional<DimIdRange> range = dimReaderRange(user, ids))
      ranges.push_back(std::move(*range));
  }
}

} // namespace

llvm::SmallVector<DimIdRange> mlir::tx::inputDimIdRanges(BlockArgument input) {
  llvm::SmallVector<DimIdRange> ranges;
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (type && type.getElementType().isInteger(32))
    collectDims(input, ranges);
  return ranges;
}

std::optional<IdRange> mlir::tx::inputIdRange(BlockArgument input) {
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (!type || !type.getElementType().isInteger(32))
    return std::nullopt;
  std::optional<IdRange> range;
  collect(input, range);
  return range;
}
