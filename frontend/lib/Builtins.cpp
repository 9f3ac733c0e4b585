//===- Builtins.cpp - the spec language's builtin functions ---------------===//
//
// One table of builtins: each names its parameters (tensor or compile-time
// value, with defaults) and emits tx ops. Builtins that create parameters
// (`linear`, `embedding`, `layer_norm`) name them under the call's `as` path.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tx;
using namespace txc;
using namespace txc::detail;

namespace {

NamedAttribute f32Attr(MLIRGenImpl &gen, StringRef name, double value) {
  return gen.getBuilder().getNamedAttr(
      name, gen.getBuilder().getF32FloatAttr(static_cast<float>(value)));
}
NamedAttribute i64Attr(MLIRGenImpl &gen, StringRef name, int64_t value) {
  return gen.getBuilder().getNamedAttr(
      name, gen.getBuilder().getI64IntegerAttr(value));
}

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

/// Checks `axis` against the rank of `value`; returns it normalized.
std::optional<int64_t> checkAxis(MLIRGenImpl &gen, SourceLoc loc, Value value,
                                 int64_t axis) {
  int64_t rank = rankOf(value);
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    gen.getDiags().error(
        loc,
        "axis " + std::to_string(axis) + " is out of range for " +
            formatType(value.getType()) + " of rank " + std::to_string(rank),
        axisRangeHint(rank));
    return std::nullopt;
  }
  return normalized;
}

//===----------------------------------------------------------------------===//
// Layers with parameters
//===----------------------------------------------------------------------===//

Val genLinear(MLIRGenImpl &gen, const ast::CallExpr &call,
              const BoundArgs &args) {
  Value x = args.tensor(0);
  int64_t out = args.integer(1);
  if (out <= 0) {
    gen.getDiags().error(args.locs[1], "linear out_features must be positive, got " +
                                           std::to_string(out));
    return {};
  }
  if (!gen.checkDimSize(args.locs[1], out, "linear out_features"))
    return {};
  std::optional<int64_t> in = gen.staticDim(call.getLoc(), x, -1, "linear");
  if (!in)
    return {};
  Value weight = gen.getParameter(call, "weight", {out, *in},
                                  Init::xavier_uniform);
  if (!weight)
    return {};
  SmallVector<Value> operands = {x, weight};
  bool hasBias = args.flag(2);
  if (hasBias) {
    Value bias = gen.getParameter(call, "bias", {out}, Init::zeros);
    if (!bias)
      return {};
    operands.push_back(bias);
  }
  OpBuilder &b = gen.getBuilder();
  return gen.createValue<LinearOp>(
      call.getLoc(), operands,
      {b.getNamedAttr("operandSegmentSizes",
                      b.getDenseI32ArrayAttr({1, 1, hasBias ? 1 : 0, 0, 0}))});
}

Val genEmbedding(MLIRGenImpl &gen, const ast::CallExpr &call,
                 const BoundArgs &args) {
  Value ids = args.tensor(0);
  int64_t vocab = args.integer(1), dim = args.integer(2);
  if (vocab <= 0 || dim <= 0) {
    gen.getDiags().error(call.getLoc(),
                         "embedding vocab and dim must be positive, got " +
                             std::to_string(vocab) + " and " +
                             std::to_string(dim));
    return {};
  }
  if (!gen.checkDimSize(args.locs[1], vocab, "embedding vocab") ||
      !gen.checkDimSize(args.locs[2], dim, "embedding dim"))
    return {};
  if (!cast<RankedTensorType>(ids.getType()).getElementType().isInteger(32)) {
    gen.getDiags().error(args.locs[0], "embedding ids must be i32, got " +
                                           formatType(ids.getType()));
    return {};
  }
  if (!gen.checkArangeIds(args.locs[0], ids, Dim::fixed(vocab),
                          /*negativeWrap=*/false,
                          "an embedding of " + std::to_string(vocab) + " rows"))
    return {};
  Value table =
      gen.getParameter(call, "weight", {vocab, dim}, Init::xavier_uniform);
  if (!table)
    return {};
  return gen.createValue<EmbeddingOp>(call.getLoc(), {ids, table});
}

/// `layer_norm(x, d_model)`, PyTorch's `nn.LayerNorm(d_model)`: a second
/// positional argument is eps, and a size there compiled silently to a norm
/// with eps = 512. An eps of 1 or more given positionally is refused.
bool checkPositionalEps(MLIRGenImpl &gen, const ast::CallExpr &call,
                        const BoundArgs &args, Value x, const char *name) {
  double eps = args.number(1);
  if (call.args.size() < 2 || !call.args[1].keyword.empty() || eps < 1.0)
    return true;
  auto type = cast<RankedTensorType>(x.getType());
  std::string last = type.isDynamicDim(type.getRank() - 1)
                         ? std::string("")
                         : " (" + std::to_string(type.getShape().back()) + ")";
  gen.getDiags().error(
      args.locs[1],
      std::string("the second argument of ") + name + " is eps, here " +
          ast::formatNumber(eps, eps == std::floor(eps)) + ", not " +
          (std::string(name) == "rms_norm" ? "nn.RMSNorm" : "nn.LayerNorm") +
          "'s normalized_shape: " + name +
          " normalizes over the last dimension of x" + last,
      std::string("write ") + name + "(x) for the default eps, or eps = " +
          ast::formatNumber(eps, eps == std::floor(eps)) +
          " by keyword if that is the eps you mean");
  return false;
}

/// A norm's eps is positive and stays so as the op's f32 attribute: 1e-46
/// became 0 there, refused by the op as "epsilon must be positive, got 0"
/// under an eps the user wrote positive.
bool checkNormEps(MLIRGenImpl &gen, const BoundArgs &args, const char *name) {
  double eps = args.number(1);
  if (!(eps > 0)) {
    gen.getDiags().error(args.locs[1],
                         std::string(name) + " eps must be positive");
    return false;
  }
  float single = float(eps);
  if (single > 0 && std::isfinite(single))
    return true;
  gen.getDiags().error(
      args.locs[1],
      std::string(name) + " eps " + ast::formatNumber(eps, false) + " is " +
          (single > 0 ? "beyond float32's range"
                      : "below float32's smallest "
                        "positive value (1.4e-45)") +
          ", where the norm computes: it would be " +
          (single > 0 ? "inf" : "0"),
      "use an eps between 1e-38 and 1e38 (1e-5 and 1e-6 are usual)");
  return false;
}

Val genLayerNorm(MLIRGenImpl &gen, const ast::CallExpr &call,
                 const BoundArgs &args) {
  Value x = args.tensor(0);
  double eps = args.number(1);
  if (!checkNormEps(gen, args, "layer_norm"))
    return {};
  if (!checkPositionalEps(gen, call, args, x, "layer_norm"))
    return {};
  std::optional<int64_t> d = gen.staticDim(call.getLoc(), x, -1, "layer_norm");
  if (!d)
    return {};
  Value weight = gen.getParameter(call, "weight", {*d}, Init::ones);
  if (!weight)
    return {};
  SmallVector<Value> operands = {x, weight};
  if (args.flag(2)) {
    Value bias = gen.getParameter(call, "bias", {*d}, Init::zeros);
    if (!bias)
      return {};
    operands.push_back(bias);
  }
  return gen.createValue<LayerNormOp>(call.getLoc(), operands,
                                      {f32Attr(gen, "epsilon", eps)});
}

/// `rope(x, base = 10000, rotary_dim = 0)`: x [..., T, d] rotated by
/// position along T (its first rotary_dim features of each head; 0: all).
/// On a split_heads [B, h, T, d] the rotation runs before the split, on
/// [B, T, h * d], so attention still reads Q and K in place.
Val genRope(MLIRGenImpl &gen, const ast::CallExpr &call,
            const BoundArgs &args) {
  Value x = args.tensor(0);
  std::optional<int64_t> d = gen.staticDim(call.getLoc(), x, -1, "rope");
  if (!d)
    return {};
  // Pairs of features rotate together (rotate_half): the rotated part of
  // the head is even.
  int64_t rotary = args.integer(2);
  if (rotary != 0 && (rotary < 2 || rotary > *d || rotary % 2 != 0)) {
    gen.getDiags().error(
        args.locs[2],
        "rope rotary_dim must be an even number from 2 to the head size " +
            std::to_string(*d) + " (the last dimension of " +
            formatType(x.getType()) + "), got " + std::to_string(rotary),
        "rotary_dim = 0 (the default) rotates the whole head; GPT-NeoX's "
        "rotary_pct p is rotary_dim = int(head_size * p)");
    return {};
  }
  if (rotary == *d)
    rotary = 0;
  if (rotary == 0 && *d % 2 != 0) {
    gen.getDiags().error(call.getLoc(),
                         "rope rotates pairs of features, so the last "
                         "dimension of its input must be even, got " +
                             formatType(x.getType()),
                         "on split_heads(x, heads) the head size d / heads "
                         "must be even");
    return {};
  }
  SmallVector<NamedAttribute> attrs = {f32Attr(gen, "base", args.number(1))};
  if (rotary != 0)
    attrs.push_back(i64Attr(gen, "rotary_dims", rotary));
  if (auto split = x.getDefiningOp<SplitHeadsOp>()) {
    attrs.push_back(i64Attr(gen, "heads", int64_t(split.getHeads())));
    Val rotated = gen.createValue<RopeOp>(call.getLoc(), split.getInput(),
                                          attrs);
    if (!rotated.valid())
      return {};
    Val result = gen.createValue<SplitHeadsOp>(
        call.getLoc(), rotated.tensor,
        {i64Attr(gen, "heads", int64_t(split.getHeads()))});
    // The unrotated split was only rope's argument: no op reads it and no
    // name holds it (`h = split_heads(x, 2)` may be read again).
    if (split->use_empty() && !gen.isNamed(split.getResult()))
      split->erase();
    return result;
  }
  // One head: the attribute is read by shape inference, so it is given.
  attrs.push_back(i64Attr(gen, "heads", 1));
  return gen.createValue<RopeOp>(call.getLoc(), x, attrs);
}

Val genRmsNorm(MLIRGenImpl &gen, const ast::CallExpr &call,
               const BoundArgs &args) {
  Value x = args.tensor(0);
  double eps = args.number(1);
  if (!checkNormEps(gen, args, "rms_norm"))
    return {};
  if (!checkPositionalEps(gen, call, args, x, "rms_norm"))
    return {};
  std::optional<int64_t> d = gen.staticDim(call.getLoc(), x, -1, "rms_norm");
  if (!d)
    return {};
  Value weight = gen.getParameter(call, "weight", {*d}, Init::ones);
  if (!weight)
    return {};
  return gen.createValue<RmsNormOp>(call.getLoc(), {x, weight},
                                    {f32Attr(gen, "epsilon", eps)});
}

/// `param(d0, d1, ..., init = zeros, std = 1.0) as name`: a free learnable
/// tensor (a [CLS] vector, learned positions), named by its `as` path alone.
Val genParam(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < args.rest.size(); ++i) {
    const ast::Expr &expr = *call.args[i].value;
    std::optional<Dim> dim = gen.resolveDim(expr, nullptr);
    if (!dim)
      return {};
    if (dim->isSymbolic()) {
      gen.getDiags().error(args.restLocs[i],
                           "a parameter's shape is static, but '" +
                               dim->symbol.getValue().str() +
                               "' is a dim (known only at run time)",
                           "use its bound, e.g. a config value, and slice");
      return {};
    }
    if (dim->size <= 0) {
      gen.getDiags().error(args.restLocs[i],
                           "parameter sizes must be positive, got " +
                               std::to_string(dim->size));
      return {};
    }
    shape.push_back(dim->size);
  }
  if (shape.empty()) {
    gen.getDiags().error(call.getLoc(), "param needs its shape",
                         "e.g. `param(1, 1, d_model, init = zeros) as cls`");
    return {};
  }
  const std::string &initName = args.names[0];
  std::optional<Init> init =
      initName.empty() ? std::optional<Init>(Init::zeros)
                       : symbolizeInit(initName);
  if (!init) {
    gen.getDiags().error(args.locs[0],
                         "unknown initializer '" + initName + "'",
                         "use zeros, ones, normal or xavier_uniform");
    return {};
  }
  std::optional<double> std;
  if (args.values[1].constant->isNumber()) { // given (std = 0 too)
    if (*init != Init::normal) {
      gen.getDiags().error(args.locs[1],
                           "std is for init = normal, not " +
                               (initName.empty()
                                    ? std::string("zeros (the default)")
                                    : initName));
      return {};
    }
    if (!(args.number(1) > 0.0) || !std::isfinite(args.number(1))) {
      gen.getDiags().error(args.locs[1], "std must be positive");
      return {};
    }
    std = args.number(1);
  }
  if (*init == Init::xavier_uniform && shape.size() < 2) {
    gen.getDiags().error(args.locs[0],
                         "xavier_uniform needs a parameter of rank >= 2 (its "
                         "fans), got rank " +
                             std::to_string(shape.size()));
    return {};
  }
  Value value = gen.getParameter(call, "", shape, *init, std);
  if (!value)
    return {};
  return Val::of(value);
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

template <typename OpTy>
Val genUnary(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  return gen.createValue<OpTy>(call.getLoc(), args.tensor(0));
}

Val genMatmul(MLIRGenImpl &gen, const ast::CallExpr &call,
              const BoundArgs &args) {
  return gen.createValue<MatmulOp>(call.getLoc(),
                                   {args.tensor(0), args.tensor(1)});
}

Val genTranspose(MLIRGenImpl &gen, const ast::CallExpr &call,
                 const BoundArgs &args) {
  Value x = args.tensor(0);
  int64_t rank = rankOf(x);
  if (rank < 2) {
    gen.getDiags().error(call.getLoc(), "transpose needs rank >= 2, got " +
                                            formatType(x.getType()));
    return {};
  }
  // Both axes or none (the last two): PyTorch has no one-axis transpose.
  bool given0 = args.values[1].constant->isNumber();
  bool given1 = args.values[2].constant->isNumber();
  if (given0 != given1) {
    gen.getDiags().error(call.getLoc(),
                         "transpose takes two axes or none, got one",
                         "write transpose(x, d0, d1), or transpose(x) to swap "
                         "the last two");
    return {};
  }
  std::optional<int64_t> d0 =
      checkAxis(gen, args.locs[1], x, given0 ? args.integer(1) : -2);
  std::optional<int64_t> d1 =
      checkAxis(gen, args.locs[2], x, given1 ? args.integer(2) : -1);
  if (!d0 || !d1)
    return {};
  SmallVector<int64_t> permutation(rank);
  for (int64_t i = 0; i < rank; ++i)
    permutation[i] = i;
  std::swap(permutation[*d0], permutation[*d1]);
  return gen.createValue<TransposeOp>(
      call.getLoc(), x,
      {gen.getBuilder().getNamedAttr(
          "permutation", gen.getBuilder().getDenseI64ArrayAttr(permutation))});
}

Val genReshape(MLIRGenImpl &gen, const ast::CallExpr &call,
               const BoundArgs &args) {
  Value x = args.tensor(0);
  Shape shape;
  for (size_t i = 0; i < args.rest.size(); ++i) {
    // Dimensions were evaluated as values; a symbolic dim is re-resolved from
    // the source so `reshape(x, B, S, 8, 64)` works.
    const ast::Expr &expr = *call.args[i + 1].value;
    std::optional<Dim> dim = gen.resolveDim(expr, nullptr);
    if (!dim)
      return {};
    shape.push_back(*dim);
  }
  if (shape.empty()) {
    gen.getDiags().error(call.getLoc(), "reshape needs the new dimensions",
                         "e.g. `reshape(x, B, S, heads, d_k)`");
    return {};
  }
  auto type = getTensorType(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  if (!gen.checkSizes(call.getLoc(), type, ReshapeOp::getOperationName()))
    return {};
  // What ReshapeOp::verify checks, said in the spec's terms: symbolic dims
  // carry over one for one, and the static sizes keep their product (both
  // products are within the size limits checked above).
  Shape input = getShape(cast<RankedTensorType>(x.getType()));
  auto symbols = [](const Shape &dims) {
    SmallVector<StringRef> names;
    for (const Dim &dim : dims)
      if (dim.isSymbolic())
        names.push_back(dim.symbol.getValue());
    llvm::sort(names);
    return names;
  };
  auto staticCount = [](const Shape &dims) {
    int64_t count = 1;
    for (const Dim &dim : dims)
      if (!dim.isSymbolic())
        count *= dim.size;
    return count;
  };
  if (symbols(input) != symbols(shape)) {
    gen.getDiags().error(call.getLoc(),
                         "reshape must keep each dim of " + formatShape(input) +
                             " as a dimension of its own, "
                             "got " +
                             formatShape(shape),
                         "a dim's size is known only at run time, so it can "
                         "be moved but not merged, split, added or dropped");
    return {};
  }
  if (staticCount(input) != staticCount(shape)) {
    // The count as a product: `B*T*8` (the dims are the same on both sides).
    std::string dims;
    for (StringRef name : symbols(input))
      dims += name.str() + "*";
    gen.getDiags().error(
        call.getLoc(),
        "reshape changes the number of elements: " + formatShape(input) +
            " has " + dims + std::to_string(staticCount(input)) + ", " +
            formatShape(shape) + " has " + dims +
            std::to_string(staticCount(shape)));
    return {};
  }
  auto op = gen.getBuilder().create<ReshapeOp>(gen.getLoc(call.getLoc()),
                                               type, x);
  if (failed(op.verify())) {
    op.erase();
    return {};
  }
  return Val::of(op.getResult());
}

Val genSplitHeads(MLIRGenImpl &gen, const ast::CallExpr &call,
                  const BoundArgs &args) {
  return gen.createValue<SplitHeadsOp>(call.getLoc(), args.tensor(0),
                                       {i64Attr(gen, "heads", args.integer(1))});
}

Val genMergeHeads(MLIRGenImpl &gen, const ast::CallExpr &call,
                  const BoundArgs &args) {
  return gen.createValue<MergeHeadsOp>(call.getLoc(), args.tensor(0));
}

template <typename OpTy>
Val genSoftmaxLike(MLIRGenImpl &gen, const ast::CallExpr &call,
                   const BoundArgs &args) {
  Value x = args.tensor(0);
  std::optional<int64_t> axis = checkAxis(gen, args.locs[1], x, args.integer(1));
  if (!axis)
    return {};
  const int64_t last = rankOf(x) - 1;
  if (*axis == last)
    return gen.createValue<OpTy>(call.getLoc(), x,
                                 {i64Attr(gen, "axis", args.integer(1))});
  // The kernels normalize rows: over another axis, that axis is swapped
  // to the last place and back (the transposes are views to the lowering).
  SmallVector<int64_t> permutation(last + 1);
  for (int64_t i = 0; i <= last; ++i)
    permutation[i] = i;
  std::swap(permutation[*axis], permutation[last]);
  mlir::NamedAttribute swap = gen.getBuilder().getNamedAttr(
      "permutation", gen.getBuilder().getDenseI64ArrayAttr(permutation));
  Val swapped = gen.createValue<TransposeOp>(call.getLoc(), x, {swap});
  if (!swapped.isTensor())
    return {};
  Val normalized = gen.createValue<OpTy>(call.getLoc(), swapped.tensor,
                                         {i64Attr(gen, "axis", -1)});
  if (!normalized.isTensor())
    return {};
  return gen.createValue<TransposeOp>(call.getLoc(), normalized.tensor, {swap});
}

/// A dropout rate out of [0, 1) as written (the op's check said "got 1"
/// of 1.0000001, and took -1e-50 for -0), or one below 1 that f32, in
/// which rates are kept, rounds to 1 (0.99999999). Returns whether it was
/// refused.
bool badRate(MLIRGenImpl &gen, const BoundArgs &args, size_t i,
             StringRef what) {
  const double rate = args.number(i);
  const std::string written = args.values[i].constant->str();
  if (!(rate >= 0.0 && rate < 1.0)) {
    gen.getDiags().error(args.locs[i],
                         what.str() + " must be in [0, 1), got " + written);
    return true;
  }
  if (float(rate) != 1.0f)
    return false;
  gen.getDiags().error(args.locs[i],
                       what.str() + " " + written +
                           " becomes 1 in f32, where rates are kept; a "
                           "rate must be in [0, 1)",
                       "the largest rate below 1 in f32 is 0.99999994");
  return true;
}

Val genDropout(MLIRGenImpl &gen, const ast::CallExpr &call,
               const BoundArgs &args) {
  if (badRate(gen, args, 1, "dropout rate"))
    return {};
  return gen.createValue<DropoutOp>(call.getLoc(), args.tensor(0),
                                    {f32Attr(gen, "rate", args.number(1))});
}

/// The identity; in a train entry a tx.stop_gradient, which tx-autodiff
/// sends no gradient through.
Val genStopGradient(MLIRGenImpl &gen, const ast::CallExpr &call,
                    const BoundArgs &args) {
  if (!gen.isInTrainEntry())
    return args.values[0];
  return gen.createValue<StopGradientOp>(call.getLoc(), args.tensor(0), {});
}

Val genScale(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  return gen.createValue<ScaleOp>(call.getLoc(), args.tensor(0),
                                  {f32Attr(gen, "factor", args.number(1))});
}

Val genMaskedFill(MLIRGenImpl &gen, const ast::CallExpr &call,
                  const BoundArgs &args) {
  return gen.createValue<MaskedFillOp>(call.getLoc(),
                                       {args.tensor(0), args.tensor(1)},
                                       {f32Attr(gen, "value", args.number(2))});
}

/// Token ids are i32: an id compared with them (a pad, an ignored target)
/// must be one too, or the lowering's i32 constant would be another id.
bool checkTokenId(MLIRGenImpl &gen, SourceLoc loc, int64_t id,
                  StringRef what) {
  if (id >= INT32_MIN && id <= INT32_MAX)
    return true;
  gen.getDiags().error(loc, what.str() + " " + std::to_string(id) +
                                " is not an i32 token id",
                       "token ids are in [-2147483648, 2147483647]");
  return false;
}

Val genPaddingMask(MLIRGenImpl &gen, const ast::CallExpr &call,
                   const BoundArgs &args) {
  if (!checkTokenId(gen, args.locs[1], args.integer(1), "padding_mask pad"))
    return {};
  return gen.createValue<PaddingMaskOp>(call.getLoc(), args.tensor(0),
                                        {i64Attr(gen, "pad", args.integer(1))});
}

Val genCausalMask(MLIRGenImpl &gen, const ast::CallExpr &call,
                  const BoundArgs &args) {
  // The mask is [T, T] over the ids' positions; of any other tensor the
  // last axis would be taken for T (d of a [B, T, d] activation).
  Value ids = args.tensor(0);
  auto type = cast<RankedTensorType>(ids.getType());
  if (type.getRank() != 2 || !type.getElementType().isInteger(32)) {
    gen.getDiags().error(args.locs[0],
                         "causal_mask takes token ids i32[B, T], got " +
                             formatType(ids.getType()));
    return {};
  }
  return gen.createValue<CausalMaskOp>(call.getLoc(), ids);
}

Val genPositionalEncoding(MLIRGenImpl &gen, const ast::CallExpr &call,
                          const BoundArgs &args) {
  return gen.createValue<PositionalEncodingOp>(call.getLoc(), args.tensor(0));
}

template <typename OpTy>
Val genReduce(MLIRGenImpl &gen, const ast::CallExpr &call,
              const BoundArgs &args) {
  // Checked here, at the axis as written: the op's verifier named only the
  // rank, at the call.
  if (!checkAxis(gen, args.locs[1], args.tensor(0), args.integer(1)))
    return {};
  SmallVector<NamedAttribute> attrs = {gen.getBuilder().getNamedAttr(
      "axes", gen.getBuilder().getDenseI64ArrayAttr({args.integer(1)}))};
  if (args.flag(2))
    attrs.push_back(
        gen.getBuilder().getNamedAttr("keepdim", gen.getBuilder().getUnitAttr()));
  return gen.createValue<OpTy>(call.getLoc(), args.tensor(0), attrs);
}

/// torch.argmax(x, dim, keepdim): i32 ids, no gradient.
Val genArgmax(MLIRGenImpl &gen, const ast::CallExpr &call,
              const BoundArgs &args) {
  if (!checkAxis(gen, args.locs[1], args.tensor(0), args.integer(1)))
    return {};
  SmallVector<NamedAttribute> attrs = {i64Attr(gen, "axis", args.integer(1))};
  if (args.flag(2))
    attrs.push_back(gen.getBuilder().getNamedAttr(
        "keepdim", gen.getBuilder().getUnitAttr()));
  return gen.createValue<ArgmaxOp>(call.getLoc(), args.tensor(0), attrs);
}

Val genCrossEntropy(MLIRGenImpl &gen, const ast::CallExpr &call,
                    const BoundArgs &args) {
  if (!checkTokenId(gen, args.locs[2], args.integer(2),
                    "cross_entropy ignore_index"))
    return {};
  // Judged as written (0.99999999 is 1 in f32, and the verifier said
  // "got 1").
  if (badRate(gen, args, 3, "cross_entropy label_smoothing"))
    return {};
  return gen.createValue<CrossEntropyOp>(
      call.getLoc(), {args.tensor(0), args.tensor(1)},
      {i64Attr(gen, "ignore_index", args.integer(2)),
       f32Attr(gen, "label_smoothing", args.number(3))});
}

Val genAttention(MLIRGenImpl &gen, const ast::CallExpr &call,
                 const BoundArgs &args) {
  Value q = args.tensor(0);
  // The fused kernel takes heads [B, h, T, d_k] (docs/spec-language.md):
  // another rank compiled to an abort ("Failed to infer result type(s)").
  for (int i = 0; i < 3; ++i) {
    auto type = cast<RankedTensorType>(args.tensor(i).getType());
    if (type.getRank() == 4)
      continue;
    static const char *const names[] = {"query", "key", "value"};
    gen.getDiags().error(
        args.locs[i],
        std::string("attention takes heads [B, h, T, d_k] (rank 4); its ") +
            names[i] + " is " + formatType(type),
        type.getRank() == 5
            ? "grouped-query attention passes the key and value heads as "
              "they are: attention(q [B, h, T, d], k [B, hkv, T, d], v) "
              "with hkv dividing h"
            : "split the model dimension into heads with split_heads(x, "
              "heads) (one head: split_heads(x, 1))");
    return {};
  }
  // One head size for query, key and value (the kernels take one): a
  // narrower value was read and written as wide as the query, and the
  // results were wrong without a word.
  {
    Dim dk = getShape(cast<RankedTensorType>(q.getType()))[3];
    Dim dv = getShape(cast<RankedTensorType>(args.tensor(2).getType()))[3];
    if (dk == getShape(cast<RankedTensorType>(args.tensor(1).getType()))[3] &&
        dv != dk) {
      gen.getDiags().error(
          args.locs[2],
          "attention's value heads are " + formatDim(dv) +
              " wide and its query and key heads " + formatDim(dk) +
              ": the fused attention takes one head size",
          "write the attention out, matmul(softmax(masked_fill(matmul(q, "
          "transpose(k)) * scale, !mask, -1e9)), v), which takes any value "
          "width (txc leaves it unfused)");
      return {};
    }
  }
  // Not given: 1 / sqrt(d_k). A given 0 stays 0, for the verifier to refuse.
  bool scaleGiven = args.values[4].constant->isNumber();
  double scale = scaleGiven ? args.number(4) : 0.0;
  if (!scaleGiven) {
    std::optional<int64_t> dk = gen.staticDim(call.getLoc(), q, -1, "attention");
    if (!dk)
      return {};
    scale = 1.0 / std::sqrt(static_cast<double>(*dk));
  } else if (float inF32 = float(scale); std::isfinite(scale) && scale != 0.0 &&
                                         (inF32 == 0.0f || std::isinf(inF32))) {
    // As written: the verifier saw the f32 and said "got 0" of 1e-46.
    gen.getDiags().error(args.locs[4],
                         "attention scale " + args.values[4].constant->str() +
                             " is " + (inF32 == 0.0f ? "0" : "infinite") +
                             " in f32, where the scores are scaled",
                         "a scale must be finite and non-zero in f32 (from "
                         "about 1.4e-45 to 3.4e38 in magnitude)");
    return {};
  }
  SmallVector<Value> operands = {q, args.tensor(1), args.tensor(2)};
  bool hasMask = args.values[3].isTensor();
  if (hasMask)
    operands.push_back(args.tensor(3));
  if (badRate(gen, args, 6, "attention dropout"))
    return {};
  OpBuilder &b = gen.getBuilder();
  SmallVector<NamedAttribute> attrs = {f32Attr(gen, "scale", scale),
                                       f32Attr(gen, "dropout", args.number(6))};
  if (args.flag(5)) {
    attrs.push_back(b.getNamedAttr("causal", b.getUnitAttr()));
    // The causal mask aligns the last query with the last key (what a
    // KV cache needs); with queries and keys of one length that is
    // PyTorch's is_causal, otherwise it is not: say so.
    auto qType = dyn_cast<RankedTensorType>(q.getType());
    auto kType = dyn_cast<RankedTensorType>(args.tensor(1).getType());
    if (qType && kType && qType.getRank() >= 2 && kType.getRank() >= 2) {
      Dim queries = getShape(qType)[qType.getRank() - 2];
      Dim keys = getShape(kType)[kType.getRank() - 2];
      if (!(queries == keys))
        gen.getDiags().warning(
            args.locs[5],
            "causal = true with queries and keys of different lengths (" +
                formatType(qType) + " and " + formatType(kType) +
                ") aligns the last query with the last key: query i sees "
                "keys j <= i + S - T, as FlashAttention and PyTorch's "
                "causal_lower_right (PyTorch's is_causal aligns the first "
                "ones: j <= i)",
            "for j <= i, leave causal out and give the mask "
            "`arange(T)[:, None] >= arange(S)[None, :]` (and it with the "
            "others)");
    }
  }
  return gen.createValue<AttentionOp>(call.getLoc(), operands, attrs);
}

//===----------------------------------------------------------------------===//
// Tensor math (the math functions of §4 with a tensor argument; TxMathOps.td)
//===----------------------------------------------------------------------===//

/// `value` as an f32 tensor: a tensor must be f32, a number becomes a 0-d
/// constant. Reports at `loc` and returns null otherwise.
Value f32Operand(MLIRGenImpl &gen, const Val &value, SourceLoc loc,
                 StringRef what) {
  if (value.isConst())
    return gen.materialize(loc, *value.constant, gen.getBuilder().getF32Type());
  auto type = cast<RankedTensorType>(value.tensor.getType());
  if (!type.getElementType().isF32()) {
    gen.getDiags().error(loc,
                         what.str() + " must be f32, got " + formatType(type));
    return nullptr;
  }
  return value.tensor;
}

/// `float(x)` of an i32 or bool tensor (numbers are folded by ConstEval).
Val genToFloat(MLIRGenImpl &gen, const ast::CallExpr &call,
               const BoundArgs &args) {
  const Val &value = args.values[0];
  if (value.isConst())
    return Val::of(f32Operand(gen, value, args.locs[0], "float"));
  auto type = cast<RankedTensorType>(value.tensor.getType());
  Type element = type.getElementType();
  if (element.isF32())
    return value;
  if (!element.isInteger(32) && !element.isInteger(1)) {
    gen.getDiags().error(args.locs[0], "the argument of 'float' must be an "
                                       "i32 or bool tensor, got " +
                                           formatType(type));
    return {};
  }
  return gen.createValue<ToFloatOp>(call.getLoc(), value.tensor);
}

/// A unary math function: its argument must be an f32 tensor.
template <typename OpTy>
Val genMath(MLIRGenImpl &gen, const ast::CallExpr &call,
            const BoundArgs &args) {
  Value x = f32Operand(gen, args.values[0], args.locs[0],
                       "the argument of '" + call.callee + "'");
  return x ? gen.createValue<OpTy>(call.getLoc(), x) : Val{};
}

Val genGelu(MLIRGenImpl &gen, const ast::CallExpr &call,
            const BoundArgs &args) {
  Value x = f32Operand(gen, args.values[0], args.locs[0],
                       "the argument of 'gelu'");
  if (!x)
    return {};
  if (args.flag(1))
    return gen.createValue<GeluTanhOp>(call.getLoc(), x);
  return gen.createValue<GeluOp>(call.getLoc(), x);
}

Val genPow(MLIRGenImpl &gen, const ast::CallExpr &call,
           const BoundArgs &args) {
  Value x = f32Operand(gen, args.values[0], args.locs[0],
                       "the base of 'pow'");
  if (!x)
    return {};
  return gen.createValue<PowOp>(call.getLoc(), x,
                                {f32Attr(gen, "exponent", args.number(1))});
}

/// Element-wise min / max: at least one argument is a tensor (two numbers
/// are folded by the compile-time `min` / `max`).
template <typename OpTy>
Val genExtremum(MLIRGenImpl &gen, const ast::CallExpr &call,
                const BoundArgs &args) {
  std::string what = "an argument of '" + call.callee + "'";
  Value a = f32Operand(gen, args.values[0], args.locs[0], what);
  Value b = f32Operand(gen, args.values[1], args.locs[1], what);
  if (!a || !b)
    return {};
  return gen.createValue<OpTy>(call.getLoc(), {a, b});
}

Val genClamp(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  Value x = f32Operand(gen, args.values[0], args.locs[0],
                       "the argument of 'clamp'");
  if (!x)
    return {};
  // An absent bound keeps the default `false` (a bound is a number).
  auto given = [&](size_t i) { return args.values[i].constant->isNumber(); };
  if (!given(1) && !given(2)) {
    gen.getDiags().error(call.getLoc(), "clamp needs a min or a max bound",
                         "e.g. `clamp(x, min = 0.0)` or `clamp(x, -1, 1)`");
    return {};
  }
  if (given(1) && given(2) && args.number(1) > args.number(2)) {
    gen.getDiags().error(args.locs[1],
                         "clamp min " + args.values[1].constant->str() +
                             " is greater than max " +
                             args.values[2].constant->str());
    return {};
  }
  SmallVector<NamedAttribute> attrs;
  if (given(1))
    attrs.push_back(f32Attr(gen, "min", args.number(1)));
  if (given(2))
    attrs.push_back(f32Attr(gen, "max", args.number(2)));
  return gen.createValue<ClampOp>(call.getLoc(), x, attrs);
}

Val genWhere(MLIRGenImpl &gen, const ast::CallExpr &call,
             const BoundArgs &args) {
  Value cond = args.tensor(0);
  if (!cast<RankedTensorType>(cond.getType()).getElementType().isInteger(1)) {
    gen.getDiags().error(args.locs[0],
                         "the condition of 'where' must be a bool tensor, "
                         "got " + formatType(cond.getType()),
                         "compare to make one: `where(x > 0, x, 0.0)`");
    return {};
  }
  Value a = f32Operand(gen, args.values[1], args.locs[1],
                       "a value of 'where'");
  Value b = f32Operand(gen, args.values[2], args.locs[2],
                       "a value of 'where'");
  if (!a || !b)
    return {};
  return gen.createValue<WhereOp>(call.getLoc(), {cond, a, b});
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const std::vector<Builtin> &builtins() {
  static const std::vector<Builtin> table = {
      {"linear",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"out_features", ArgKind::Int, {}},
        {"bias", ArgKind::Bool, B(true)}},
       genLinear,
       /*createsParameters=*/true},
      {"embedding",
       {{"ids", ArgKind::Tensor, {}},
        {"vocab", ArgKind::Int, {}},
        {"dim", ArgKind::Int, {}}},
       genEmbedding,
       true},
      {"rope",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"base", ArgKind::Number, F(10000.0)},
        {"rotary_dim", ArgKind::Int, I(0)}},
       genRope},
      {"rms_norm",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"eps", ArgKind::Number, F(1e-6)}},
       genRmsNorm,
       true},
      {"param",
       {{"init", ArgKind::Name, I(0)}, {"std", ArgKind::Number, B(false)}},
       genParam,
       /*createsParameters=*/true,
       /*variadic=*/true,
       /*restFirst=*/true},
      {"layer_norm",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"eps", ArgKind::Number, F(1e-5)},
        {"bias", ArgKind::Bool, B(true)}},
       genLayerNorm,
       true},
      {"positional_encoding",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32}},
       genPositionalEncoding},
      {"matmul",
       {{"a", ArgKind::Tensor, {}, ElemKind::F32},
        {"b", ArgKind::Tensor, {}, ElemKind::F32}},
       genMatmul},
      {"transpose",
       {{"x", ArgKind::Tensor, {}},
        {"dim0", ArgKind::Int, B(false)},
        {"dim1", ArgKind::Int, B(false)}},
       genTranspose},
      {"reshape",
       {{"x", ArgKind::Tensor, {}}},
       genReshape,
       false,
       /*variadic=*/true},
      {"split_heads",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32}, {"heads", ArgKind::Int, {}}},
       genSplitHeads},
      {"merge_heads",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32}},
       genMergeHeads},
      {"softmax",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"axis", ArgKind::Int, I(-1)}},
       genSoftmaxLike<SoftmaxOp>},
      {"log_softmax",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"axis", ArgKind::Int, I(-1)}},
       genSoftmaxLike<LogSoftmaxOp>},
      {"relu", {{"x", ArgKind::Tensor, {}, ElemKind::F32}}, genUnary<ReluOp>},
      {"gelu",
       {{"x", ArgKind::Tensor, {}}, {"tanh", ArgKind::Bool, B(false)}},
       genGelu},
      // Math functions; with numbers only they are folded by ConstEval
      // before a call reaches this table.
      {"exp", {{"x", ArgKind::Tensor, {}}}, genMath<ExpOp>},
      {"log", {{"x", ArgKind::Tensor, {}}}, genMath<LogOp>},
      {"sqrt", {{"x", ArgKind::Tensor, {}}}, genMath<SqrtOp>},
      {"rsqrt", {{"x", ArgKind::Tensor, {}}}, genMath<RsqrtOp>},
      {"abs", {{"x", ArgKind::Tensor, {}}}, genMath<AbsOp>},
      {"tanh", {{"x", ArgKind::Tensor, {}}}, genMath<TanhOp>},
      {"cos", {{"x", ArgKind::Tensor, {}}}, genMath<CosOp>},
      {"float", {{"x", ArgKind::Tensor, {}}}, genToFloat},
      {"sin", {{"x", ArgKind::Tensor, {}}}, genMath<SinOp>},
      {"sigmoid", {{"x", ArgKind::Tensor, {}}}, genMath<SigmoidOp>},
      {"silu", {{"x", ArgKind::Tensor, {}}}, genMath<SiluOp>},
      {"pow",
       {{"x", ArgKind::Tensor, {}}, {"exponent", ArgKind::Number, {}}},
       genPow},
      {"min",
       {{"a", ArgKind::TensorOrNumber, {}}, {"b", ArgKind::TensorOrNumber, {}}},
       genExtremum<MinimumOp>},
      {"max",
       {{"a", ArgKind::TensorOrNumber, {}}, {"b", ArgKind::TensorOrNumber, {}}},
       genExtremum<MaximumOp>},
      {"clamp",
       {{"x", ArgKind::Tensor, {}},
        {"min", ArgKind::Number, B(false)},
        {"max", ArgKind::Number, B(false)}},
       genClamp},
      {"where",
       {{"cond", ArgKind::Tensor, {}},
        {"a", ArgKind::TensorOrNumber, {}},
        {"b", ArgKind::TensorOrNumber, {}}},
       genWhere},
      {"dropout",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"rate", ArgKind::Number, {}}},
       genDropout},
      {"stop_gradient",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32}},
       genStopGradient},
      {"scale",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"factor", ArgKind::Number, {}}},
       genScale},
      {"masked_fill",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"mask", ArgKind::Tensor, {}, ElemKind::Bool},
        {"value", ArgKind::Number, {}}},
       genMaskedFill},
      {"padding_mask",
       {{"ids", ArgKind::Tensor, {}, ElemKind::I32},
        {"pad", ArgKind::Int, I(0)}},
       genPaddingMask},
      {"causal_mask", {{"ids", ArgKind::Tensor, {}}}, genCausalMask},
      {"reduce_sum",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"axis", ArgKind::Int, I(-1)},
        {"keepdim", ArgKind::Bool, B(false)}},
       genReduce<ReduceSumOp>},
      {"reduce_mean",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"axis", ArgKind::Int, I(-1)},
        {"keepdim", ArgKind::Bool, B(false)}},
       genReduce<ReduceMeanOp>},
      {"reduce_max",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"axis", ArgKind::Int, I(-1)},
        {"keepdim", ArgKind::Bool, B(false)}},
       genReduce<ReduceMaxOp>},
      {"argmax",
       {{"x", ArgKind::Tensor, {}, ElemKind::F32},
        {"axis", ArgKind::Int, I(-1)},
        {"keepdim", ArgKind::Bool, B(false)}},
       genArgmax},
      {"cross_entropy",
       {{"logits", ArgKind::Tensor, {}, ElemKind::F32},
        {"targets", ArgKind::Tensor, {}, ElemKind::I32},
        {"ignore_index", ArgKind::Int, I(-100)},
        {"label_smoothing", ArgKind::Number, F(0.0)}},
       genCrossEntropy},
      {"attention",
       {{"q", ArgKind::Tensor, {}, ElemKind::F32},
        {"k", ArgKind::Tensor, {}, ElemKind::F32},
        {"v", ArgKind::Tensor, {}, ElemKind::F32},
        {"mask", ArgKind::Tensor, B(false), ElemKind::Bool},
        {"scale", ArgKind::Number, B(false)},
        {"causal", ArgKind::Bool, B(false)},
        {"dropout", ArgKind::Number, F(0.0)}},
       genAttention},
  };
  return table;
}

} // namespace

const Builtin *txc::detail::lookupBuiltin(llvm::StringRef name) {
  for (const std::vector<Builtin> *table : {&builtins(), &indexBuiltins()})
    for (const Builtin &builtin : *table)
      if (name == builtin.name)
        return &builtin;
  return nullptr;
}

std::vector<std::string> txc::detail::builtinNames() {
  std::vector<std::string> names;
  for (const std::vector<Builtin> *table : {&builtins(), &indexBuiltins()})
    for (const Builtin &builtin : *table)
      names.push_back(builtin.name);
  return names;
}

bool txc::detail::isConstFunction(llvm::StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases("sqrt", "exp", "log", "min", "max", true)
      .Cases("abs", "int", "float", "pow", "cos", true)
      .Case("sin", true)
      .Default(false);
}
