//===- FuseAttention.cpp - fuse scaled dot-product attention --------------===//
//
// tx-fuse-attention: scaled dot-product attention written out from primitives
// the way the seeds write it,
//
//   scores = matmul(Q, transpose(K, -2, -1)) / sqrt(d_k)
//   scores = masked_fill(scores, mask == 0, -1e9)
//   out    = matmul(dropout(softmax(scores, axis = -1)), V)
//
// becomes one tx.attention, which libtxrt runs without materializing the
// B·h·T·S scores. The match starts at each tx.softmax and walks back through
// the score chain (scaling and masking, in either order) to the Q·Kᵀ matmul,
// then forward through an optional dropout to the matmul with V.
//
// The fused op computes the same function as the written program on every
// input: the scale is the product of the written factors, masked scores keep
// the written fill value (`fill`, so a row whose keys are all masked still
// gives the mean of V), and the mask is the negation of the written fill
// mask, whatever it is made of. Two parts of it become fast paths: a causal
// mask factor becomes the `causal` attribute, and a padding mask written as
// `reshape(ids != pad)` becomes a tx.padding_mask. Keys and values with
// fewer heads than the queries (multi-query attention through the matmul's
// broadcasting, grouped-query attention written with rank-5 reshapes) fuse
// without copies. What the fused op cannot compute is declined with a reason
// (the `stats` option prints it).
//
// First, rotary embeddings written out as Hugging Face writes them,
// `x * cos(emb) + rotate_half(x) * sin(emb)` with `emb = concat(F, F)` over
// the last axis and `rotate_half(x) = concat(-x[..., h:], x[..., :h])`,
// become one tx.rope with the angle table F (counted as `tx-fuse-rope`):
// the same rotation, one pass over x, and on `split_heads(z)` applied to z
// so the fused attention reads Q and K in place. A rotation of a head's
// first features only, `concat(rope(x[..., :r]), x[..., r:])` (GPT-NeoX's
// rotary_pct, Phi's partial rotary), becomes tx.rope x {rotary_dims = r}
// the same way.
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"

#include "txc/Transforms/FusedLocation.h"
#include "txc/Transforms/Passes.h"
#include "txc/Transforms/RandomKeys.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace mlir::tx {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

Shape shapeOf(Value value) {
  return getShape(cast<RankedTensorType>(value.getType()));
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// One attention written out, ready to become a tx.attention.
struct AttentionMatch {
  /// [B, h, Tq, d], [B, hkv, Tk, d], [B, hkv, Tk, dv]: the split_heads
  /// results the fused op reads (behind the rank-5 reshapes of the grouped
  /// form).
  Value query, key, value;
  double scale = 1.0;
  /// The written fill mask (true where a score is masked) and the value a
  /// masked score has when the softmax sees it; null without masked_fill.
  Value fillMask;
  double fill = 0.0;
  std::optional<double> dropout;
  /// matmul(probs, V), and the value the fused op replaces: its result, or
  /// in the grouped form the reshape of it back to [B, h, Tq, dv].
  MatmulOp output;
  Value result;
  /// The ops the fused op replaces, from the result back to Q·Kᵀ.
  SmallVector<Operation *> replaced;
};

/// The f32 value of a splat tx.constant that does not grow `other`'s shape
/// in `op` (its result has the type of `other`).
std::optional<double> scalarFactor(Operation *op, Value constant,
                                   Value other) {
  auto def = constant.getDefiningOp<ConstantOp>();
  if (!def || op->getResult(0).getType() != other.getType())
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(def.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// The scalar constant `c` that `x / c` (as 1 / c), `x * c`, `c * x` or
/// `scale(x, c)` multiplies by, with `x` in `next`; nullopt for another op,
/// or one of these whose other operand is not a scalar constant.
std::optional<double> scaleFactor(Operation *def, Value &next) {
  if (auto div = dyn_cast<DivOp>(def)) {
    next = div.getLhs();
    if (std::optional<double> c = scalarFactor(div, div.getRhs(), next))
      return 1.0 / *c;
    return std::nullopt;
  }
  if (auto mul = dyn_cast<MulOp>(def)) {
    next = mul.getLhs();
    if (std::optional<double> c = scalarFactor(mul, mul.getRhs(), next))
      return c;
    if (!mul.getLhs().getDefiningOp<ConstantOp>())
      return std::nullopt;
    next = mul.getRhs();
    return scalarFactor(mul, mul.getLhs(), next);
  }
  if (auto byConstant = dyn_cast<ScaleOp>(def)) {
    next = byConstant.getInput();
    return byConstant.getFactor().convertToDouble();
  }
  return std::nullopt;
}

/// `[0, 1, ..., n-1, n-2]` for a rank-n transpose.
bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  int64_t rank = permutation.size();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (permutation[i] != i)
      return false;
  return rank >= 2 && permutation[rank - 2] == rank - 1 &&
         permutation[rank - 1] == rank - 2;
}

/// `tx.matmul at f:1:2, tx.relu at f:3:4`: who uses `value`.
std::string describeUsers(Value value) {
  std::string text;
  for (Operation *user : value.getUsers())
    text += (text.empty() ? "" : ", ") +
            user->getName().getStringRef().str() + " at " +
            FusionStats::formatLocation(user->getLoc());
  return text;
}

class AttentionMatcher {
public:
  /// Whether `softmax` reads scores made by a matmul (through scaling and
  /// masking): only those are attention candidates worth a reason.
  static bool isCandidate(SoftmaxOp softmax) {
    // Through element-wise ops of the scores, each operand in turn: a soft
    // cap (`c * tanh(s / c)`, Gemma 2), a clamp, and any other element-wise
    // op (`s - bias`, `where(m, s, -1e9)`, `exp(s)`, `-s`, `max(s, 0)`) is
    // a candidate the match declines with its reason (those were no
    // candidates, and nothing said why the attention was not fused).
    llvm::SmallVector<std::pair<Value, int>> work{{softmax.getInput(), 0}};
    while (!work.empty()) {
      auto [v, depth] = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || depth >= 8)
        continue;
      if (isa<MatmulOp>(def))
        return true;
      if (!isa<DivOp, MulOp, ScaleOp, MaskedFillOp, AddOp, SubOp, NegOp, TanhOp,
               ClampOp, ExpOp, LogOp, AbsOp, SigmoidOp, MinimumOp, MaximumOp,
               WhereOp, PowOp>(def))
        continue;
      for (Value operand : def->getOperands())
        if (isa<FloatType>(getElementTypeOrSelf(operand.getType())))
          work.push_back({operand, depth + 1});
    }
    return false;
  }

  /// Matches the attention around `softmax`; on failure `why` says what
  /// stops it.
  FailureOr<AttentionMatch> match(SoftmaxOp softmax, std::string &why) {
    AttentionMatch m;
    auto scoresType = cast<RankedTensorType>(softmax.getType());
    int64_t rank = scoresType.getRank();
    if (rank != 4 && rank != 5)
      return decline(why, "scores of rank " + std::to_string(rank) +
                              ", not [B, h, Tq, Tk] (or [B, hkv, g, Tq, Tk] "
                              "for grouped queries)");
    int64_t axis = softmax.getAxis();
    if (axis != -1 && axis != rank - 1)
      return decline(why, "softmax over axis " + std::to_string(axis) +
                              ", not the key axis (-1)");
    Value queryAsWritten, keyAsWritten;
    if (failed(matchProbabilities(softmax, m, why)) ||
        failed(matchScores(softmax, m, queryAsWritten, keyAsWritten, why)))
      return failure();
    if (failed(rank == 4 ? matchHeads(m, queryAsWritten, keyAsWritten, why)
                         : matchGroupedHeads(m, queryAsWritten, keyAsWritten,
                                             why)))
      return failure();
    if (failed(checkMaskAxes(m, rank, why)))
      return failure();
    return m;
  }

private:
  static LogicalResult decline(std::string &why, const Twine &reason) {
    why = reason.str();
    return failure();
  }

  /// softmax -> (dropout) -> matmul(probs, V).
  LogicalResult matchProbabilities(SoftmaxOp softmax, AttentionMatch &m,
                                   std::string &why) {
    Value probs = softmax.getResult();
    if (!probs.hasOneUse())
      return decline(why, "the probabilities have other users (" +
                              describeUsers(probs) + ")");
    Operation *user = *probs.getUsers().begin();
    if (auto dropout = dyn_cast<DropoutOp>(user)) {
      m.dropout = dropout.getRate().convertToDouble();
      probs = dropout.getResult();
      if (!probs.hasOneUse())
        return decline(why, "the probabilities after dropout have other "
                            "users (" +
                                describeUsers(probs) + ")");
      user = *probs.getUsers().begin();
      m.replaced.push_back(dropout);
    }
    auto output = dyn_cast<MatmulOp>(user);
    if (!output || output.getLhs() != probs || output.getTransposeLhs() ||
        output.getTransposeRhs())
      return decline(why, "the probabilities are not multiplied by the "
                          "values (matmul(probs, V))");
    m.output = output;
    m.value = output.getRhs();
    m.replaced.insert(m.replaced.begin(), output);
    m.replaced.push_back(softmax);
    return success();
  }

  /// Back from the softmax input through scaling and masking to Q·Kᵀ.
  LogicalResult matchScores(SoftmaxOp softmax, AttentionMatch &m,
                            Value &query, Value &key, std::string &why) {
    Value scores = softmax.getInput();
    double scale = 1.0;
    MaskedFillOp fill;
    double scaleAfterFill = 1.0;
    while (true) {
      if (!scores.hasOneUse())
        return decline(why, "the scores have other users (" +
                                describeUsers(scores) + ")");
      Operation *def = scores.getDefiningOp();
      if (!def)
        return decline(why, "the scores are not computed from Q and K");
      if (auto product = dyn_cast<MatmulOp>(def)) {
        if (failed(matchQueryKey(product, query, key, why)))
          return failure();
        m.replaced.push_back(product);
        break;
      }
      std::optional<double> factor;
      Value next;
      if (isa<DivOp, MulOp, ScaleOp>(def)) {
        factor = scaleFactor(def, next);
      } else if (auto masked = dyn_cast<MaskedFillOp>(def)) {
        if (fill)
          return decline(why, "the scores are masked twice");
        fill = masked;
        scaleAfterFill = scale;
        m.replaced.push_back(masked);
        scores = masked.getInput();
        continue;
      } else if (isa<AddOp>(def)) {
        return decline(why, "an additive mask or bias (an arbitrary f32 "
                            "tensor: a position bias such as T5's or ALiBi's "
                            "stays unfused; tx.attention takes a keep mask "
                            "only)");
      } else {
        return decline(
            why, "the scores pass through " + def->getName().getStringRef() +
                     " at " + FusionStats::formatLocation(def->getLoc()) +
                     (isa<TanhOp>(def)
                          ? " (a soft cap, c * tanh(s / c)): the fused kernel "
                            "computes softmax(Q·Kᵀ · scale) over the kept "
                            "keys, with no cap"
                      : isa<WhereOp>(def)
                          ? " (a mask written as where(keep, s, fill) fuses "
                            "written as masked_fill(s, !keep, fill))"
                      : isa<SubOp>(def)
                          ? " (an additive mask or bias: tx.attention takes "
                            "a keep mask)"
                          : ""));
      }
      if (!factor)
        return decline(why, def->getName().getStringRef() +
                                " at " +
                                FusionStats::formatLocation(def->getLoc()) +
                                " does not scale by an f32 scalar constant");
      scale *= *factor;
      m.replaced.push_back(def);
      scores = next;
    }

    // Whatever the written factors multiply to is the op's scale (in f32,
    // as the written ops compute it).
    if (!std::isfinite(float(scale)) || float(scale) == 0.0f)
      return decline(why, "the scale " + formatNumber(scale) +
                              " is zero or not finite in f32");
    m.scale = scale;
    if (fill) {
      // A masked score, as the softmax sees it: the fill value times the
      // factors applied after masked_fill.
      double filled = fill.getValue().convertToDouble() * scaleAfterFill;
      if (!std::isfinite(float(filled)))
        return decline(why, "the masked score " + formatNumber(float(filled)) +
                                " is not finite in f32 (as written, a row "
                                "whose keys are all masked is NaN)");
      m.fillMask = fill.getMask();
      m.fill = filled;
    }
    return success();
  }

  /// matmul(Q, Kᵀ) with Kᵀ a transpose of the last two dims or transpose_rhs.
  LogicalResult matchQueryKey(MatmulOp product, Value &query, Value &key,
                              std::string &why) {
    if (product.getTransposeLhs())
      return decline(why, "the query is transposed in Q·Kᵀ");
    query = product.getLhs();
    if (product.getTransposeRhs()) {
      key = product.getRhs();
      return success();
    }
    auto transpose = product.getRhs().getDefiningOp<TransposeOp>();
    if (!transpose || !swapsLastTwo(transpose.getPermutation()))
      return decline(why, "the scores are not matmul(Q, transpose(K, -2, -1))");
    key = transpose.getInput();
    return success();
  }

  /// Rank 4: Q, K, V are [B, h, T, d] tensors and the output goes to
  /// merge_heads. K and V may have one head that the matmuls broadcast over
  /// Q's (multi-query). The kernel reads [B, T, h*d]: a split_heads's input
  /// in place, and anything else (a per-head norm of split_heads, QK-norm)
  /// through a copy that tx-attention-layout makes.
  LogicalResult matchHeads(AttentionMatch &m, Value query, Value key,
                           std::string &why) {
    for (Value operand : {query, key, m.value})
      if (cast<RankedTensorType>(operand.getType()).getRank() != 4)
        return decline(why, "Q, K and V are not all [B, h, T, d] (rank 4)");
    m.query = query;
    m.key = key;
    m.result = m.output.getResult();
    return checkHeads(m, why);
  }

  /// Rank 5, grouped-query attention written without copies:
  ///   Q5 = reshape(Q [B, h, Tq, d], B, hkv, g, Tq, d)   (h = hkv * g)
  ///   K5 = reshape(K [B, hkv, Tk, d], B, hkv, 1, Tk, d)  (V5 likewise)
  ///   O  = reshape(matmul(softmax(...Q5·K5ᵀ...), V5), B, h, Tq, dv)
  /// with Q, K, V any heads (split_heads, or a per-head norm of one) and O
  /// going to merge_heads.
  LogicalResult matchGroupedHeads(AttentionMatch &m, Value query5, Value key5,
                                  std::string &why) {
    // The heads may be made any way (a per-head norm: QK-norm), as in the
    // rank-4 form.
    auto unGroup = [](Value grouped) -> Value {
      auto reshape = grouped.getDefiningOp<ReshapeOp>();
      if (!reshape)
        return nullptr;
      Shape in = shapeOf(reshape.getInput()), out = shapeOf(grouped);
      // [B, h, T, d] -> [B, a, g, T, d] with a * g = h (static).
      if (in.size() != 4 || out.size() != 5 || in[0] != out[0] ||
          in[2] != out[3] || in[3] != out[4] || in[1].isSymbolic() ||
          out[1].isSymbolic() || out[2].isSymbolic() ||
          out[1].size * out[2].size != in[1].size)
        return nullptr;
      return reshape.getInput();
    };
    // A query scaled after its grouping reshape (Gemma's
    // query_pre_attn_scalar, `matmul(q5 / c, transpose(k5))`): the factor
    // joins the op's scale, as a scale of the scores does (before the
    // reshape it is heads [B, h, T, d] as any).
    double queryFactor = 1.0;
    SmallVector<Operation *> queryScales;
    while (Operation *def = query5.getDefiningOp()) {
      if (!query5.hasOneUse())
        break;
      Value next;
      std::optional<double> factor = scaleFactor(def, next);
      if (!factor)
        break;
      queryFactor *= *factor;
      queryScales.push_back(def);
      query5 = next;
    }
    Value query = unGroup(query5), key = unGroup(key5),
          value = unGroup(m.value);
    if (!query || !key || !value)
      return decline(why, "rank-5 (grouped) Q, K and V must be reshapes of "
                          "heads [B, h, T, d] to [B, hkv, g, T, d]");
    Shape q5 = shapeOf(query5), k5 = shapeOf(key5), v5 = shapeOf(m.value);
    // Key/value head (a', g') of query head (a, g) must be
    // (a * g + g) / (h / hkv): a' = a or 1, g' = 1, or both equal.
    auto groupsAlike = [&](const Shape &kv) {
      bool sameHeads = kv[1] == q5[1] && kv[2] == q5[2];
      bool grouped = (kv[1] == q5[1] || kv[1] == Dim::fixed(1)) &&
                     kv[2] == Dim::fixed(1);
      return sameHeads || grouped;
    };
    if (!groupsAlike(k5) || !groupsAlike(v5) || k5[1] != v5[1] ||
        k5[2] != v5[2])
      return decline(why, "the keys and values are not grouped by the "
                          "query's leading head axis (expected [B, hkv, 1, "
                          "Tk, d] for queries [B, hkv, g, Tq, d])");
    if (!m.output->hasOneUse())
      return decline(why, "the grouped attention output must go to one "
                          "reshape back to [B, h, Tq, d]");
    auto back = dyn_cast<ReshapeOp>(*m.output->getUsers().begin());
    Shape qShape = shapeOf(query);
    if (!back || shapeOf(back.getResult()) !=
                     Shape{qShape[0], qShape[1], qShape[2], v5[4]})
      return decline(why, "the grouped attention output must go to one "
                          "reshape back to [B, h, Tq, d]");
    if (!queryScales.empty()) {
      double scale = m.scale * queryFactor;
      if (!std::isfinite(float(scale)) || float(scale) == 0.0f)
        return decline(why, "the scale " + formatNumber(scale) +
                                " is zero or not finite in f32");
      m.scale = scale;
      // After the product that reads them: erased once it is.
      m.replaced.append(queryScales.begin(), queryScales.end());
    }
    m.query = query;
    m.key = key;
    m.value = value;
    m.result = back.getResult();
    m.replaced.insert(m.replaced.begin(), back);
    return checkHeads(m, why);
  }

  /// The fused op's operand rules: equal batch and head sizes, key/value
  /// heads that divide the query's, the result going to merge_heads only.
  LogicalResult checkHeads(AttentionMatch &m, std::string &why) {
    Shape q = shapeOf(m.query), k = shapeOf(m.key), v = shapeOf(m.value);
    if (q.back() != k.back() || v.back() != q.back())
      return decline(why, "Q, K and V have different head sizes");
    if (k[0] != q[0] || v[0] != q[0])
      return decline(why, "Q, K and V have different batch sizes");
    if (k[1] != v[1])
      return decline(why, "K and V have different head counts");
    if (k[1] != q[1] && (k[1].isSymbolic() || q[1].isSymbolic() ||
                         q[1].size % k[1].size != 0))
      return decline(why, "the keys have " + dimText(k[1]) +
                              " heads, which do not divide the queries' " +
                              dimText(q[1]));
    if (shapeOf(m.result) != Shape{q[0], q[1], q[2], v[3]})
      return decline(why, "the attention output has more heads than the "
                          "queries");
    for (Operation *user : m.result.getUsers())
      if (!isa<MergeHeadsOp>(user))
        return decline(why, "the attention output must go to merge_heads "
                            "only (the runtime kernel writes [B, T, h*d]); "
                            "it also goes to " +
                                user->getName().getStringRef());
    return success();
  }

  /// The fused op's mask broadcasts over the query heads: in the grouped
  /// form the mask may not vary along the two head axes.
  LogicalResult checkMaskAxes(AttentionMatch &m, int64_t rank,
                              std::string &why) {
    if (!m.fillMask || rank != 5)
      return success();
    Shape mask = shapeOf(m.fillMask);
    for (int64_t axis : {1, 2}) {
      int64_t at = axis - (5 - int64_t(mask.size()));
      if (at >= 0 && mask[at] != Dim::fixed(1))
        return decline(why, "the mask " + formatShape(mask) +
                                " varies along the grouped head axes");
    }
    return success();
  }

  static std::string dimText(const Dim &dim) {
    return dim.isSymbolic() ? dim.symbol.getValue().str()
                            : std::to_string(dim.size);
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct FuseAttentionPass
    : mlir::tx::impl::FuseAttentionPassBase<FuseAttentionPass> {
  using FuseAttentionPassBase::FuseAttentionPassBase;

  //===--------------------------------------------------------------------===//
  // Rotary embeddings written out
  //===--------------------------------------------------------------------===//

  /// `x[..., lo:lo + n]` over the last axis of x (every other axis whole,
  /// unit strides), as `slice`.
  static bool isLastAxisSlice(Value v, Value x, int64_t lo, int64_t n) {
    auto slice = v.getDefiningOp<SliceOp>();
    if (!slice || slice.getInput() != x)
      return false;
    auto in = cast<RankedTensorType>(x.getType());
    auto out = cast<RankedTensorType>(slice.getType());
    ArrayRef<int64_t> starts = slice.getStarts();
    if (auto strides = slice.getStrides())
      if (llvm::any_of(*strides, [](int64_t s) { return s != 1; }))
        return false;
    int64_t rank = in.getRank();
    for (int64_t a = 0; a + 1 < rank; ++a)
      if (starts[a] != 0 || out.getShape()[a] != in.getShape()[a] ||
          getShape(out)[a] != getShape(in)[a])
        return false;
    return starts[rank - 1] == lo && out.getShape()[rank - 1] == n;
  }

  static bool isLastAxis(int64_t axis, int64_t rank) {
    return axis == -1 || axis == rank - 1;
  }

  /// `concat(-x[..., h:], x[..., :h])` (Llama's rotate_half) of x.
  static bool isRotateHalf(Value v, Value x) {
    auto concat = v.getDefiningOp<ConcatOp>();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t d = type.getShape().back();
    if (!concat || concat.getInputs().size() != 2 ||
        !isLastAxis(concat.getAxis(), type.getRank()) ||
        ShapedType::isDynamic(d) || d % 2 != 0)
      return false;
    auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
    return neg && isLastAxisSlice(neg.getInput(), x, d / 2, d / 2) &&
           isLastAxisSlice(concat.getInputs()[1], x, 0, d / 2);
  }

  /// F of `concat(F, F)` over the last axis, or null.
  static Value doubledTable(Value emb) {
    auto concat = emb.getDefiningOp<ConcatOp>();
    if (!concat || concat.getInputs().size() != 2 ||
        concat.getInputs()[0] != concat.getInputs()[1] ||
        !isLastAxis(concat.getAxis(), concat.getType().getRank()))
      return nullptr;
    return concat.getInputs()[0];
  }

  /// `x * cos(emb) + rotate_half(x) * sin(emb)` (products and the sum in
  /// either order) -> tx.rope x angles F.
  void fuseWrittenRope(AddOp add, FusionStats &report) {
    for (int side = 0; side < 2; ++side) {
      auto cosProduct = (side == 0 ? add.getLhs() : add.getRhs())
                            .getDefiningOp<MulOp>();
      auto sinProduct = (side == 0 ? add.getRhs() : add.getLhs())
                            .getDefiningOp<MulOp>();
      if (!cosProduct || !sinProduct)
        continue;
      for (int c = 0; c < 2; ++c) {
        Value x = c == 0 ? cosProduct.getLhs() : cosProduct.getRhs();
        auto cos = (c == 0 ? cosProduct.getRhs() : cosProduct.getLhs())
                       .getDefiningOp<CosOp>();
        if (!cos)
          continue;
        for (int s = 0; s < 2; ++s) {
          Value rotated = s == 0 ? sinProduct.getLhs() : sinProduct.getRhs();
          auto sin = (s == 0 ? sinProduct.getRhs() : sinProduct.getLhs())
                         .getDefiningOp<SinOp>();
          if (!sin || sin.getInput() != cos.getInput() ||
              !isRotateHalf(rotated, x))
            continue;
          Value table = doubledTable(cos.getInput());
          auto xType = cast<RankedTensorType>(x.getType());
          if (!table || add.getType() != xType || xType.getRank() < 2)
            continue;
          // The table is [T, d/2] for x [..., T, d]: one angle per position
          // and pair, the same for every batch row and head.
          Shape want = {getShape(xType)[xType.getRank() - 2],
                        Dim::fixed(xType.getShape().back() / 2)};
          if (getShape(cast<RankedTensorType>(table.getType())) != want) {
            report.declined(add.getLoc(), "rotary angles are not one [T, d/2] "
                                          "table for every row and head");
            return;
          }
          if (dependsOnParameter(table)) {
            report.declined(add.getLoc(), "rotary angles depend on a "
                                          "parameter (their gradient is not "
                                          "implemented in tx.rope)");
            return;
          }
          rewriteRope(add, x, table);
          report.fused();
          return;
        }
      }
    }
  }

  /// `concat(rope(x[..., :r]), x[..., r:])` over the last axis, the rope of
  /// one head (as the builtin makes it on a slice) -> tx.rope x
  /// {rotary_dims = r}.
  bool fusePartialRope(ConcatOp concat, FusionStats &report) {
    if (concat.getInputs().size() != 2)
      return false;
    auto rope = concat.getInputs()[0].getDefiningOp<RopeOp>();
    if (!rope || rope.getHeads() != 1 || rope.getRotaryDims() != 0 ||
        rope.getInverse() || !rope->hasOneUse() ||
        rope->hasAttr("tx.position_offset"))
      return false;
    auto first = rope.getInput().getDefiningOp<SliceOp>();
    if (!first)
      return false;
    Value x = first.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t d = type.getShape().back();
    int64_t r = cast<RankedTensorType>(rope.getType()).getShape().back();
    if (ShapedType::isDynamic(d) || r >= d || concat.getType() != type ||
        !isLastAxis(concat.getAxis(), type.getRank()) ||
        !isLastAxisSlice(rope.getInput(), x, 0, r) ||
        !isLastAxisSlice(concat.getInputs()[1], x, r, d - r))
      return false;
    SmallVector<NamedAttribute> attrs;
    OpBuilder builder(concat);
    attrs.push_back(builder.getNamedAttr("base", rope.getBaseAttr()));
    attrs.push_back(
        builder.getNamedAttr("rotary_dims", builder.getI64IntegerAttr(r)));
    rewriteRope(concat, x, rope.getAngles(), attrs);
    report.fused();
    return true;
  }

  /// The rope of `x` (by `table` when given) in `root`'s place, with
  /// `extra` attributes; on split_heads(z) it rotates z (heads = the
  /// split's) and splits the result.
  static void rewriteRope(Operation *root, Value x, Value table,
                          ArrayRef<NamedAttribute> extra = {}) {
    OpBuilder builder(root);
    Location loc = root->getLoc();
    auto attrs = [&](int64_t heads) {
      SmallVector<NamedAttribute> all = {
          builder.getNamedAttr("heads", builder.getI64IntegerAttr(heads))};
      all.append(extra.begin(), extra.end());
      return all;
    };
    SmallVector<Value> operands = {x};
    if (table)
      operands.push_back(table);
    Value result;
    auto split = x.getDefiningOp<SplitHeadsOp>();
    if (split && cast<RankedTensorType>(x.getType()).getRank() == 4) {
      int64_t heads = int64_t(split.getHeads());
      operands[0] = split.getInput();
      auto rope = builder.create<RopeOp>(
          loc, TypeRange{split.getInput().getType()}, operands, attrs(heads));
      result = builder.create<SplitHeadsOp>(
          loc, TypeRange{x.getType()}, ValueRange{rope.getResult()},
          ArrayRef<NamedAttribute>{builder.getNamedAttr(
              "heads", builder.getI64IntegerAttr(heads))});
    } else {
      result =
          builder
              .create<RopeOp>(loc, TypeRange{x.getType()}, operands, attrs(1))
              .getResult();
    }
    root->getResult(0).replaceAllUsesWith(result);
    // The written chain, now unused, goes (users before their operands).
    SmallVector<Operation *> work = {root};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!op->use_empty() || isa<ParamOp>(op) ||
          op->getNumRegions() != 0)
        continue;
      SmallVector<Operation *> operands;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          operands.push_back(def);
      op->erase();
      for (Operation *def : operands)
        if (llvm::is_contained(work, def) == false)
          work.push_back(def);
    }
  }

  void runOnOperation() override {
    // Random ops are keyed in program order as written: the fused op
    // takes its probabilities' dropout's key, wherever it lands.
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isUndifferentiatedTrainEntry(func))
        keyRandomOps(func);
    FusionStats ropeReport("tx-fuse-rope");
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds)
      fuseWrittenRope(add, ropeReport);
    // One at a time: a rewrite erases the chain it replaces, which may hold
    // other concats.
    for (bool changed = true; changed;) {
      changed = false;
      getOperation().walk([&](ConcatOp concat) {
        changed = fusePartialRope(concat, ropeReport);
        return changed ? WalkResult::interrupt() : WalkResult::advance();
      });
    }
    FusionStats report("tx-fuse-attention");
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp softmax) {
      if (AttentionMatcher::isCandidate(softmax))
        softmaxes.push_back(softmax);
    });
    for (SoftmaxOp softmax : softmaxes) {
      std::string why;
      FailureOr<AttentionMatch> match = AttentionMatcher().match(softmax, why);
      if (failed(match)) {
        report.declined(softmax.getLoc(), why);
        continue;
      }
      rewrite(*match);
      report.fused();
    }
    // The `attention` builtin's masks get what a fused one's get: a causal
    // mask written out from arange becomes the causal flag and
    // `reshape(ids != pad)` a tx.padding_mask (the same keys either way),
    // so that a language model written with the builtin and such masks
    // derives lm_step as the written-out form does.
    getOperation().walk(
        [&](AttentionOp attention) { simplifyMask(attention); });
    eraseDeadLeftovers();
    if (stats) {
      if (!ropeReport.empty())
        ropeReport.print(llvm::errs());
      report.print(llvm::errs());
    }
  }

  //===--------------------------------------------------------------------===//
  // The keep mask: the negation of the written fill mask
  //===--------------------------------------------------------------------===//

  /// The keep mask is a conjunction of factors: masks as written, and the
  /// written masks still to be negated.
  struct KeepFactor {
    Value mask;
    bool negate = false;
  };

  /// Appends the factors of `keep` (a conjunction: `a & b`; a negation,
  /// `!(j > i)` or `!(a | b)`, is the negated factors of what it negates,
  /// which the causal and padding forms are then read from: it stayed one
  /// opaque factor).
  static void keepFactors(Value keep, SmallVectorImpl<KeepFactor> &out) {
    if (auto both = keep.getDefiningOp<AndOp>()) {
      keepFactors(both.getLhs(), out);
      keepFactors(both.getRhs(), out);
      return;
    }
    if (auto negation = keep.getDefiningOp<NotOp>()) {
      negatedFactors(negation.getInput(), out);
      return;
    }
    out.push_back({keep, false});
  }

  /// Appends the factors of `!fill`: `!(a | b) = !a & !b`, `!!a = a`, and a
  /// negation of anything else.
  static void negatedFactors(Value fill, SmallVectorImpl<KeepFactor> &out) {
    if (auto either = fill.getDefiningOp<OrOp>()) {
      negatedFactors(either.getLhs(), out);
      negatedFactors(either.getRhs(), out);
      return;
    }
    if (auto negation = fill.getDefiningOp<NotOp>()) {
      keepFactors(negation.getInput(), out);
      return;
    }
    out.push_back({fill, true});
  }

  /// Builds right after the definitions of `operands` (so that one op serves
  /// every attention that shares the mask), or before `fallback` when they
  /// are not all in its block.
  static OpBuilder builderAfter(ArrayRef<Value> operands,
                                Operation *fallback) {
    Block *block = fallback->getBlock();
    Operation *last = nullptr;
    for (Value operand : operands) {
      Block *owner = operand.getParentBlock();
      if (owner != block)
        return OpBuilder(fallback);
      Operation *def = operand.getDefiningOp();
      if (def && (!last || last->isBeforeInBlock(def)))
        last = def;
    }
    if (!last)
      return OpBuilder(block, block->begin());
    return OpBuilder(block, std::next(last->getIterator()));
  }

  /// `reshape(cmp <predicate>(ids, pad))` from i32 `[B, S]` to
  /// `[B, 1, 1, S]`, or `cmp <predicate>(reshape(ids), pad)` (reshaped
  /// first: `ids[:, None, None, :] != pad`, which was no padding mask, and
  /// a language model so written got no lm_step), the pad constant on
  /// either side: a padding mask (ne) or its negation (eq).
  static std::optional<std::pair<Value, int64_t>>
  matchReshapedCompare(Value mask, CmpPredicate predicate) {
    auto reshape = mask.getDefiningOp<ReshapeOp>();
    auto cmp = reshape ? reshape.getInput().getDefiningOp<CmpOp>()
                       : mask.getDefiningOp<CmpOp>();
    if (!cmp || cmp.getPredicate() != predicate)
      return std::nullopt;
    auto splatInt = [](Value value) -> std::optional<int64_t> {
      auto constant = value.getDefiningOp<ConstantOp>();
      auto dense =
          constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue())
                   : DenseIntElementsAttr();
      if (!dense || !dense.isSplat() || dense.getNumElements() != 1)
        return std::nullopt;
      return dense.getSplatValue<APInt>().getSExtValue();
    };
    Value ids = cmp.getLhs();
    std::optional<int64_t> pad = splatInt(cmp.getRhs());
    if (!pad) {
      ids = cmp.getRhs();
      pad = splatInt(cmp.getLhs());
    }
    if (!reshape) { // compared after the reshape
      auto inner = ids.getDefiningOp<ReshapeOp>();
      if (!inner)
        return std::nullopt;
      ids = inner.getInput();
    }
    auto idsType = cast<RankedTensorType>(ids.getType());
    if (!pad || !idsType.getElementType().isInteger(32) ||
        idsType.getRank() != 2 ||
        (reshape && shapeOf(cmp.getResult()) != shapeOf(ids)))
      return std::nullopt;
    Shape idShape = shapeOf(ids), maskShape = shapeOf(mask);
    if (maskShape.size() != 4 || maskShape[0] != idShape[0] ||
        maskShape[1] != Dim::fixed(1) || maskShape[2] != Dim::fixed(1) ||
        maskShape[3] != idShape[1])
      return std::nullopt;
    return std::make_pair(ids, *pad);
  }

  /// A tx.padding_mask of `ids` (one per ids and pad).
  Value paddingMask(Value ids, int64_t pad, Operation *fallback) {
    Value &mask = paddingMasks[{ids, pad}];
    if (!mask)
      mask = builderAfter({ids}, fallback)
                 .create<PaddingMaskOp>(ids.getLoc(), ids, uint64_t(pad));
    return mask;
  }

  /// The keep mask `factor` stands for, as a value (the padding forms as
  /// tx.padding_mask).
  Value keepValue(const KeepFactor &factor, Operation *fallback) {
    Value mask = factor.mask;
    if (factor.negate) {
      if (auto padding = matchReshapedCompare(mask, CmpPredicate::eq))
        return paddingMask(padding->first, padding->second, fallback);
      Value &negated = negations[mask];
      if (!negated)
        negated = builderAfter({mask}, fallback)
                      .create<NotOp>(mask.getLoc(), mask);
      return negated;
    }
    if (auto padding = matchReshapedCompare(mask, CmpPredicate::ne))
      return paddingMask(padding->first, padding->second, fallback);
    return mask;
  }

  /// `lhs & rhs` (one per pair).
  Value conjunction(Value lhs, Value rhs, Operation *fallback) {
    Value &both = conjunctions[{lhs, rhs}];
    if (!both)
      both = builderAfter({lhs, rhs}, fallback)
                 .create<AndOp>(lhs.getLoc(), lhs, rhs);
    return both;
  }

  /// `arange(n)` (any start; in f32 or not) reshaped to `[n, 1]` (`column`: the
  /// query positions, `arange(T)[:, None]`) or to `[1, n]` (a row: the key
  /// positions): its dim `n` and start.
  static std::optional<std::pair<Dim, int64_t>> positions(Value value,
                                                          bool column) {
    // float() on either side of the reshape (`float(arange(T))[:, None]`,
    // as a window mask is written), where every position is exact in f32.
    bool converted = false;
    auto peelFloat = [&](Value v) -> Value {
      if (auto toFloat = v.getDefiningOp<ToFloatOp>()) {
        converted = true;
        return toFloat.getInput();
      }
      return v;
    };
    auto reshape = peelFloat(value).getDefiningOp<ReshapeOp>();
    auto arange = reshape
                      ? peelFloat(reshape.getInput()).getDefiningOp<ArangeOp>()
                      : ArangeOp();
    if (!arange)
      return std::nullopt;
    constexpr int64_t kExactInF32 = int64_t(1) << 24;
    if (converted && (arange.getStart() < 0 ||
                      int64_t(arange.getStart()) +
                              shapeOf(arange.getResult())[0].upperBound() >
                          kExactInF32))
      return std::nullopt;
    Dim n = shapeOf(arange.getResult())[0];
    Shape shape = shapeOf(reshape.getResult());
    Shape expected = column ? Shape{n, Dim::fixed(1)} : Shape{Dim::fixed(1), n};
    if (shape != expected)
      return std::nullopt;
    return std::make_pair(n, int64_t(arange.getStart()));
  }

  /// The `[Tq, Tk]` mask `mask` reshapes by adding leading axes of 1
  /// (`m[None, None]`), or `mask` itself.
  static Value beneathLeadingUnitAxes(Value mask) {
    auto reshape = mask.getDefiningOp<ReshapeOp>();
    if (!reshape)
      return mask;
    Shape in = shapeOf(reshape.getInput()), out = shapeOf(reshape);
    if (in.size() == 2 && out.size() >= 2 && out.end()[-2] == in[0] &&
        out.back() == in[1] &&
        llvm::all_of(ArrayRef<Dim>(out).drop_back(2),
                     [](Dim d) { return d == Dim::fixed(1); }))
      return reshape.getInput();
    return mask;
  }

  /// Whether `mask` is a comparison of query positions with key positions
  /// written out from arange, `[T, T]` (or reshaped to it with leading
  /// single axes), that keeps (`keep`) or fills (`!keep`) exactly what the
  /// causal flag does for a square score block: `arange(T)[:, None] >=
  /// arange(T)[None, :]` keeps key j <= query i; `arange(T)[None, :] >
  /// arange(T)[:, None]` fills key j > query i (torch.triu(..., 1)).
  static bool isWrittenCausal(Value mask, bool keep, Dim n) {
    auto cmp = beneathLeadingUnitAxes(mask).getDefiningOp<CmpOp>();
    if (!cmp)
      return false;
    // As `query OP key`.
    CmpPredicate predicate = cmp.getPredicate();
    Value query = cmp.getLhs(), key = cmp.getRhs();
    if (!positions(query, /*column=*/true)) {
      std::swap(query, key);
      switch (predicate) {
      case CmpPredicate::lt: predicate = CmpPredicate::gt; break;
      case CmpPredicate::le: predicate = CmpPredicate::ge; break;
      case CmpPredicate::gt: predicate = CmpPredicate::lt; break;
      case CmpPredicate::ge: predicate = CmpPredicate::le; break;
      default: break;
      }
    }
    auto q = positions(query, /*column=*/true);
    auto k = positions(key, /*column=*/false);
    // The same positions on both sides: a shifted start on one side would
    // move the diagonal.
    if (!q || !k || q->first != n || k->first != n || q->second != k->second)
      return false;
    return predicate == (keep ? CmpPredicate::ge : CmpPredicate::lt);
  }

  /// Whether the keep factor is a causal mask spanning the scores' last two
  /// axes (square: Tq and Tk are one dim), which the kernel applies itself:
  /// tx.causal_mask, or the comparison of arange positions that computes it.
  static bool isCausal(const KeepFactor &factor, ArrayRef<Dim> scores) {
    Dim tq = scores[scores.size() - 2], tk = scores[scores.size() - 1];
    if (tq != tk)
      return false;
    // tx.causal_mask, or it with leading axes of 1 (`causal_mask(t)[None,
    // None]`, fairseq's [1, 1, T, T] future mask).
    if (auto causal =
            beneathLeadingUnitAxes(factor.mask).getDefiningOp<CausalMaskOp>()) {
      Shape shape = shapeOf(causal.getResult());
      return !factor.negate && shape[0] == tq && shape[1] == tk;
    }
    return isWrittenCausal(factor.mask, !factor.negate, tq);
  }

  /// The keep mask of the fused op (null: none), the causal flag apart.
  Value keepMask(AttentionMatch &m, bool &causal) {
    causal = false;
    if (!m.fillMask)
      return nullptr;
    SmallVector<KeepFactor> factors;
    negatedFactors(m.fillMask, factors);
    // The grouped form writes its rank-4 mask `[B, 1, T, T]` as rank 5
    // (`!reshape(mask, B, 1, 1, T, T)`, docs/fusion.md): the mask alone,
    // its single head axis doubled. Its factors are the rank-4 mask's,
    // which hold over the fused op's rank-4 scores as they are, so a causal
    // factor becomes the causal flag here too.
    if (factors.size() == 1 && !factors[0].negate)
      if (auto reshape = factors[0].mask.getDefiningOp<ReshapeOp>()) {
        Shape in = shapeOf(reshape.getInput()), out = shapeOf(reshape);
        if (in.size() == 4 && out.size() == 5 && in[1] == Dim::fixed(1) &&
            out[0] == in[0] && out[1] == Dim::fixed(1) &&
            out[2] == Dim::fixed(1) && out[3] == in[2] && out[4] == in[3]) {
          factors.clear();
          keepFactors(reshape.getInput(), factors);
        }
      }
    Shape scores = shapeOf(m.output.getLhs());
    Operation *at = m.output;
    Value keep;
    for (const KeepFactor &factor : factors) {
      if (isCausal(factor, scores)) {
        causal = true;
        continue;
      }
      Value mask = keepValue(factor, at);
      keep = keep ? conjunction(keep, mask, at) : mask;
    }
    // The grouped form's mask is rank 5 with single head axes: the fused
    // op's scores are rank 4.
    if (keep && shapeOf(keep).size() == 5) {
      Shape shape = shapeOf(keep);
      shape.erase(shape.begin() + 1);
      auto type = getTensorType(shape, cast<RankedTensorType>(keep.getType())
                                           .getElementType());
      keep = builderAfter({keep}, at).create<ReshapeOp>(keep.getLoc(), type,
                                                        keep);
    }
    return keep;
  }

  /// Canonical factors of an attention op's keep mask (the builtin's as
  /// written; a fused op's are already canonical): see runOnOperation.
  void simplifyMask(AttentionOp attention) {
    Value mask = attention.getMask();
    if (!mask)
      return;
    SmallVector<KeepFactor> factors;
    keepFactors(mask, factors);
    Shape query = shapeOf(attention.getQuery()),
          key = shapeOf(attention.getKey());
    const Dim scores[] = {query[query.size() - 2], key[key.size() - 2]};
    bool causal = attention.getCausal(), changed = false;
    Value keep;
    for (const KeepFactor &factor : factors) {
      if (isCausal(factor, scores)) {
        causal = changed = true;
        continue;
      }
      Value value = keepValue(factor, attention);
      changed |= value != factor.mask;
      keep = keep ? conjunction(keep, value, attention) : value;
    }
    if (!changed)
      return;
    if (Operation *def = mask.getDefiningOp())
      leftovers.insert(def);
    if (keep)
      attention.getMaskMutable().assign(keep);
    else
      attention.getMaskMutable().clear();
    if (causal)
      attention.setCausal(true);
  }

  void rewrite(AttentionMatch &m) {
    bool causal = false;
    Value mask = keepMask(m, causal);
    OpBuilder builder(m.result.getDefiningOp());
    auto fused = builder.create<AttentionOp>(
        fusedLocation(m.output.getLoc(), m.replaced), m.result.getType(), m.query, m.key, m.value, mask,
        builder.getF32FloatAttr(float(m.scale)),
        causal ? builder.getUnitAttr() : UnitAttr(),
        m.fillMask ? builder.getF32FloatAttr(float(m.fill)) : FloatAttr(),
        builder.getF32FloatAttr(float(m.dropout.value_or(0.0))));
    for (Operation *op : m.replaced)
      if (isa<DropoutOp>(op))
        if (Attribute key = op->getAttr(kRngKeyAttr))
          fused->setAttr(kRngKeyAttr, key);
    m.result.replaceAllUsesWith(fused.getResult());
    for (Operation *op : m.replaced) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          leftovers.insert(def);
      leftovers.remove(op);
      op->erase();
    }
  }

  /// Masks, transposes, reshapes and constants that only the fused ops
  /// used.
  void eraseDeadLeftovers() {
    while (!leftovers.empty()) {
      Operation *op = leftovers.pop_back_val();
      if (!isa<ConstantOp, TransposeOp, NotOp, AndOp, OrOp, CmpOp, ReshapeOp,
               PaddingMaskOp, CausalMaskOp>(op) ||
          !op->use_empty())
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          leftovers.insert(def);
      op->erase();
    }
  }

  llvm::SetVector<Operation *> leftovers;
  DenseMap<std::pair<Value, int64_t>, Value> paddingMasks;
  DenseMap<Value, Value> negations;
  DenseMap<std::pair<Value, Value>, Value> conjunctions;
};

} // namespace
