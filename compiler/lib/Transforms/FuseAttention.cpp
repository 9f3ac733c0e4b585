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
// then forward through an optional dropout to the matmul with V. A padding
// mask written as `reshape(ids != pad)` becomes a tx.padding_mask (so the
// lowering can use key lengths); a causal mask becomes the `causal`
// attribute. Everything that changes the semantics, or that the runtime
// kernel cannot run, is declined with a reason (the `stats` option prints it).
//
//===----------------------------------------------------------------------===//
#include "FusionStats.h"

#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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

/// A masked score at most this (after the scaling that follows the fill)
/// contributes exp(-1e4) = 0 to the softmax in f32: the position is masked.
constexpr double kLargeNegative = -1.0e4;

/// Relative tolerance between the written scale and 1/sqrt(d_k) (the spec's
/// constant was rounded to f32 once or twice).
constexpr double kScaleTolerance = 1.0e-5;

std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

/// A padding mask over the keys: an existing tx.padding_mask, or
/// `reshape(cmp ne(ids, pad))` to `[B, 1, 1, S]` still to be rewritten into
/// one.
struct PaddingSource {
  Value mask;        // the i1 [B, 1, 1, S] value as written
  Value ids;         // i32 [B, S]
  int64_t pad = 0;
  bool isOp() const { return mask.getDefiningOp<PaddingMaskOp>() != nullptr; }
};

/// What a mask that keeps (true where a query may attend to a key) is made
/// of: at most one padding mask and the causal mask.
struct MaskParts {
  std::optional<PaddingSource> padding;
  bool causal = false;
};

/// The i32 value of a splat scalar-like tx.constant, if `value` is one.
std::optional<int64_t> splatInt(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || dense.getNumElements() != 1)
    return std::nullopt;
  return dense.getSplatValue<APInt>().getSExtValue();
}

/// `reshape(cmp <predicate>(ids, pad))` from i32 `[B, S]` to `[B, 1, 1, S]`
/// (the pad constant on either side).
std::optional<PaddingSource> matchReshapedCompare(Value mask,
                                                  CmpPredicate predicate) {
  auto reshape = mask.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return std::nullopt;
  auto cmp = reshape.getInput().getDefiningOp<CmpOp>();
  if (!cmp || cmp.getPredicate() != predicate)
    return std::nullopt;
  Value ids = cmp.getLhs();
  std::optional<int64_t> pad = splatInt(cmp.getRhs());
  if (!pad) {
    ids = cmp.getRhs();
    pad = splatInt(cmp.getLhs());
  }
  auto idsType = cast<RankedTensorType>(ids.getType());
  if (!pad || !idsType.getElementType().isInteger(32) ||
      idsType.getRank() != 2 ||
      cast<RankedTensorType>(cmp.getType()).getShape() != idsType.getShape())
    return std::nullopt;
  Shape idShape = getShape(idsType);
  Shape maskShape = getShape(cast<RankedTensorType>(reshape.getType()));
  if (maskShape.size() != 4 || maskShape[0] != idShape[0] ||
      maskShape[1] != Dim::fixed(1) || maskShape[2] != Dim::fixed(1) ||
      maskShape[3] != idShape[1])
    return std::nullopt;
  return PaddingSource{mask, ids, *pad};
}

class MaskAnalysis {
public:
  /// `scores` is the `[B, h, Tq, Tk]` shape the mask broadcasts to.
  explicit MaskAnalysis(ArrayRef<Dim> scores) : scores(scores) {}

  /// Adds what the keep-mask `mask` is made of to `parts`.
  LogicalResult keep(Value mask, MaskParts &parts, std::string &why) {
    if (auto padding = mask.getDefiningOp<PaddingMaskOp>())
      return addPadding({mask, padding.getIds(), int64_t(padding.getPad())},
                        parts, why);
    if (std::optional<PaddingSource> padding =
            matchReshapedCompare(mask, CmpPredicate::ne))
      return addPadding(*padding, parts, why);
    if (auto causal = mask.getDefiningOp<CausalMaskOp>()) {
      Shape shape = getShape(cast<RankedTensorType>(causal.getType()));
      if (shape[0] != scores[2] || shape[1] != scores[3]) {
        why = "the causal mask " + formatShape(shape) +
              " does not span the scores' query and key axes";
        return failure();
      }
      parts.causal = true;
      return success();
    }
    if (auto both = mask.getDefiningOp<AndOp>())
      return failure(failed(keep(both.getLhs(), parts, why)) ||
                     failed(keep(both.getRhs(), parts, why)));
    if (auto negation = mask.getDefiningOp<NotOp>())
      return fill(negation.getInput(), parts, why);
    why = "the mask is neither a padding mask nor a causal mask (nor their "
          "conjunction)";
    return failure();
  }

  /// Adds what the fill-mask `mask` (true where a score is masked) is made
  /// of to `parts`: the negation of a keep-mask.
  LogicalResult fill(Value mask, MaskParts &parts, std::string &why) {
    if (auto negation = mask.getDefiningOp<NotOp>())
      return keep(negation.getInput(), parts, why);
    if (std::optional<PaddingSource> padding =
            matchReshapedCompare(mask, CmpPredicate::eq))
      return addPadding(*padding, parts, why);
    if (auto either = mask.getDefiningOp<OrOp>())
      return failure(failed(fill(either.getLhs(), parts, why)) ||
                     failed(fill(either.getRhs(), parts, why)));
    why = "the fill mask is not the negation of a padding or causal mask";
    return failure();
  }

private:
  LogicalResult addPadding(const PaddingSource &padding, MaskParts &parts,
                           std::string &why) {
    Shape shape = getShape(cast<RankedTensorType>(padding.mask.getType()));
    if (shape[0] != scores[0] || shape[3] != scores[3]) {
      why = "the padding mask " + formatShape(shape) +
            " does not mask the keys of the scores " + formatShape(scores);
      return failure();
    }
    if (parts.padding && parts.padding->mask != padding.mask) {
      why = "the mask combines two padding masks";
      return failure();
    }
    parts.padding = padding;
    return success();
  }

  Shape scores;
};

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// One attention written out, ready to become a tx.attention.
struct AttentionMatch {
  Value query, key, value;
  double scale = 1.0;
  MaskParts mask;
  std::optional<double> dropout;
  MatmulOp output;
  /// The ops the fused op replaces, from the output back to Q·Kᵀ.
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
    Value v = softmax.getInput();
    for (int depth = 0; depth < 8; ++depth) {
      Operation *def = v.getDefiningOp();
      if (!def)
        return false;
      if (isa<MatmulOp>(def))
        return true;
      if (!isa<DivOp, MulOp, ScaleOp, MaskedFillOp, AddOp>(def))
        return false;
      v = def->getOperand(0);
      if (isa<MulOp, AddOp>(def) && v.getDefiningOp<ConstantOp>())
        v = def->getOperand(1);
    }
    return false;
  }

  /// Matches the attention around `softmax`; on failure `why` says what
  /// stops it.
  FailureOr<AttentionMatch> match(SoftmaxOp softmax, std::string &why) {
    AttentionMatch m;
    auto scoresType = cast<RankedTensorType>(softmax.getType());
    int64_t rank = scoresType.getRank();
    if (rank != 4)
      return decline(why, "scores of rank " + std::to_string(rank) +
                              ", not [B, h, Tq, Tk]");
    int64_t axis = softmax.getAxis();
    if (axis != -1 && axis != rank - 1)
      return decline(why, "softmax over axis " + std::to_string(axis) +
                              ", not the key axis (-1)");
    if (failed(matchProbabilities(softmax, m, why)) ||
        failed(matchScores(softmax, m, why)) ||
        failed(checkLayout(m, why)))
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
                            std::string &why) {
    Value scores = softmax.getInput();
    std::optional<double> scale;
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
        if (failed(matchQueryKey(product, m, why)))
          return failure();
        m.replaced.push_back(product);
        break;
      }
      std::optional<double> factor;
      Value next;
      if (auto div = dyn_cast<DivOp>(def)) {
        next = div.getLhs();
        if (std::optional<double> c = scalarFactor(div, div.getRhs(), next))
          factor = 1.0 / *c;
      } else if (auto mul = dyn_cast<MulOp>(def)) {
        next = mul.getLhs();
        factor = scalarFactor(mul, mul.getRhs(), next);
        if (!factor && mul.getLhs().getDefiningOp<ConstantOp>()) {
          next = mul.getRhs();
          factor = scalarFactor(mul, mul.getLhs(), next);
        }
      } else if (auto byConstant = dyn_cast<ScaleOp>(def)) {
        next = byConstant.getInput();
        factor = byConstant.getFactor().convertToDouble();
      } else if (auto masked = dyn_cast<MaskedFillOp>(def)) {
        if (fill)
          return decline(why, "the scores are masked twice");
        fill = masked;
        scaleAfterFill = scale.value_or(1.0);
        m.replaced.push_back(masked);
        scores = masked.getInput();
        continue;
      } else if (isa<AddOp>(def)) {
        return decline(why, "an additive mask (tx has no bool-to-f32 "
                            "conversion to write one that tx.attention can "
                            "take)");
      } else {
        return decline(why, "the scores pass through " +
                                def->getName().getStringRef() + " at " +
                                FusionStats::formatLocation(def->getLoc()));
      }
      if (!factor)
        return decline(why, def->getName().getStringRef() +
                                " at " +
                                FusionStats::formatLocation(def->getLoc()) +
                                " does not scale by an f32 scalar constant");
      scale = scale.value_or(1.0) * *factor;
      m.replaced.push_back(def);
      scores = next;
    }

    // The scale the pattern implies: 1/sqrt(d_k).
    int64_t dk = cast<RankedTensorType>(m.query.getType()).getShape().back();
    if (ShapedType::isDynamic(dk))
      return decline(why, "the head size d_k is not static");
    double expected = 1.0 / std::sqrt(double(dk));
    if (!scale)
      return decline(why, "the scores are not scaled (expected 1/sqrt(d_k) "
                          "= " +
                              formatNumber(expected) + ")");
    if (std::abs(*scale - expected) > kScaleTolerance * expected)
      return decline(why, "the scale " + formatNumber(*scale) +
                              " is not 1/sqrt(d_k) = " +
                              formatNumber(expected));
    m.scale = *scale;

    if (fill) {
      double filled = fill.getValue().convertToDouble() * scaleAfterFill;
      if (!(filled <= kLargeNegative))
        return decline(why, "the fill value " +
                                formatNumber(fill.getValue().convertToDouble()) +
                                " is not a large negative number (masked "
                                "scores must vanish in the softmax)");
      Shape scoresShape = getShape(cast<RankedTensorType>(fill.getType()));
      MaskAnalysis masks(scoresShape);
      if (failed(masks.fill(fill.getMask(), m.mask, why)))
        return failure();
    }
    return success();
  }

  /// matmul(Q, Kᵀ) with Kᵀ a transpose of the last two dims or transpose_rhs.
  LogicalResult matchQueryKey(MatmulOp product, AttentionMatch &m,
                              std::string &why) {
    if (product.getTransposeLhs())
      return decline(why, "the query is transposed in Q·Kᵀ");
    m.query = product.getLhs();
    if (product.getTransposeRhs()) {
      m.key = product.getRhs();
      return success();
    }
    auto transpose = product.getRhs().getDefiningOp<TransposeOp>();
    if (!transpose || !swapsLastTwo(transpose.getPermutation()))
      return decline(why, "the scores are not matmul(Q, transpose(K, -2, -1))");
    m.key = transpose.getInput();
    return success();
  }

  /// libtxrt's kernel reads Q, K, V as [B, T, h*d] and writes [B, T, h*d]:
  /// the lowering looks through split_heads and into merge_heads.
  LogicalResult checkLayout(AttentionMatch &m, std::string &why) {
    for (Value operand : {m.query, m.key, m.value})
      if (!operand.getDefiningOp<SplitHeadsOp>())
        return decline(why, "Q, K and V must come from split_heads (the "
                            "runtime kernel reads [B, T, h*d])");
    for (Operation *user : m.output->getUsers())
      if (!isa<MergeHeadsOp>(user))
        return decline(why, "the attention output must go to merge_heads "
                            "only (the runtime kernel writes [B, T, h*d]); "
                            "it also goes to " +
                                user->getName().getStringRef());
    auto queryType = cast<RankedTensorType>(m.query.getType());
    auto keyType = cast<RankedTensorType>(m.key.getType());
    if (queryType.getShape().back() != keyType.getShape().back() ||
        cast<RankedTensorType>(m.value.getType()).getShape().back() !=
            queryType.getShape().back())
      return decline(why, "Q, K and V have different head sizes");
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct FuseAttentionPass
    : mlir::tx::impl::FuseAttentionPassBase<FuseAttentionPass> {
  using FuseAttentionPassBase::FuseAttentionPassBase;

  void runOnOperation() override {
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
    eraseDeadLeftovers();
    if (stats)
      report.print(llvm::errs());
  }

  /// A tx.padding_mask for `padding`: the op itself, or one built (once per
  /// written mask) right after the reshape it replaces.
  Value paddingMaskFor(const PaddingSource &padding) {
    if (padding.isOp())
      return padding.mask;
    Value &canonical = canonicalPadding[padding.mask];
    if (!canonical) {
      Operation *reshape = padding.mask.getDefiningOp();
      OpBuilder builder(reshape->getBlock(), std::next(reshape->getIterator()));
      canonical = builder.create<PaddingMaskOp>(reshape->getLoc(), padding.ids,
                                                uint64_t(padding.pad));
      assert(canonical.getType() == padding.mask.getType() &&
             "padding_mask type differs from the reshaped comparison");
    }
    return canonical;
  }

  void rewrite(AttentionMatch &m) {
    Value mask;
    if (m.mask.padding)
      mask = paddingMaskFor(*m.mask.padding);
    OpBuilder builder(m.output);
    auto fused = builder.create<AttentionOp>(
        m.output.getLoc(), m.output.getType(), m.query, m.key, m.value, mask,
        builder.getF32FloatAttr(float(m.scale)),
        m.mask.causal ? builder.getUnitAttr() : UnitAttr(),
        builder.getF32FloatAttr(float(m.dropout.value_or(0.0))));
    m.output.getResult().replaceAllUsesWith(fused.getResult());
    for (Operation *op : m.replaced) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          leftovers.insert(def);
      leftovers.remove(op);
      op->erase();
    }
  }

  /// Masks, transposes and constants that only the fused ops used.
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
  DenseMap<Value, Value> canonicalPadding;
};

} // namespace
