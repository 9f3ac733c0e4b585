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
//===----------------------------------------------------------------------===//
#include "txc/Transforms/DeadOps.h"
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxRoles.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"

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
/// directly or through a tx.rope (`rotary`).
LinearOp projection(Value operand, bool &rotary) {
  auto split = operand.getDefiningOp<SplitHeadsOp>();
  if (!split || !split->hasOneUse())
    return nullptr;
  Value source = split.getInput();
  rotary = false;
  if (auto rope = source.getDefiningOp<RopeOp>()) {
    if (!rope->hasOneUse())
      return nullptr;
    rotary = true;
    source = rope.getInput();
  }
  auto linear = source.getDefiningOp<LinearOp>();
  return linear && linear->hasOneUse() ? linear : nullptr;
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

/// The attentions of `decode`, or failure with the reason when the entry
/// cannot decode incrementally.
FailureOr<SmallVector<Attention>> analyze(func::FuncOp decode,
                                          std::string &why) {
  SmallVector<Attention> attentions;
  WalkResult result = decode.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp>(op))
      return WalkResult::advance();
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      bool rotaryValues = false;
      Attention a{attention, projection(attention.getKey(), a.rotaryKeys),
                  projection(attention.getValue(), rotaryValues)};
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
        why = "a self-attention is not causal";
        return WalkResult::interrupt();
      }
      // The step drops a self-attention's mask (a decoded prefix has no
      // padding): only a padding mask may be dropped.
      if (!a.cross && attention.getMask() &&
          !attention.getMask().getDefiningOp<PaddingMaskOp>()) {
        why = "a self-attention's mask is not a padding mask";
        return WalkResult::interrupt();
      }
      attentions.push_back(a);
      return WalkResult::advance();
    }
    if (auto mask = dyn_cast<PaddingMaskOp>(op)) {
      for (Operation *user : mask->getUsers())
        if (!isa<AttentionOp>(user)) {
          why = "a padding mask is used outside attention";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    }
    if (auto softmax = dyn_cast<SoftmaxOp>(op))
      if (static_cast<int64_t>(softmax.getAxis()) == -1)
        return WalkResult::advance();
    if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
      if (static_cast<int64_t>(softmax.getAxis()) == -1)
        return WalkResult::advance();
    // A rope with an angle table (written out): its table is indexed by
    // position from 0, not from the cache offset.
    if (auto rope = dyn_cast<RopeOp>(op); rope && rope.getAngles()) {
      why = "a rotary embedding with its own angle table";
      return WalkResult::interrupt();
    }
    // Ops that treat every position on its own.
    if (isa<ParamOp, ConstantOp, EmbeddingOp, PositionalEncodingOp, AddOp,
            SubOp, MulOp, DivOp, NegOp, ScaleOp, ReluOp, GeluOp, DropoutOp,
            LinearOp, SplitHeadsOp, MergeHeadsOp, LayerNormOp,
            AddLayerNormOp, RmsNormOp, AddRmsNormOp, RopeOp>(op))
      return WalkResult::advance();
    // Indexing (TxIndexOps.td) that leaves positions alone: concat and
    // split cut static axes only, a slice that keeps every symbolic axis
    // whole, a gather along a static axis (`wte[ids]`, `x[..., idx]`).
    // Slices that make positions (`wpe[:T]`) and arange would need the
    // cache offset, and a gather along a symbolic axis mixes positions.
    if (isa<ConcatOp, SplitOp>(op))
      return WalkResult::advance();
    if (auto slice = dyn_cast<SliceOp>(op))
      if (keepsSymbolicAxes(slice))
        return WalkResult::advance();
    if (auto gather = dyn_cast<GatherOp>(op)) {
      Shape in = getShape(cast<RankedTensorType>(gather.getInput().getType()));
      int64_t axis = static_cast<int64_t>(gather.getAxis());
      if (!in[axis < 0 ? axis + int64_t(in.size()) : axis].isSymbolic())
        return WalkResult::advance();
    }
    // Tensor math (TxMathOps.td) is element-wise too.
    if (isa<ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, TanhOp, CosOp, SinOp,
            SigmoidOp, SiluOp,
            GeluTanhOp, PowOp, MinimumOp, MaximumOp, ClampOp>(op))
      return WalkResult::advance();
    why = "'" + op->getName().getStringRef().str() +
          "' may mix positions";
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  if (attentions.empty()) {
    why = "it has no attention";
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
  step.walk([&](Operation *op) {
    if (isa<PositionalEncodingOp, RopeOp>(op))
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

struct DecodeStepPass : mlir::tx::impl::DecodeStepPassBase<DecodeStepPass> {
  using DecodeStepPassBase::DecodeStepPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
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
      if (verbose)
        llvm::errs() << "tx-decode-step: no incremental decoding for @decode: "
                     << why << "\n";
      return;
    }
    // The cache dim is bounded like the self-attention's key length.
    Dim cacheDim;
    bool hasCross = false;
    for (Attention a : *attentions) {
      hasCross |= a.cross;
      if (!a.cross)
        cacheDim = getShape(cast<RankedTensorType>(a.key.getType()))[1];
    }
    if (!cacheDim.isSymbolic()) {
      if (verbose)
        llvm::errs() << "tx-decode-step: no incremental decoding for @decode: "
                        "the target length is not a symbolic dim\n";
      return;
    }
    MLIRContext *context = module.getContext();
    cacheDim = Dim::symbolic(StringAttr::get(context, kCacheDim), cacheDim.bound);
    SmallVector<NamedAttribute> dims;
    if (auto existing = module->getAttrOfType<DictionaryAttr>("tx.dims")) {
      if (existing.get(kCacheDim)) {
        if (verbose)
          llvm::errs() << "tx-decode-step: the spec already has a dim named '"
                       << kCacheDim << "'\n";
        return;
      }
      dims.assign(existing.begin(), existing.end());
    }
    dims.push_back(NamedAttribute(
        StringAttr::get(context, kCacheDim),
        IntegerAttr::get(IntegerType::get(context, 64), cacheDim.bound)));
    module->setAttr("tx.dims", DictionaryAttr::get(context, dims));
    func::FuncOp step = buildStep(module, decode, cacheDim);
    if (hasCross)
      buildInit(module, decode, *attentions, step);
  }
};

} // namespace
