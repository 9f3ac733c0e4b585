//===- DecodeStep.cpp - incremental decoding entries with a KV cache ------===//
//
// tx-decode-step: from the fused `decode` entry (target prefix, memory, src ->
// logits), derives the two entries of incremental decoding:
//
//   decode_init(memory) -> cross_k.i, cross_v.i     once per sentence: the
//       keys and values of every cross-attention, projected from memory;
//   decode_step(<decode's inputs but memory>, then self_k.j / self_v.j and
//               cross_k.i / cross_v.i in the order the attentions appear)
//               -> logits                            per token: run with the
//       target dim T = the new positions (1 when decoding), and the cache dim
//       `cache` = all positions so far. Each causal self-attention projects
//       keys and values for the new positions only, writes them into its
//       caches self_k.j / self_v.j ([B, cache, d], updated in place at rows
//       cache-T .. cache-1), and attends over the whole cache; positional
//       encodings start at row cache-T.
//
// The derivation needs every op of `decode` to act on positions
// independently, apart from the attentions: it declines (and leaves the
// module alone) otherwise, and drivers fall back to re-running the prefix.
//
// For a language model (tx.kind = "language_model") it derives, from the
// entry with role `logits`:
//
//   lm_step(ids, cache_ids, self_k.j / self_v.j ...) -> logits
//       ids [B, T] the new positions, cache_ids [B, cache] the ids of every
//       position so far (new ones last). Each causal self-attention caches
//       what its keys and values split_heads (rotated keys included; GQA:
//       the key/value heads only) and attends over the cache with the
//       padding mask of cache_ids and causality aligned to the newest rows;
//       positions (positional_encoding, rope, arange) start at cache-T.
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"
#include "txc/Transforms/DeadOps.h"
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxRoles.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"

#include <cmath>
#include <limits>

namespace mlir::tx {
#define GEN_PASS_DEF_DECODESTEPPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

constexpr StringLiteral kCacheDim = "cache";

/// An attention of `decode` with the linears that project its keys and
/// values.
struct Attention {
  AttentionOp op;
  LinearOp key, value;
  bool cross = false; // keys and values projected from an entry argument
  bool rotaryKeys = false; // keys are rope(linear(...)): the cache holds
                           // them rotated
};

/// The linear whose result a split_heads operand of attention splits,
/// directly or through a tx.rope (`rotary`), each read by one op of `live`
/// (ops nothing reaching the return reads do not count: `K = split_heads(
/// ...)` then `K = rope(K)` leaves the unrotated split unread).
LinearOp projection(Value operand, bool &rotary,
                    const llvm::DenseSet<Operation *> &live) {
  auto oneLiveUse = [&](Operation *op) {
    return llvm::count_if(op->getUses(), [&](OpOperand &use) {
             return live.contains(use.getOwner());
           }) == 1;
  };
  auto split = operand.getDefiningOp<SplitHeadsOp>();
  if (!split || !oneLiveUse(split))
    return nullptr;
  Value source = split.getInput();
  rotary = false;
  if (auto rope = source.getDefiningOp<RopeOp>()) {
    if (!oneLiveUse(rope))
      return nullptr;
    rotary = true;
    source = rope.getInput();
  }
  auto linear = source.getDefiningOp<LinearOp>();
  return linear && oneLiveUse(linear) ? linear : nullptr;
}

/// Whether `slice` keeps every symbolic axis of its input whole (and makes
/// none): it then acts on each position the same way.
bool keepsSymbolicAxes(SliceOp slice) {
  Shape in = getShape(cast<RankedTensorType>(slice.getInput().getType()));
  Shape out = getShape(cast<RankedTensorType>(slice.getType()));
  ArrayRef<int64_t> starts = slice.getStarts();
  SmallVector<int64_t> strides = slice.getStrideValues();
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].isSymbolic() && !out[i].isSymbolic())
      continue;
    if (in[i] != out[i] || starts[i] != 0 || strides[i] != 1)
      return false;
  }
  return true;
}

/// `table[:T]` (`wpe[:T]`, learned positions): the first T rows of a table
/// with static rows, every other axis whole; T (the result's first axis) is
/// returned, else null. It is `table[arange(T)]`, whose position ids a step
/// computes from the cache offset (positionRowsToGathers).
std::optional<Dim> positionRows(SliceOp slice) {
  Shape in = getShape(cast<RankedTensorType>(slice.getInput().getType()));
  Shape out = getShape(cast<RankedTensorType>(slice.getType()));
  ArrayRef<int64_t> starts = slice.getStarts();
  SmallVector<int64_t> strides = slice.getStrideValues();
  if (in.empty() || in[0].isSymbolic() || !out[0].isSymbolic())
    return std::nullopt;
  for (size_t i = 0; i < in.size(); ++i)
    if (starts[i] != 0 || strides[i] != 1 || (i > 0 && in[i] != out[i]))
      return std::nullopt;
  return out[0];
}

/// Rewrites every `table[:T]` of `func` (positionRows) as the gather of
/// arange(T) along its first axis: the same rows, and an arange the step
/// starts at the cache offset (tx.position_offset).
void positionRowsToGathers(func::FuncOp func) {
  SmallVector<std::pair<SliceOp, Dim>> slices;
  func.walk([&](SliceOp slice) {
    if (std::optional<Dim> rows = positionRows(slice))
      slices.push_back({slice, *rows});
  });
  OpBuilder builder(func.getContext());
  for (auto [slice, length] : slices) {
    builder.setInsertionPoint(slice);
    Value ids = builder.create<ArangeOp>(
        slice.getLoc(), getTensorType({length}, builder.getIntegerType(32)));
    Value rows = builder.create<GatherOp>(slice.getLoc(), slice.getType(),
                                          slice.getInput(), ids,
                                          builder.getI64IntegerAttr(0));
    slice.replaceAllUsesWith(rows);
    slice.erase();
  }
}

/// The ops of `func` whose results reach its return: a statement nothing
/// reads (`unused = float(arange(T))`) is no reason to decline, and it took
/// lm_step away, named as a position-mixing op.
llvm::DenseSet<Operation *> liveOps(func::FuncOp func) {
  llvm::DenseSet<Operation *> live;
  SmallVector<Operation *> work;
  func.walk([&](func::ReturnOp ret) { work.push_back(ret); });
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (live.insert(def).second)
          work.push_back(def);
  }
  return live;
}

/// Whether `op` treats every position on its own (apart from attention and
/// masks, which the callers check); sets `why` when it rules the entry out
/// for a reason worth more than the op's name.
bool actsPerPosition(Operation *op, std::string &why) {
  // A softmax over the last axis, when that axis is not a length: a
  // transpose that moved the positions last (`softmax(x, axis = 1)` is a
  // transpose, the softmax and a transpose back) normalizes over them.
  auto lastAxisFixed = [](Value value) {
    return !getShape(cast<RankedTensorType>(value.getType()))
                .back()
                .isSymbolic();
  };
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    if (static_cast<int64_t>(softmax.getAxis()) == -1 &&
        lastAxisFixed(softmax.getInput()))
      return true;
  if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
    if (static_cast<int64_t>(softmax.getAxis()) == -1 &&
        lastAxisFixed(softmax.getInput()))
      return true;
  // A rope with an angle table (written out): its table is indexed by
  // position from 0, not from the cache offset.
  if (auto rope = dyn_cast<RopeOp>(op); rope && rope.getAngles()) {
    why = "a rotary embedding with its own angle table";
    return false;
  }
  // Ops that treat every position on its own.
  if (isa<ParamOp, ConstantOp, EmbeddingOp, PositionalEncodingOp, AddOp, SubOp,
          MulOp, DivOp, NegOp, ScaleOp, ReluOp, GeluOp, DropoutOp, LinearOp,
          SplitHeadsOp, MergeHeadsOp, LayerNormOp, AddLayerNormOp, RmsNormOp,
          AddRmsNormOp, RopeOp>(op))
    return true;
  // Indexing (TxIndexOps.td) that leaves positions alone: concat and
  // split cut static axes only, a slice that keeps every symbolic axis
  // whole, a gather along a static axis (`wte[ids]`, `x[..., idx]`).
  // Slices that make positions (`wpe[:T]`) and arange would need the
  // cache offset, and a gather along a symbolic axis mixes positions.
  if (isa<ConcatOp, SplitOp>(op))
    return true;
  if (auto slice = dyn_cast<SliceOp>(op))
    if (keepsSymbolicAxes(slice))
      return true;
  if (auto gather = dyn_cast<GatherOp>(op)) {
    Shape in = getShape(cast<RankedTensorType>(gather.getInput().getType()));
    int64_t axis = static_cast<int64_t>(gather.getAxis());
    if (!in[axis < 0 ? axis + int64_t(in.size()) : axis].isSymbolic())
      return true;
  }
  // A reduction over axes that are not positions (a norm written out:
  // reduce_mean(x, -1) over the features) keeps every position whole.
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op)) {
    // Tx_ReduceOp: operand 0 the input, `axes` the reduced axes.
    Shape in = getShape(cast<RankedTensorType>(op->getOperand(0).getType()));
    return llvm::all_of(
        op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef(),
        [&](int64_t axis) {
          return !in[axis < 0 ? axis + int64_t(in.size()) : axis].isSymbolic();
        });
  }
  // Tensor math (TxMathOps.td) is element-wise too, and so are comparisons,
  // logic and selections (`float(ids != pad)` zeroing padded embeddings).
  // With broadcasting, element-wise ops can make a value over pairs of
  // positions ([B, T, 1] against [B, 1, T]), but only an op that mixes
  // positions (a reduction or a product over them, declined here) could
  // bring it back to a position's value.
  if (isa<ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, TanhOp, CosOp, SinOp, SigmoidOp,
          SiluOp, GeluTanhOp, PowOp, MinimumOp, MaximumOp, ClampOp, CmpOp,
          ToFloatOp, NotOp, AndOp, OrOp, WhereOp, MaskedFillOp>(op))
    return true;
  // A reshape reinterprets the elements in row-major order: positions
  // stay whole when every symbolic axis keeps its stride (the product of
  // the axes after it) and the symbolic axes their order: static axes
  // split or merged around them (`[B, T, d]` to `[B, T, h, d_k]`, `[B, h,
  // T, d]` to `[B, hkv, g, T, d]`), not `reshape(x, B, d, T)`, which keeps
  // the order of B and T but moves elements across positions.
  auto symbolic = [](Value value) {
    SmallVector<Dim> dims;
    for (const Dim &dim : getShape(cast<RankedTensorType>(value.getType())))
      if (dim.isSymbolic())
        dims.push_back(dim);
    return dims;
  };
  // Per symbolic axis: the static product and the symbolic axes after it.
  auto strides = [](Value value) {
    Shape shape = getShape(cast<RankedTensorType>(value.getType()));
    SmallVector<std::pair<int64_t, SmallVector<Dim>>> out;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!shape[i].isSymbolic())
        continue;
      int64_t product = 1;
      SmallVector<Dim> after;
      for (size_t j = i + 1; j < shape.size(); ++j) {
        if (shape[j].isSymbolic())
          after.push_back(shape[j]);
        else
          product *= shape[j].size;
      }
      out.push_back({product, after});
    }
    return out;
  };
  if (isa<ReshapeOp>(op) &&
      symbolic(op->getOperand(0)) == symbolic(op->getResult(0)) &&
      strides(op->getOperand(0)) == strides(op->getResult(0)))
    return true;
  // A transpose that keeps the symbolic axes in order moves each
  // position's elements as a whole (Hugging Face's GPT-NeoX heads,
  // `transpose(reshape(qkv, B, T, heads, 3 * d_k), 1, 2)`); an op after it
  // that acts along an axis checks that axis (a softmax over the positions
  // is refused above).
  if (isa<TransposeOp>(op) &&
      symbolic(op->getOperand(0)) == symbolic(op->getResult(0)))
    return true;
  // A product with a tensor without symbolic axes (a weight, the tied
  // output projection `matmul(x, transpose(wte))`), and the transpose of
  // one: the same for every position.
  auto fixed = [](Value value) {
    return llvm::none_of(getShape(cast<RankedTensorType>(value.getType())),
                         [](const Dim &dim) { return dim.isSymbolic(); });
  };
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return !matmul.getTransposeLhs() && fixed(matmul.getRhs());
  if (isa<TransposeOp>(op))
    return fixed(op->getOperand(0));
  return false;
}

/// Whether masked keys of `attention` get no share of its softmax: without
/// `fill` they drop out, and a fill of -1e4 or less underflows to exactly
/// 0 in f32 next to the scores of a trained model. A softer fill
/// (`masked_fill(s, m, -2.0)`, kept as written) leaves a masked key a share:
/// the future keys a re-run sees and a cache does not hold would change
/// every step's output. Sets `why` when it is soft.
bool masksHard(AttentionOp attention, std::string &why) {
  std::optional<APFloat> fill = attention.getFill();
  if (!fill || fill->convertToDouble() <= -1e4)
    return true;
  llvm::SmallString<16> text;
  fill->toString(text);
  why = "an attention fills masked scores with " + text.str().str() +
        ", softer than -1e4: masked keys keep a share of the softmax, and a "
        "cache holds no future keys (fill with -1e9)";
  return false;
}

/// The reason a cache step is declined when `func` holds an attention
/// written out that tx-fuse-attention did not fuse (a softmax over scores
/// [.., T, S] of two symbolic dims): the op the analysis stopped at first
/// (a mask op, a reshape) is a symptom of that. "" when there is none.
std::string unfusedAttentionReason(func::FuncOp func) {
  // Scores of positions against positions: a softmax over them, or a
  // product that makes them and reaches an exp (a softmax written out,
  // `exp(s - reduce_max(s, -1))` over `matmul(q, transpose(k))`, has no
  // tx.softmax) or the values' product. A product over positions that
  // reaches neither (a Gram matrix beside a fused attention) is no
  // attention.
  auto overPositions = [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || type.getRank() < 3)
      return false;
    Shape shape = getShape(type);
    return shape[shape.size() - 1].isSymbolic() &&
           shape[shape.size() - 2].isSymbolic();
  };
  enum Kind { None, Softmax, Exp, Values };
  // What the scores reach before another product: an exp (a softmax
  // written out), or the values' product itself (sigmoid or linear
  // attention), through any ops between.
  auto reaches = [](Value scores) {
    SmallVector<Value> work{scores};
    llvm::DenseSet<Operation *> seen;
    Kind kind = None;
    while (!work.empty()) {
      for (Operation *user : work.pop_back_val().getUsers()) {
        if (!seen.insert(user).second)
          continue;
        if (isa<ExpOp>(user))
          return Exp;
        if (isa<MatmulOp>(user)) {
          kind = Values;
          continue;
        }
        if (isa<LinearOp>(user))
          continue;
        for (Value result : user->getResults())
          work.push_back(result);
      }
    }
    return kind;
  };
  // A softmax over scores first: its product comes before it in the IR.
  Kind found = None;
  func.walk([&](SoftmaxOp softmax) {
    if (overPositions(softmax.getInput().getType()))
      found = Softmax;
    return found != None ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (found == None)
    func.walk([&](MatmulOp matmul) {
      if (overPositions(matmul.getType()))
        found = reaches(matmul.getResult());
      return found != None ? WalkResult::interrupt() : WalkResult::advance();
    });
  if (found == Softmax)
    return "an attention is written out and was not fused (a softmax over "
           "scores of positions; --tx-fusion-stats gives tx-fuse-attention's "
           "reason, unless --no-fuse turned it off): a cache step needs the "
           "fused attention";
  if (found == Exp)
    return "an attention's softmax is written out (an exp of scores of "
           "positions): tx-fuse-attention fuses attentions written with the "
           "softmax builtin, and a cache step needs the fused attention";
  if (found == Values)
    return "an attention is written out without a softmax (scores of "
           "positions reach the values' product through other ops: sigmoid "
           "or linear attention): tx-fuse-attention fuses softmax "
           "attention only, and a cache step needs the fused attention";
  return "";
}

/// The id the executable pads token inputs with: config `pad`, else 0
/// (docs/driver.md).
int64_t executablePad(ModuleOp module) {
  if (auto config = module->getAttrOfType<DictionaryAttr>("tx.config"))
    if (auto pad = dyn_cast_or_null<IntegerAttr>(config.get("pad")))
      return pad.getInt();
  return 0;
}

/// The attentions of `decode`, or failure with the reason when the entry
/// cannot decode incrementally.
FailureOr<SmallVector<Attention>> analyze(func::FuncOp decode,
                                          std::string &why) {
  SmallVector<Attention> attentions;
  SmallVector<Dim> positionDims;
  const llvm::DenseSet<Operation *> live = liveOps(decode);
  WalkResult result = decode.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp>(op) || !live.contains(op))
      return WalkResult::advance();
    // Position ids (`wpe[arange(T)]`, learned positions, or `wpe[:T]`):
    // over the target length they become the absolute positions cache-T ..
    // cache-1, as in lm_step (checked against the self-attention's length
    // below).
    if (auto arange = dyn_cast<ArangeOp>(op)) {
      Shape shape = getShape(cast<RankedTensorType>(arange.getType()));
      if (shape.size() == 1 && shape[0].isSymbolic()) {
        positionDims.push_back(shape[0]);
        return WalkResult::advance();
      }
      // A static range (`arange(0, d_model)`) is a constant, the same at
      // every step.
      if (llvm::none_of(shape, [](const Dim &d) { return d.isSymbolic(); }))
        return WalkResult::advance();
      why = "an arange is not over the target length";
      return WalkResult::interrupt();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      if (std::optional<Dim> rows = positionRows(slice)) {
        positionDims.push_back(*rows);
        return WalkResult::advance();
      }
    // A rope's or positional encoding's positions (axis -2) are the target
    // positions too: checked below like an arange's.
    if (isa<RopeOp, PositionalEncodingOp>(op)) {
      Shape shape =
          getShape(cast<RankedTensorType>(op->getOperand(0).getType()));
      if (shape.size() < 2 || !shape[shape.size() - 2].isSymbolic()) {
        why = "'" + op->getName().getStringRef().str() +
              "' takes its positions along a static axis";
        return WalkResult::interrupt();
      }
      positionDims.push_back(shape[shape.size() - 2]);
    }
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      bool rotaryValues = false;
      Attention a{attention, projection(attention.getKey(), a.rotaryKeys, live),
                  projection(attention.getValue(), rotaryValues, live)};
      if (!a.key || !a.value || rotaryValues) {
        why = "an attention's keys and values are not split_heads(linear(...)) "
              "(keys may be rotated with rope)";
        return WalkResult::interrupt();
      }
      Value kIn = a.key.getInput(), vIn = a.value.getInput();
      a.cross = isa<BlockArgument>(kIn) && kIn == vIn;
      if (a.cross && a.rotaryKeys) {
        why = "a cross-attention's keys are rotated (rope)";
        return WalkResult::interrupt();
      }
      if (a.cross && attention.getCausal()) {
        why = "a causal attention reads keys straight from an entry argument";
        return WalkResult::interrupt();
      }
      if (!a.cross && (isa<BlockArgument>(kIn) || isa<BlockArgument>(vIn))) {
        why = "an attention mixes entry arguments and computed keys";
        return WalkResult::interrupt();
      }
      if (!a.cross && !attention.getCausal()) {
        // Keys from the memory through something else than their
        // projection (`layer_norm(memory)`): a cross-attention the step
        // cannot cache, not a self-attention that should be causal.
        Shape queries = getShape(
                  cast<RankedTensorType>(attention.getQuery().getType())),
              keys = getShape(
                  cast<RankedTensorType>(attention.getKey().getType()));
        why = queries[queries.size() - 2] != keys[keys.size() - 2]
                  ? "a cross-attention (keys over another length than the "
                    "queries) reads keys computed from the memory through "
                    "more than a linear projection (layer_norm(memory), "
                    "memory * c): decode_init computes linear(memory) of "
                    "the memory as it is, once"
                  : "a self-attention is not causal";
        return WalkResult::interrupt();
      }
      if (!a.cross && !masksHard(attention, why))
        return WalkResult::interrupt();
      // The step drops a self-attention's mask (a decoded prefix has no
      // padding): only a padding mask may be dropped.
      if (!a.cross && attention.getMask() &&
          !attention.getMask().getDefiningOp<PaddingMaskOp>()) {
        why = "a self-attention's mask is not a padding mask";
        return WalkResult::interrupt();
      }
      // ... and only of the id the executable pads the target with, which
      // decoding never feeds: a mask of another id ([SOS], `padding_mask(
      // tgt, 2)`) hides positions the cache would attend to.
      if (!a.cross && attention.getMask()) {
        auto padding = attention.getMask().getDefiningOp<PaddingMaskOp>();
        int64_t pad = executablePad(decode->getParentOfType<ModuleOp>());
        if (padding.getPad() != pad) {
          why = "a self-attention's padding mask hides id " +
                std::to_string(padding.getPad()) +
                ", which decoding feeds (the executable pads the target "
                "with config pad = " +
                std::to_string(pad) +
                " and never feeds that one); a cache step attends to every "
                "position it was fed";
          return WalkResult::interrupt();
        }
      }
      attentions.push_back(a);
      return WalkResult::advance();
    }
    if (auto mask = dyn_cast<PaddingMaskOp>(op)) {
      for (Operation *user : mask->getUsers())
        if (live.contains(user) && !isa<AttentionOp>(user)) {
          // Joined with another condition (`& (j < i)`, a window) that
          // tx-fuse-attention did not take as its causal flag: the mask
          // is what the step cannot compute, not the padding.
          why = isa<AndOp, OrOp, NotOp, ReshapeOp>(user)
                    ? "an attention's mask joins padding_mask with a "
                      "condition other than causal_mask ('" +
                          user->getName().getStringRef().str() + "' at " +
                          FusionStats::formatLocation(user->getLoc()) +
                          "): a cache step computes only padding_mask and "
                          "causal_mask"
                    : "a padding mask is used outside attention ('" +
                          user->getName().getStringRef().str() + "' at " +
                          FusionStats::formatLocation(user->getLoc()) + ")";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    }
    if (actsPerPosition(op, why))
      return WalkResult::advance();
    if (!why.empty())
      return WalkResult::interrupt();
    why = "'" + op->getName().getStringRef().str() +
          "' may mix positions (at " +
          FusionStats::formatLocation(op->getLoc()) + ")";
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  if (attentions.empty()) {
    why = "it has no attention";
    return failure();
  }
  // The step reads the memory only through decode_init's projections: a
  // memory that feeds anything else (a mask computed from it) kept it as
  // an input the driver does not give (every decode then failed on the
  // model's metadata).
  for (Attention &a : attentions) {
    if (!a.cross)
      continue;
    for (Operation *user : a.key.getInput().getUsers()) {
      if (!live.contains(user) ||
          llvm::any_of(attentions, [&](Attention &other) {
            return other.cross && (user == other.key.getOperation() ||
                                   user == other.value.getOperation());
          }))
        continue;
      why = "the memory feeds '" + user->getName().getStringRef().str() +
            "' beside the cross-attentions' key and value projections (a "
            "mask computed from it?): the step reads the memory only "
            "through them, projected once by decode_init";
      return failure();
    }
  }
  for (const Dim &dim : positionDims)
    for (Attention &a : attentions)
      if (!a.cross &&
          dim != getShape(cast<RankedTensorType>(a.key.getType()))[1]) {
        why = "an arange (or a table's first rows) is not over the target "
              "length";
        return failure();
      }
  return attentions;
}

StringAttr argName(func::FuncOp func, unsigned i) {
  return func.getArgAttrOfType<StringAttr>(i, "tx.name");
}

/// decode_init(memory) -> the cross keys and values.
void buildInit(ModuleOp module, func::FuncOp decode,
               ArrayRef<Attention> attentions, func::FuncOp after) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointAfter(after);
  SmallVector<Attention> cross;
  for (const Attention &a : attentions)
    if (a.cross)
      cross.push_back(a);
  auto memory = cast<BlockArgument>(cross.front().key.getInput());
  SmallVector<Type> resultTypes;
  for (Attention a : cross) {
    resultTypes.push_back(a.key.getType());
    resultTypes.push_back(a.value.getType());
  }
  auto init = builder.create<func::FuncOp>(
      decode.getLoc(), "decode_init",
      builder.getFunctionType({memory.getType()}, resultTypes));
  init->setAttr("tx.entry", builder.getStringAttr("decode_init"));
  if (decode->hasAttr(kRoleAttr)) {
    init->setAttr(kRoleAttr, builder.getStringAttr("decode_init"));
    init.setArgAttr(0, kRoleAttr, builder.getStringAttr("memory"));
  }
  if (StringAttr name = argName(decode, memory.getArgNumber()))
    init.setArgAttr(0, "tx.name", name);
  Block *body = init.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(memory, body->getArgument(0));
  SmallVector<Value> results;
  for (auto [i, a] : llvm::enumerate(cross)) {
    for (LinearOp linear : {a.key, a.value}) {
      for (Value operand : linear->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && !mapping.contains(operand))
          builder.clone(*def, mapping);
      results.push_back(builder.clone(*linear, mapping)->getResult(0));
    }
    init.setResultAttr(2 * i, "tx.name",
                       builder.getStringAttr("cross_k." + std::to_string(i)));
    init.setResultAttr(2 * i + 1, "tx.name",
                       builder.getStringAttr("cross_v." + std::to_string(i)));
    if (decode->hasAttr(kRoleAttr))
      for (unsigned r : {2 * unsigned(i), 2 * unsigned(i) + 1})
        init.setResultAttr(r, kRoleAttr, builder.getStringAttr("cache"));
  }
  builder.create<func::ReturnOp>(decode.getLoc(), results);
}

/// decode_step: decode with cached keys and values.
func::FuncOp buildStep(ModuleOp module, func::FuncOp decode,
                       const Dim &cacheDim) {
  func::FuncOp step = decode.clone();
  step.setSymName("decode_step");
  module.getBody()->getOperations().insertAfter(Block::iterator(decode),
                                                step.getOperation());
  step->setAttr("tx.entry", StringAttr::get(module.getContext(), "decode_step"));
  positionRowsToGathers(step);
  bool roles = decode->hasAttr(kRoleAttr);
  if (roles)
    step->setAttr(kRoleAttr,
                  StringAttr::get(module.getContext(), "decode_step"));
  std::string why;
  SmallVector<Attention> attentions = *analyze(step, why);
  OpBuilder builder(module.getContext());
  Block &body = step.front();
  auto addArg = [&](Type type, const std::string &name) {
    unsigned index = step.getNumArguments();
    (void)step.insertArgument(index, type, {}, step.getLoc());
    step.setArgAttr(index, "tx.name", builder.getStringAttr(name));
    if (roles)
      step.setArgAttr(index, kRoleAttr, builder.getStringAttr("cache"));
    return body.getArgument(index);
  };
  int crossIndex = 0, selfIndex = 0;
  for (Attention a : attentions) {
    auto kSplit = a.op.getKey().getDefiningOp<SplitHeadsOp>();
    auto vSplit = a.op.getValue().getDefiningOp<SplitHeadsOp>();
    if (a.cross) {
      std::string i = std::to_string(crossIndex++);
      kSplit->setOperand(0, addArg(a.key.getType(), "cross_k." + i));
      vSplit->setOperand(0, addArg(a.value.getType(), "cross_v." + i));
      continue;
    }
    std::string j = std::to_string(selfIndex++);
    for (auto [split, name] : {std::make_pair(kSplit, "self_k." + j),
                               std::make_pair(vSplit, "self_v." + j)}) {
      // The new positions' keys (rotated, with rope) or values go into the
      // cache.
      Value fresh = split.getInput();
      auto type = cast<RankedTensorType>(fresh.getType());
      Shape shape = getShape(type);
      shape[1] = cacheDim;
      Value cache = addArg(getTensorType(shape, type.getElementType()), name);
      builder.setInsertionPoint(split);
      Value written = builder.create<CacheWriteOp>(
          fresh.getLoc(), cache.getType(), cache, fresh);
      split->setOperand(0, written);
      // split_heads infers its type from the (now cache-sized) input.
      SmallVector<Type> types;
      (void)SplitHeadsOp::inferReturnTypes(
          module.getContext(), split.getLoc(),
          SplitHeadsOp::Adaptor(split->getOperands(), split->getAttrDictionary()),
          types);
      split.getResult().setType(cast<RankedTensorType>(types[0]));
    }
    // Decoded prefixes have no padding: the cache holds every position, and
    // causality (the new rows are the last ones) is the only mask.
    a.op.getMaskMutable().clear();
  }
  // Positions start at the cache offset: aranges over the target length
  // (a static one, `arange(0, d_model)`, is a constant and keeps its
  // start), positional encodings and ropes.
  step.walk([&](Operation *op) {
    auto arange = dyn_cast<ArangeOp>(op);
    if (isa<PositionalEncodingOp, RopeOp>(op) ||
        (arange &&
         getShape(cast<RankedTensorType>(arange.getType()))[0].isSymbolic()))
      op->setAttr("tx.position_offset", builder.getStringAttr(kCacheDim));
  });
  eraseDeadOps(step.front());
  // Arguments nothing reads any more (memory) are dropped.
  llvm::BitVector unused(step.getNumArguments());
  for (BlockArgument arg : body.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  (void)step.eraseArguments(unused);
  step.setType(builder.getFunctionType(body.getArgumentTypes(),
                                       step.getResultTypes()));
  return step;
}

//===----------------------------------------------------------------------===//
// lm_step: a decoder-only language model's logits with a KV cache
//===----------------------------------------------------------------------===//

/// A causal self-attention of `logits`: the split_heads of its keys and
/// values (what the cache holds, rotated keys included), or null where the
/// attention reads heads made otherwise (a per-head norm of split_heads:
/// QK-norm), whose cache then holds those heads merged; and the parts of
/// its mask.
struct LmAttention {
  AttentionOp op;
  SplitHeadsOp key, value;
  PaddingMaskOp padding; // padding_mask(tokens) in the mask, or null
  /// Parts of the mask written out from positions alone (a sliding
  /// window, `j > i - window`): the step computes them again over the
  /// cached keys (positionMaskParts).
  SmallVector<Value> positionParts;
};

/// The split_heads that makes `heads` when the cache can hold its input
/// (one use, a computed tensor), else null.
SplitHeadsOp cachedSplit(Value heads) {
  auto split = heads.getDefiningOp<SplitHeadsOp>();
  if (split && split->hasOneUse() && !isa<BlockArgument>(split.getInput()))
    return split;
  return nullptr;
}

/// Whether a reshape of a mask only adds or drops axes of size 1 and keeps
/// what each axis means to the attention it feeds (masks broadcast from
/// the right: the last axis is the keys', the one before the queries'; a
/// leading batch axis stays first). `[B, 1, 1, S] -> [B, 1, S, 1]` also
/// only moves a unit axis, but it turns a mask of padding keys into one of
/// padding queries: not a padding mask any more.
bool movesUnitAxes(ReshapeOp reshape) {
  Shape in = getShape(cast<RankedTensorType>(reshape.getInput().getType()));
  Shape out = getShape(cast<RankedTensorType>(reshape.getResult().getType()));
  auto isUnit = [](const Dim &dim) {
    return !dim.isSymbolic() && dim.size == 1;
  };
  // The last two axes (keys, queries) as they are, unit or not.
  for (size_t fromEnd = 1; fromEnd <= 2; ++fromEnd) {
    Dim a = fromEnd <= in.size() ? in[in.size() - fromEnd] : Dim::fixed(1);
    Dim b = fromEnd <= out.size() ? out[out.size() - fromEnd] : Dim::fixed(1);
    if (a != b)
      return false;
  }
  // Any other axis of size other than 1: the batch axis, first in both.
  auto leading = [&](const Shape &shape) {
    SmallVector<std::pair<size_t, Dim>> dims;
    for (size_t i = 0; i + 2 < shape.size(); ++i)
      if (!isUnit(shape[i]))
        dims.push_back({i, shape[i]});
    return dims;
  };
  SmallVector<std::pair<size_t, Dim>> a = leading(in), b = leading(out);
  return a == b && (a.empty() || (a.size() == 1 && a[0].first == 0));
}

/// Ops a mask written out from positions may be made of besides arange and
/// reshapes: constants and element-wise arithmetic, comparisons and logic
/// (every operand broadcast from the right).
bool positionArithmetic(Operation *op) {
  return isa<ConstantOp, ToFloatOp, CmpOp, AndOp, OrOp, NotOp, AddOp, SubOp,
             MulOp, DivOp, NegOp, AbsOp, ScaleOp, MinimumOp, MaximumOp, ClampOp,
             WhereOp>(op);
}

/// `value` at an attention mask's axes `fromEnd` (axis i of `value` is
/// the mask's axis fromEnd[i] counted from the end: 1 the keys, 2 the
/// queries; 0 a unit axis that a reshape drops).
struct PositionUse {
  Value value;
  SmallVector<int64_t> fromEnd;
  bool operator<(const PositionUse &other) const {
    if (value != other.value)
      return value.getAsOpaquePointer() < other.value.getAsOpaquePointer();
    return fromEnd < other.fromEnd;
  }
};

/// Where the axes of `operand`, an operand of an element-wise op whose
/// result has axes `fromEnd`, are: broadcasting aligns them from the right.
SmallVector<int64_t> operandAxes(Value operand, ArrayRef<int64_t> fromEnd) {
  size_t rank = cast<RankedTensorType>(operand.getType()).getRank();
  return SmallVector<int64_t>(fromEnd.end() - rank, fromEnd.end());
}

/// Where the axes of a reshape's input are, given its result's: it only adds
/// or drops axes of size 1 (its other axes in order on both sides), or
/// nullopt.
std::optional<SmallVector<int64_t>>
reshapeInputAxes(ReshapeOp reshape, ArrayRef<int64_t> fromEnd) {
  Shape in = getShape(cast<RankedTensorType>(reshape.getInput().getType()));
  Shape out = getShape(cast<RankedTensorType>(reshape.getType()));
  auto isUnit = [](const Dim &dim) {
    return !dim.isSymbolic() && dim.size == 1;
  };
  SmallVector<int64_t> axes(in.size(), 0);
  size_t o = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (isUnit(in[i]))
      continue;
    while (o < out.size() && isUnit(out[o]))
      ++o;
    if (o == out.size() || out[o] != in[i])
      return std::nullopt;
    axes[i] = fromEnd[o++];
  }
  for (; o < out.size(); ++o)
    if (!isUnit(out[o]))
      return std::nullopt;
  return axes;
}

/// Whether `use` is computed from position ids alone (arange over the
/// sequence length `positions`, constants, element-wise math, reshapes
/// adding or dropping unit axes), each arange ending on the mask's query
/// or key axis; collects its ops into `ops`. `why` says what stops it
/// (empty: not made of positions at all).
bool positionMaskPart(const PositionUse &use, const Dim &positions,
                      llvm::SetVector<Operation *> &ops, std::string &why) {
  Operation *def = use.value.getDefiningOp();
  if (!def) {
    if (why.empty())
      why = "an entry input other than through padding_mask";
    return false;
  }
  ops.insert(def);
  if (auto arange = dyn_cast<ArangeOp>(def)) {
    if (getShape(cast<RankedTensorType>(arange.getType()))[0] != positions) {
      why = "an arange in an attention's mask is not over the sequence length";
      return false;
    }
    if (use.fromEnd[0] != 1 && use.fromEnd[0] != 2) {
      why = "an arange in an attention's mask is not on its query or key "
            "axis";
      return false;
    }
    return true;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    std::optional<SmallVector<int64_t>> axes =
        reshapeInputAxes(reshape, use.fromEnd);
    return axes &&
           positionMaskPart({reshape.getInput(), *axes}, positions, ops, why);
  }
  if (!positionArithmetic(def) || def->getNumResults() != 1) {
    if (why.empty())
      why = "'" + def->getName().getStringRef().str() + "'";
    return false;
  }
  for (Value operand : def->getOperands())
    if (!positionMaskPart({operand, operandAxes(operand, use.fromEnd)},
                          positions, ops, why))
      return false;
  return true;
}

/// Every axis of a mask of `rank` at its own place from the end.
SmallVector<int64_t> maskAxes(Value mask) {
  int64_t rank = cast<RankedTensorType>(mask.getType()).getRank();
  SmallVector<int64_t> fromEnd;
  for (int64_t i = 0; i < rank; ++i)
    fromEnd.push_back(rank - i);
  return fromEnd;
}

/// A value of a mask part from positions at one (query, key) pair: f32, i32
/// or bool.
struct PairValue {
  enum Kind { F32, I32, Bool } kind = F32;
  float f = 0.0f;
  int64_t i = 0;
  bool b = false;
};

/// `value` (a mask part's, positionMaskPart) at query position `query` and
/// key position `key`, computed as the kernels compute it (f32 arithmetic,
/// i32 positions); nullopt where a constant is not one value.
std::optional<PairValue> evaluateAtPair(Value value, ArrayRef<int64_t> fromEnd,
                                        int64_t query, int64_t key) {
  Operation *def = value.getDefiningOp();
  auto at = [&](Value operand) {
    return evaluateAtPair(operand, operandAxes(operand, fromEnd), query, key);
  };
  PairValue out;
  if (auto arange = dyn_cast<ArangeOp>(def)) {
    out.kind = PairValue::I32;
    out.i = int64_t(arange.getStart()) + (fromEnd[0] == 1 ? key : query);
    return out;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(def))
    return evaluateAtPair(reshape.getInput(),
                          *reshapeInputAxes(reshape, fromEnd), query, key);
  if (auto constant = dyn_cast<ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return std::nullopt;
    Type element = dense.getElementType();
    if (element.isInteger(1)) {
      out.kind = PairValue::Bool;
      out.b = dense.getSplatValue<bool>();
    } else if (isa<IntegerType>(element)) {
      out.kind = PairValue::I32;
      out.i = dense.getSplatValue<APInt>().getSExtValue();
    } else {
      out.f = dense.getSplatValue<APFloat>().convertToFloat();
    }
    return out;
  }
  SmallVector<PairValue, 3> in;
  for (Value operand : def->getOperands()) {
    std::optional<PairValue> v = at(operand);
    if (!v)
      return std::nullopt;
    in.push_back(*v);
  }
  auto number = [](const PairValue &v) {
    return v.kind == PairValue::I32 ? double(v.i) : double(v.f);
  };
  auto f32 = [&](float f) {
    out.kind = PairValue::F32;
    out.f = f;
    return out;
  };
  auto boolean = [&](bool b) {
    out.kind = PairValue::Bool;
    out.b = b;
    return out;
  };
  auto nanAware = [](float a, float b, bool minimum) {
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<float>::quiet_NaN();
    return minimum ? std::min(a, b) : std::max(a, b);
  };
  if (isa<ToFloatOp>(def))
    return f32(float(in[0].i));
  if (auto cmp = dyn_cast<CmpOp>(def)) {
    double a = number(in[0]), b = number(in[1]);
    switch (cmp.getPredicate()) {
    case CmpPredicate::eq:
      return boolean(a == b);
    case CmpPredicate::ne:
      return boolean(a != b);
    case CmpPredicate::lt:
      return boolean(a < b);
    case CmpPredicate::le:
      return boolean(a <= b);
    case CmpPredicate::gt:
      return boolean(a > b);
    case CmpPredicate::ge:
      return boolean(a >= b);
    }
  }
  if (isa<AndOp>(def))
    return boolean(in[0].b && in[1].b);
  if (isa<OrOp>(def))
    return boolean(in[0].b || in[1].b);
  if (isa<NotOp>(def))
    return boolean(!in[0].b);
  if (isa<AddOp>(def))
    return f32(in[0].f + in[1].f);
  if (isa<SubOp>(def))
    return f32(in[0].f - in[1].f);
  if (isa<MulOp>(def))
    return f32(in[0].f * in[1].f);
  if (isa<DivOp>(def))
    return f32(in[0].f / in[1].f);
  if (isa<NegOp>(def))
    return f32(-in[0].f);
  if (isa<AbsOp>(def))
    return f32(std::fabs(in[0].f));
  if (auto scale = dyn_cast<ScaleOp>(def))
    return f32(in[0].f * scale.getFactor().convertToFloat());
  if (isa<MinimumOp>(def))
    return f32(nanAware(in[0].f, in[1].f, true));
  if (isa<MaximumOp>(def))
    return f32(nanAware(in[0].f, in[1].f, false));
  if (auto clamp = dyn_cast<ClampOp>(def)) {
    float x = in[0].f;
    if (auto low = clamp.getMin())
      x = nanAware(x, low->convertToFloat(), false);
    if (auto high = clamp.getMax())
      x = nanAware(x, high->convertToFloat(), true);
    return f32(x);
  }
  if (isa<WhereOp>(def))
    return in[0].b ? in[1] : in[2];
  return std::nullopt;
}

/// The most positions whose own keys a check walks (keepsOwnKey).
constexpr int64_t kMaxDiagonalCheck = int64_t(1) << 20;

/// Whether every part from positions keeps each query's own key (j = i)
/// for the positions below `bound`: then a real query always sees a key,
/// itself. Else `why` names the first position that loses it.
bool keepsOwnKey(ArrayRef<Value> parts, int64_t bound, std::string &why) {
  if (bound > kMaxDiagonalCheck) {
    why = "the sequence length's bound (" + std::to_string(bound) +
          ") is past the " + std::to_string(kMaxDiagonalCheck) +
          " positions whose own keys the pass checks";
    return false;
  }
  for (Value part : parts) {
    SmallVector<int64_t> axes = maskAxes(part);
    for (int64_t i = 0; i < bound; ++i) {
      std::optional<PairValue> keep = evaluateAtPair(part, axes, i, i);
      if (!keep || !keep->b) {
        why = keep ? "masks the query at position " + std::to_string(i) +
                         " from its own key"
                   : "holds a constant that is not one value";
        return false;
      }
    }
  }
  return true;
}

/// The mask part `use` computed in a step over the cached keys: its ops
/// cloned before `builder`'s insertion point with the key axis `positions`
/// widened to `cacheDim` (a key arange over the whole cache; query aranges
/// start at the cache offset like every arange of the step).
Value rebuildPositionPart(OpBuilder &builder, const PositionUse &use,
                          const Dim &positions, const Dim &cacheDim,
                          std::map<PositionUse, Value> &done) {
  if (auto it = done.find(use); it != done.end())
    return it->second;
  Operation *def = use.value.getDefiningOp();
  if (isa<ConstantOp>(def))
    return use.value;
  auto type = cast<RankedTensorType>(use.value.getType());
  Shape shape = getShape(type);
  for (size_t i = 0; i < shape.size(); ++i)
    if (use.fromEnd[i] == 1 && shape[i] == positions)
      shape[i] = cacheDim;
  RankedTensorType rebuiltType = getTensorType(shape, type.getElementType());
  Operation *clone;
  if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    Value input = rebuildPositionPart(
        builder, {reshape.getInput(), *reshapeInputAxes(reshape, use.fromEnd)},
        positions, cacheDim, done);
    clone = builder.create<ReshapeOp>(reshape.getLoc(), rebuiltType, input);
  } else {
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand,
                  rebuildPositionPart(
                      builder, {operand, operandAxes(operand, use.fromEnd)},
                      positions, cacheDim, done));
    clone = builder.clone(*def, mapping);
    clone->getResult(0).setType(rebuiltType);
  }
  return done[use] = clone->getResult(0);
}

/// Whether `value` is computed from an arange.
bool readsPositions(Value value) {
  SmallVector<Operation *> work;
  llvm::DenseSet<Operation *> seen;
  if (Operation *def = value.getDefiningOp())
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (isa<ArangeOp>(op))
      return true;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (seen.insert(def).second)
          work.push_back(def);
  }
  return false;
}

/// The ops of attention masks: those of their parts from positions, and the
/// `&` and reshapes that join parts.
struct MaskOps {
  llvm::SetVector<Operation *> positions;
  llvm::DenseSet<Operation *> joins;
};

/// Walks a mask made of `padding_mask(tokens)`, `causal_mask(tokens)` and
/// parts computed from positions alone (positionMaskPart, collected in
/// `positionParts` with their ops in `maskOps`) joined by `&` and
/// unit-axis reshapes; false for anything else (`why` set where a part is
/// written from positions but not in a form a step computes).
bool maskParts(Value mask, Value tokens, LmAttention &a, bool &causal,
               MaskOps &maskOps, std::string &why) {
  Operation *def = mask.getDefiningOp();
  if (auto pad = dyn_cast_or_null<PaddingMaskOp>(def)) {
    if (pad.getIds() != tokens || (a.padding && a.padding != pad))
      return false;
    a.padding = pad;
    return true;
  }
  if (auto causalMask = dyn_cast_or_null<CausalMaskOp>(def)) {
    causal = true;
    return causalMask->getOperand(0) == tokens;
  }
  // The axes of a part reached through & and movesUnitAxes are the
  // attention mask's from the end.
  Dim positions = getShape(cast<RankedTensorType>(tokens.getType()))[1];
  llvm::SetVector<Operation *> ops;
  std::string stop;
  if (positionMaskPart({mask, maskAxes(mask)}, positions, ops, stop) &&
      llvm::any_of(ops, [](Operation *op) { return isa<ArangeOp>(op); })) {
    a.positionParts.push_back(mask);
    maskOps.positions.insert(ops.begin(), ops.end());
    return true;
  }
  if (auto both = dyn_cast_or_null<AndOp>(def)) {
    maskOps.joins.insert(both);
    return maskParts(both.getLhs(), tokens, a, causal, maskOps, why) &&
           maskParts(both.getRhs(), tokens, a, causal, maskOps, why);
  }
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(def)) {
    maskOps.joins.insert(reshape);
    if (!movesUnitAxes(reshape)) {
      Shape in = getShape(cast<RankedTensorType>(reshape.getInput().getType())),
            out = getShape(cast<RankedTensorType>(reshape.getType()));
      Operation *part = reshape.getInput().getDefiningOp();
      if (!why.empty()) {
      } else if (!in.empty() && !out.empty() && in.back() == out.back() &&
                 part) {
        // The key axis stays last: what is wrong is the part itself
        // (`ids == pad`, the padding kept, not masked).
        why = "an attention's mask holds '" +
              part->getName().getStringRef().str() + "' (at " +
              FusionStats::formatLocation(part->getLoc()) + ") of " +
              formatType(reshape.getInput().getType()) +
              ", which is neither padding_mask (ids != pad) nor causal_mask "
              "of the @tokens input nor computed from positions: a cache "
              "step computes only those";
      } else {
        why = "an attention's mask is reshaped from " +
              formatType(reshape.getInput().getType()) + " to " +
              formatType(reshape.getType()) +
              ", off its key axis (a padding mask over query rows, not "
              "keys), which a cache step does not compute";
      }
      return false;
    }
    return maskParts(reshape.getInput(), tokens, a, causal, maskOps, why);
  }
  if (why.empty() && !stop.empty() && stop[0] == '\'' && readsPositions(mask))
    why = "an attention's mask reads " + stop +
          " beside positions, which a cache step cannot compute again (a "
          "mask part from positions may use arange over the @tokens "
          "length, constants, + - * /, abs, min, max, clamp, where, "
          "comparisons and & | !)";
  return false;
}

/// Whether `op` is a padding_mask or causal_mask, or an & or reshape with
/// one among what it is made of.
bool madeOfMaskBuiltins(Operation *op) {
  if (!op)
    return false;
  if (isa<PaddingMaskOp, CausalMaskOp>(op))
    return true;
  if (isa<AndOp, ReshapeOp>(op))
    return llvm::any_of(op->getOperands(), [](Value operand) {
      return madeOfMaskBuiltins(operand.getDefiningOp());
    });
  return false;
}

/// The attentions of a language model's `logits` entry, or failure with
/// the reason when it cannot decode incrementally.
FailureOr<SmallVector<LmAttention>> analyzeLm(func::FuncOp logits, Value tokens,
                                              std::string &why) {
  Dim positions = getShape(cast<RankedTensorType>(tokens.getType()))[1];
  if (!positions.isSymbolic()) {
    why = "the sequence length of the @tokens input is not a symbolic dim";
    return failure();
  }
  SmallVector<LmAttention> attentions;
  auto isMask = [](Value value) {
    return cast<RankedTensorType>(value.getType())
        .getElementType()
        .isInteger(1);
  };
  const llvm::DenseSet<Operation *> live = liveOps(logits);
  // Mask parts computed from positions are computed again in the step
  // (over the cached keys): their ops are checked as a whole. One whose
  // value feeds anything but such masks (`i` of the mask added to the
  // embeddings) stays as it is for that use, and is checked as any op is,
  // with everything it is computed from.
  // Each live attention's mask, read once: its parts, whether it is causal,
  // and why it cannot be computed again (when it cannot).
  struct MaskRead {
    LmAttention parts;
    bool causal, ok;
    std::string why;
  };
  MaskOps maskOps;
  llvm::DenseMap<Operation *, MaskRead> masks;
  logits.walk([&](AttentionOp attention) {
    if (!live.contains(attention))
      return;
    MaskRead read{{}, attention.getCausal(), true, ""};
    if (Value mask = attention.getMask())
      read.ok =
          maskParts(mask, tokens, read.parts, read.causal, maskOps, read.why);
    masks[attention] = std::move(read);
  });
  llvm::DenseSet<Operation *> maskOnly;
  for (bool grown = true; grown;) {
    grown = false;
    for (Operation *op : maskOps.positions)
      if (!maskOnly.contains(op) &&
          llvm::all_of(op->getUsers(), [&](Operation *user) {
            auto attention = dyn_cast<AttentionOp>(user);
            return !live.contains(user) || maskOnly.contains(user) ||
                   maskOps.joins.contains(user) ||
                   (attention && attention.getMask() == op->getResult(0));
          }))
        grown |= maskOnly.insert(op).second;
  }
  WalkResult result = logits.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp>(op) || !live.contains(op) ||
        maskOnly.contains(op))
      return WalkResult::advance();
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      LmAttention a{attention, cachedSplit(attention.getKey()),
                    cachedSplit(attention.getValue()), nullptr};
      // Heads made otherwise are cached as they are (merged): computed
      // from the new positions alone, as every op here is checked to be.
      for (Value heads : {attention.getKey(), attention.getValue()}) {
        Operation *def = heads.getDefiningOp();
        if (!def || (isa<SplitHeadsOp>(def) &&
                     isa<BlockArgument>(def->getOperand(0)))) {
          why = "an attention reads keys or values from an entry argument";
          return WalkResult::interrupt();
        }
        if (getShape(cast<RankedTensorType>(heads.getType()))[2] != positions) {
          why = "an attention's keys or values are not over the sequence "
                "length";
          return WalkResult::interrupt();
        }
      }
      const MaskRead &read = masks[attention];
      a.padding = read.parts.padding;
      a.positionParts = read.parts.positionParts;
      bool causal = read.causal;
      if (Value mask = attention.getMask()) {
        if (!read.ok) {
          why = !read.why.empty() ? read.why
                : readsPositions(mask)
                    ? "an attention's mask is written out from positions "
                      "and something else than padding_mask and "
                      "causal_mask of the @tokens input, which a cache "
                      "step cannot compute"
                    : "an attention's mask is not made of padding_mask, "
                      "causal_mask of the @tokens input and parts computed "
                      "from positions (arange) alone";
          return WalkResult::interrupt();
        }
      }
      if (!causal) {
        why = "a self-attention is not causal (a cache holds no later "
              "keys; write its causality as causal_mask(ids), causal = "
              "true, or arange(T)[:, None] >= arange(T)[None, :] apart "
              "from the rest of its mask; under --no-fuse only the first "
              "two count)";
        return WalkResult::interrupt();
      }
      // Written out with a fill, a query whose keys are all masked is the
      // mean of every value, later positions' included, which a cache does
      // not hold: each query must keep a key, its own (the builtin gives
      // such a row zeros, in the step too).
      if (attention.getFill() && !a.positionParts.empty()) {
        std::string lost;
        if (!keepsOwnKey(a.positionParts, positions.bound, lost)) {
          why = "an attention's mask computed from positions " + lost +
                ", and its fill makes a query with no key left the mean of "
                "every value, later positions' included, which a cache "
                "does not hold (keep each query's own key, or use the "
                "attention builtin, which gives such a row zeros)";
          return WalkResult::interrupt();
        }
      }
      if (!masksHard(attention, why))
        return WalkResult::interrupt();
      attentions.push_back(a);
      return WalkResult::advance();
    }
    // Masks feed attentions only (checked there), through & and reshapes.
    // (Other bool values, `ids != pad`, act per position.)
    if (isa<PaddingMaskOp, CausalMaskOp, AndOp, ReshapeOp>(op) &&
        isMask(op->getResult(0)) && madeOfMaskBuiltins(op)) {
      for (Operation *user : op->getUsers())
        if (live.contains(user) && !isa<AttentionOp, AndOp, ReshapeOp>(user)) {
          why = "a mask ('" + op->getName().getStringRef().str() +
                "') feeds '" + user->getName().getStringRef().str() +
                "': masks may only be joined by & (and reshaped) on their "
                "way to attention";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    }
    // Position ids: arange over the sequence length (or a table's first
    // rows, `wpe[:T]`) becomes the absolute positions cache-T .. cache-1.
    // An arange of a static length is a constant (a rotary table's
    // frequencies, `arange(0, d_k // 2)`): the same in the step, where it
    // keeps its start.
    if (auto arange = dyn_cast<ArangeOp>(op)) {
      Shape shape = getShape(cast<RankedTensorType>(arange.getType()));
      if (shape.size() == 1 &&
          (shape[0] == positions || !shape[0].isSymbolic()))
        return WalkResult::advance();
      why = "an arange is over " + formatShape(shape) +
            ", not the sequence length of the @tokens input (the step "
            "computes positions only over it)";
      return WalkResult::interrupt();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      if (std::optional<Dim> rows = positionRows(slice)) {
        if (*rows == positions)
          return WalkResult::advance();
        why = "a table's first rows ('tx.slice') are not over the sequence "
              "length";
        return WalkResult::interrupt();
      }
    // Positions run along axis -2 of a rope's or a positional encoding's
    // input: the step starts them at the cache offset there, which must be
    // the new positions' axis (a rope over [B, T, h, d] rotated the heads
    // by position).
    if (isa<RopeOp, PositionalEncodingOp>(op)) {
      Shape shape =
          getShape(cast<RankedTensorType>(op->getOperand(0).getType()));
      if (shape.size() < 2 || shape[shape.size() - 2] != positions) {
        why = "'" + op->getName().getStringRef().str() +
              "' takes its positions along an axis (-2 of " +
              formatShape(shape) +
              ") that is not the sequence length of the @tokens input";
        return WalkResult::interrupt();
      }
    }
    // A rope with an angle table (a rotary embedding written out, as
    // Hugging Face's Llama computes it: cos and sin of arange(T) times the
    // frequencies) reads the table's row of each new position: the table
    // is computed in the step from positions at the cache offset (its ops
    // are checked here as any), so the rope itself starts at 0.
    if (auto rope = dyn_cast<RopeOp>(op); rope && rope.getAngles())
      return WalkResult::advance();
    if (actsPerPosition(op, why))
      return WalkResult::advance();
    if (why.empty()) {
      // A [.., T, T] value relates positions to positions (a bias or a
      // mask written out, ALiBi, a window): say that, not just the op.
      bool pairs = llvm::any_of(op->getResultTypes(), [&](Type type) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        return tensor && llvm::count(getShape(tensor), positions) >= 2;
      });
      bool positionIds = llvm::any_of(op->getOperands(), [](Value v) {
        return v.getDefiningOp<ArangeOp>() != nullptr;
      });
      why = "'" + op->getName().getStringRef().str() + "' " +
            (pairs ? "computes a value over pairs of positions (a mask or "
                     "bias written out, not padding_mask and causal_mask): "
                     "a cache step cannot"
             : positionIds
                 ? "uses the position ids (arange) other than to index an "
                   "embedding: a mask or bias written out from positions, "
                   "which a cache step cannot compute"
                 : "may mix positions") +
            " (at " + FusionStats::formatLocation(op->getLoc()) + ")";
    }
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  if (attentions.empty()) {
    why = "it has no attention";
    return failure();
  }
  // Written out with a fill and a padding mask, an attention gives the pad
  // positions of a left-padded row (no key left) the mean of every value:
  // in `logits` all T positions', in the step the cached ones. Nothing may
  // read those positions then: every attention masks pad keys, and no op
  // mixes the rows of a fixed batch (they were read, and lm_step's logits
  // at real positions differed).
  auto padRowsDiffer = llvm::find_if(
      attentions, [](LmAttention &a) { return a.op.getFill() && a.padding; });
  if (padRowsDiffer != attentions.end()) {
    const std::string padRows =
        "a written-out attention (masked_fill, at " +
        FusionStats::formatLocation(padRowsDiffer->op.getLoc()) +
        ") gives the pad positions of left-padded rows the mean of every "
        "value, later positions' included, and ";
    for (LmAttention &a : attentions)
      if (!a.padding) {
        why = padRows +
              "an attention without padding_mask of the @tokens "
              "input (at " +
              FusionStats::formatLocation(a.op.getLoc()) +
              ") reads them: a cache step holds no later positions (mask "
              "the padding in every attention, or use the attention "
              "builtin, which gives such a row zeros)";
        return failure();
      }
    if (!getShape(cast<RankedTensorType>(tokens.getType()))[0].isSymbolic()) {
      why = padRows + "a fixed batch (not a dim) lets an op mix rows: a "
                      "cache step holds no later positions (use the "
                      "attention builtin, or a batch dim)";
      return failure();
    }
  }
  return attentions;
}

/// lm_step(tokens, cache_ids, self_k.j / self_v.j ...) -> logits, from
/// `logits`.
func::FuncOp buildLmStep(ModuleOp module, func::FuncOp logits,
                         unsigned tokensIndex, const Dim &cacheDim) {
  func::FuncOp step = logits.clone();
  step.setSymName("lm_step");
  positionRowsToGathers(step);
  module.getBody()->getOperations().insertAfter(Block::iterator(logits),
                                                step.getOperation());
  MLIRContext *context = module.getContext();
  OpBuilder builder(context);
  step->setAttr("tx.entry", builder.getStringAttr("lm_step"));
  step->setAttr(kRoleAttr, builder.getStringAttr("lm_step"));
  Block &body = step.front();
  Value tokens = body.getArgument(tokensIndex);
  std::string why;
  SmallVector<LmAttention> attentions = *analyzeLm(step, tokens, why);
  auto addArg = [&](Type type, StringRef name, StringRef role) {
    unsigned index = step.getNumArguments();
    (void)step.insertArgument(index, type, {}, step.getLoc());
    step.setArgAttr(index, "tx.name", builder.getStringAttr(name));
    step.setArgAttr(index, kRoleAttr, builder.getStringAttr(role));
    return body.getArgument(index);
  };
  // The ids of every cached position, for the padding masks.
  auto tokensType = cast<RankedTensorType>(tokens.getType());
  Shape idsShape = getShape(tokensType);
  idsShape[1] = cacheDim;
  Value cacheIds = addArg(getTensorType(idsShape, tokensType.getElementType()),
                          "cache_ids", "cache_ids");
  const Dim positions = getShape(tokensType)[1];
  std::map<PositionUse, Value> rebuiltParts;
  for (auto [j, a] : llvm::enumerate(attentions)) {
    for (auto [split, operand, name] :
         {std::make_tuple(a.key, 1u, "self_k." + std::to_string(j)),
          std::make_tuple(a.value, 2u, "self_v." + std::to_string(j))}) {
      if (!split) {
        // Heads the attention reads as they are made: merged, cached,
        // split again for it (a view of the cache).
        Value heads = a.op->getOperand(operand);
        auto headsType = cast<RankedTensorType>(heads.getType());
        builder.setInsertionPoint(a.op);
        Value fresh =
            builder.create<MergeHeadsOp>(heads.getLoc(), ValueRange{heads})
                .getResult();
        auto type = cast<RankedTensorType>(fresh.getType());
        Shape shape = getShape(type);
        shape[1] = cacheDim;
        Value cache =
            addArg(getTensorType(shape, type.getElementType()), name, "cache");
        Value written = builder.create<CacheWriteOp>(
            heads.getLoc(), cache.getType(), cache, fresh);
        Value again =
            builder
                .create<SplitHeadsOp>(
                    heads.getLoc(), ValueRange{written},
                    ArrayRef<NamedAttribute>{builder.getNamedAttr(
                        "heads",
                        builder.getI64IntegerAttr(headsType.getShape()[1]))})
                .getResult();
        a.op->setOperand(operand, again);
        continue;
      }
      Value fresh = split.getInput();
      auto type = cast<RankedTensorType>(fresh.getType());
      Shape shape = getShape(type);
      shape[1] = cacheDim;
      Value cache =
          addArg(getTensorType(shape, type.getElementType()), name, "cache");
      builder.setInsertionPoint(split);
      Value written = builder.create<CacheWriteOp>(
          fresh.getLoc(), cache.getType(), cache, fresh);
      split->setOperand(0, written);
      SmallVector<Type> types;
      (void)SplitHeadsOp::inferReturnTypes(
          context, split.getLoc(),
          SplitHeadsOp::Adaptor(split->getOperands(),
                                split->getAttrDictionary()),
          types);
      split.getResult().setType(cast<RankedTensorType>(types[0]));
    }
    // The keys are every cached position: padding over all their ids, and
    // causality aligned to the last rows (the new positions).
    AttentionOp attention = a.op;
    attention.getMaskMutable().clear();
    attention.setCausal(true);
    if (a.padding) {
      builder.setInsertionPoint(attention);
      auto mask = cast<PaddingMaskOp>(builder.clone(*a.padding));
      mask->setOperand(0, cacheIds);
      SmallVector<Type> types;
      (void)PaddingMaskOp::inferReturnTypes(
          context, mask.getLoc(),
          PaddingMaskOp::Adaptor(mask->getOperands(),
                                 mask->getAttrDictionary()),
          types);
      mask.getResult().setType(cast<RankedTensorType>(types[0]));
      attention.getMaskMutable().assign(mask.getResult());
    }
    // Parts from positions, with keys over the whole cache (a part shared
    // by several attentions computed once).
    for (Value part : a.positionParts) {
      builder.setInsertionPoint(attention);
      Value rebuilt = rebuildPositionPart(builder, {part, maskAxes(part)},
                                          positions, cacheDim, rebuiltParts);
      Value keep = attention.getMask();
      attention.getMaskMutable().assign(
          keep ? builder.create<AndOp>(part.getLoc(), keep, rebuilt).getResult()
               : rebuilt);
    }
  }
  // Positions start at the cache offset: aranges over the new positions
  // (not the constant ones, nor the rebuilt masks' keys over the cache),
  // and ropes without a table (a table's rows are the new positions').
  step.walk([&](Operation *op) {
    auto arange = dyn_cast<ArangeOp>(op);
    auto rope = dyn_cast<RopeOp>(op);
    if (isa<PositionalEncodingOp>(op) || (rope && !rope.getAngles()) ||
        (arange &&
         getShape(cast<RankedTensorType>(arange.getType()))[0] == positions))
      op->setAttr("tx.position_offset", builder.getStringAttr(kCacheDim));
  });
  eraseDeadOps(step.front());
  step.setType(
      builder.getFunctionType(body.getArgumentTypes(), step.getResultTypes()));
  return step;
}

/// Adds the dim `cache` (bounded like `like`, and raised by the same config
/// item: tx.dim_configs) to the module, or fails when the spec already has
/// one.
FailureOr<Dim> addCacheDim(ModuleOp module, const Dim &like) {
  MLIRContext *context = module.getContext();
  Dim cacheDim = Dim::symbolic(StringAttr::get(context, kCacheDim), like.bound);
  SmallVector<NamedAttribute> dims;
  if (auto existing = module->getAttrOfType<DictionaryAttr>("tx.dims")) {
    if (existing.get(kCacheDim))
      return failure();
    dims.assign(existing.begin(), existing.end());
  }
  dims.push_back(NamedAttribute(
      StringAttr::get(context, kCacheDim),
      IntegerAttr::get(IntegerType::get(context, 64), cacheDim.bound)));
  module->setAttr("tx.dims", DictionaryAttr::get(context, dims));
  if (auto configs = module->getAttrOfType<DictionaryAttr>("tx.dim_configs"))
    if (auto key = like.symbol ? configs.getAs<StringAttr>(like.symbol)
                               : StringAttr()) {
      SmallVector<NamedAttribute> entries(configs.begin(), configs.end());
      entries.push_back(
          NamedAttribute(StringAttr::get(context, kCacheDim), key));
      module->setAttr("tx.dim_configs", DictionaryAttr::get(context, entries));
    }
  return cacheDim;
}

struct DecodeStepPass : mlir::tx::impl::DecodeStepPassBase<DecodeStepPass> {
  using DecodeStepPassBase::DecodeStepPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kind = module->getAttrOfType<StringAttr>(kKindAttr);
    if (kind && kind.getValue() == modelKindName(ModelKind::LanguageModel))
      return deriveLmStep(module);
    func::FuncOp decode;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>("tx.entry");
      if (kind && kind.getValue() == "decode_step")
        return; // already derived
      // The seq2seq model's decode entry; by name in IR without roles.
      auto role = func->getAttrOfType<StringAttr>(kRoleAttr);
      if (role ? role.getValue() == "decode"
               : !module->hasAttr(kKindAttr) && kind &&
                     kind.getValue() == "decode" &&
                     func.getSymName() == "decode")
        decode = func;
    }
    if (!decode)
      return;
    std::string why;
    FailureOr<SmallVector<Attention>> attentions = analyze(decode, why);
    if (failed(attentions)) {
      // The written-out attention is the reason; the first op the analysis
      // stopped at is one of its ops (the mask's `!`, the soft cap's tanh),
      // and naming it ("a mask ('tx.and') feeds 'tx.not'") blamed the mask.
      if (std::string unfused = unfusedAttentionReason(decode);
          !unfused.empty())
        why = unfused;
      return declineDecode(module, why);
    }
    // The cache dim is bounded like the self-attention's key length.
    Dim cacheDim;
    bool hasCross = false;
    for (Attention a : *attentions) {
      hasCross |= a.cross;
      if (!a.cross)
        cacheDim = getShape(cast<RankedTensorType>(a.key.getType()))[1];
    }
    if (!cacheDim.isSymbolic())
      return declineDecode(module, "the target length is not a symbolic dim");
    FailureOr<Dim> added = addCacheDim(module, cacheDim);
    if (failed(added))
      return declineDecode(module, "the spec already has a dim named '" +
                                       kCacheDim.str() + "'");
    cacheDim = *added;
    func::FuncOp step = buildStep(module, decode, cacheDim);
    if (hasCross)
      buildInit(module, decode, *attentions, step);
    // Said when derived too, not only when declined.
    if (verbose)
      llvm::errs() << "tx-decode-step: derived "
                   << (hasCross ? "decode_init and " : "")
                   << "decode_step from @decode (caches for "
                   << llvm::count_if(
                          *attentions,
                          [](const Attention &a) { return !a.cross; })
                   << " of its " << attentions->size() << " attention"
                   << (attentions->size() == 1 ? "" : "s") << ")\n";
  }

  /// Why no decode_step / lm_step was derived, kept on the module
  /// (tx.no_kv_cache) for the metadata: translate and generate fell back to
  /// re-running the prefix without a word (a ported notebook's query-side
  /// mask), and only --tx-fusion-stats said why.
  static void recordDecline(ModuleOp module, const std::string &why) {
    module->setAttr(kNoKvCacheAttr, StringAttr::get(module.getContext(), why));
  }

  void declineDecode(ModuleOp module, const std::string &why) {
    if (verbose)
      llvm::errs() << "tx-decode-step: no incremental decoding for @decode: "
                   << why << "\n";
    recordDecline(module, why);
  }

  /// lm_step from the language model's `logits` entry.
  void deriveLmStep(ModuleOp module) {
    func::FuncOp logits;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto role = func->getAttrOfType<StringAttr>(kRoleAttr);
      if (role && role.getValue() == "lm_step")
        return; // already derived
      if (role && role.getValue() == "logits")
        logits = func;
    }
    if (!logits)
      return;
    auto decline = [&](const std::string &why) {
      if (verbose)
        llvm::errs() << "tx-decode-step: no incremental decoding (lm_step) "
                        "for @"
                     << logits.getSymName() << ": " << why << "\n";
      recordDecline(module, why);
    };
    int tokensIndex = -1;
    for (unsigned i = 0; i < logits.getNumArguments(); ++i)
      if (auto role = logits.getArgAttrOfType<StringAttr>(i, kRoleAttr);
          role && role.getValue() == "tokens")
        tokensIndex = int(i);
    if (tokensIndex < 0 || logits.getNumArguments() != 1)
      return decline("it does not take only a @tokens input");
    Value tokens = logits.getArgument(tokensIndex);
    std::string why;
    if (failed(analyzeLm(logits, tokens, why))) {
      // The written-out attention is the reason; the first op the analysis
      // stopped at is one of its ops (the mask's `!`, the soft cap's tanh),
      // and naming it ("a mask ('tx.and') feeds 'tx.not'") blamed the mask.
      if (std::string unfused = unfusedAttentionReason(logits);
          !unfused.empty())
        why = unfused;
      return decline(why);
    }
    Dim length = getShape(cast<RankedTensorType>(tokens.getType()))[1];
    FailureOr<Dim> cacheDim = addCacheDim(module, length);
    if (failed(cacheDim))
      return decline("the spec already has a dim named '" + kCacheDim.str() +
                     "'");
    func::FuncOp step =
        buildLmStep(module, logits, unsigned(tokensIndex), *cacheDim);
    // Said when derived too, not only when declined.
    if (verbose) {
      unsigned caches = 0;
      for (unsigned i = 0; i < step.getNumArguments(); ++i)
        if (auto role = step.getArgAttrOfType<StringAttr>(i, kRoleAttr);
            role && role.getValue() == "cache")
          ++caches;
      llvm::errs() << "tx-decode-step: derived lm_step from @"
                   << logits.getSymName() << " (caches for " << caches / 2
                   << " self-attention" << (caches == 2 ? "" : "s") << ")\n";
    }
  }
};

} // namespace
