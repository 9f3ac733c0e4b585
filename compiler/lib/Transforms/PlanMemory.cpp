//===- PlanMemory.cpp - arena offsets for every tensor from liveness ------===//
//
// tx-plan-memory: parameters are laid out in a parameter arena, and in each
// entry every intermediate tensor gets a fixed offset in one activation
// arena. Sizes come from the upper bounds of symbolic dimensions, lifetimes
// from the (single-block) program order, and placement (placeInArena,
// PlanMemoryPlacement.cpp) is a best fit among the gaps the buffers whose
// lifetimes overlap leave: largest first for entries of up to
// kExactBestFitBuffers buffers, in program order above.
// `tx.reshape` shares its operand's buffer, and so does a contiguous slice
// or split piece, at an offset inside it; element-wise ops whose first
// operand dies at them write in place. Every size, offset and total is
// computed with checked arithmetic: a tensor over the size limits
// (TxShape.h) or an arena over kMaxArenaBytes is an error at the op or
// parameter that needs it, never a wrapped number.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/MemoryPlan.h"
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::tx {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

static constexpr StringLiteral kOffsetsAttr = "tx.offsets";
static constexpr StringLiteral kArenaBytesAttr = "tx.arena_bytes";
static constexpr StringLiteral kTensorBytesAttr = "tx.tensor_bytes";
static constexpr StringLiteral kOutputTensorBytesAttr =
    "tx.output_tensor_bytes";

std::optional<int64_t> mlir::tx::getUpperBoundBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  Shape shape = getShape(tensor);
  if (!checkSizeLimits(shape).empty())
    return std::nullopt;
  Type element = tensor.getElementType();
  int64_t elementBytes =
      element.isInteger(1) ? 1 : (element.getIntOrFloatBitWidth() + 7) / 8;
  std::optional<int64_t> elements = upperBoundNumElements(shape);
  if (!elements)
    return std::nullopt;
  return llvm::checkedMul(*elements, elementBytes);
}

std::optional<int64_t> mlir::tx::getPlannedOffset(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return std::nullopt;
  auto offsets =
      result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
  if (!offsets || result.getResultNumber() >= offsets.size())
    return std::nullopt;
  int64_t offset = offsets[result.getResultNumber()];
  if (offset < 0)
    return std::nullopt;
  return offset;
}

std::optional<int64_t> mlir::tx::getPlannedOutput(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return std::nullopt;
  auto offsets =
      result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
  if (!offsets || result.getResultNumber() >= offsets.size())
    return std::nullopt;
  int64_t offset = offsets[result.getResultNumber()];
  if (offset > -2)
    return std::nullopt;
  return -2 - offset;
}

/// A transpose of the last two dimensions, or a split_heads, whose every use
/// reads it through strides (matmul, attention, or another such view): it
/// needs no copy, so it emits no code.
bool mlir::tx::isStridedView(Operation *op) {
  // merge_heads of a matmul used only there: the matmul writes the merged
  // [B, T, h*d] layout directly. The same for a result of fused attention
  // (O, or dQ / dK / dV) that only merge_heads and attention_grad read: the
  // kernels write and read [B, T, h*d] (tx-attention-layout routes every
  // other reader through merge_heads), so the merge is no copy.
  if (auto merge = dyn_cast<MergeHeadsOp>(op)) {
    Value input = merge.getInput();
    if (auto matmul = input.getDefiningOp<MatmulOp>())
      return matmul->hasOneUse() &&
             cast<RankedTensorType>(matmul.getType()).getRank() == 4;
    Operation *producer = input.getDefiningOp();
    bool fromAttention =
        isa_and_nonnull<AttentionOp, AttentionGradOp>(producer) ||
        (isa_and_nonnull<AttentionTrainOp>(producer) &&
         input == producer->getResult(0));
    return fromAttention &&
           llvm::all_of(input.getUsers(), [](Operation *user) {
             return isa<MergeHeadsOp, AttentionGradOp>(user);
           });
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    int64_t rank = perm.size();
    if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
      return false;
    for (int64_t i = 0; i < rank - 2; ++i)
      if (perm[i] != i)
        return false;
  } else if (!isa<SplitHeadsOp>(op)) {
    return false;
  }
  if (op->use_empty())
    return false;
  auto isAttention = [](Operation *user) {
    return isa<AttentionOp, AttentionTrainOp, AttentionGradOp>(user);
  };
  for (Operation *user : op->getUsers()) {
    bool attentionReads = isAttention(user) && isa<SplitHeadsOp>(op);
    if (!isa<MatmulOp>(user) && !attentionReads && !isStridedView(user))
      return false;
    // Attention reads split_heads operands only, never transposed ones.
    if (isa<TransposeOp>(op) && isStridedView(user) &&
        llvm::any_of(user->getUsers(), isAttention))
      return false;
  }
  return true;
}

bool mlir::tx::isOffsetView(Operation *op) {
  if (auto slice = dyn_cast<SliceOp>(op))
    return slice.isContiguous();
  if (auto split = dyn_cast<SplitOp>(op))
    return split.isContiguous();
  return false;
}

namespace {

/// `bytes` rounded up to a multiple of `alignment`, or nullopt on overflow.
std::optional<int64_t> alignTo(int64_t bytes, int64_t alignment) {
  std::optional<int64_t> padded = llvm::checkedAdd(bytes, alignment - 1);
  if (!padded)
    return std::nullopt;
  return *padded / alignment * alignment;
}

/// `bytes` aligned and added to `total` when the result stays within
/// kMaxArenaBytes.
std::optional<int64_t> addWithinArena(int64_t total, int64_t bytes,
                                      int64_t alignment) {
  std::optional<int64_t> aligned = alignTo(bytes, alignment);
  if (!aligned)
    return std::nullopt;
  std::optional<int64_t> sum = llvm::checkedAdd(total, *aligned);
  if (!sum || *sum > kMaxArenaBytes)
    return std::nullopt;
  return sum;
}

/// The distance between the starts of the parameter arena's training
/// regions (parameters, gradients, Adam's first and second moments), for
/// parameters taking `paramBytes`: that size rounded up to 4 KiB, plus a
/// skew of 1 KiB (or `alignment`, if larger). A parameter, its gradient and
/// its moments then start 1, 2 and 3 KiB apart modulo 4 KiB: aligned alike,
/// Adam's seven streams over them alias in the L1 cache's sets and its
/// update ran 1.5-3x slower (docs/benchmarks.md). nullopt on overflow.
std::optional<int64_t> trainingRegionStride(int64_t paramBytes,
                                            int64_t alignment) {
  constexpr int64_t kPage = 4096, kSkew = 1024;
  std::optional<int64_t> rounded =
      alignTo(paramBytes, std::max(kPage, alignment));
  if (!rounded)
    return std::nullopt;
  return llvm::checkedAdd(*rounded, std::max(kSkew, alignment));
}

/// Why `type` cannot be planned: the phrase of checkSizeLimits.
std::string whyUnplannable(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::string why = tensor ? checkSizeLimits(getShape(tensor)) : "";
  return why.empty() ? "has more bytes than int64 can count" : why;
}

/// Ops whose result may take the buffer of their first operand.
bool writesInPlace(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, NegOp, ReluOp, GeluOp, ScaleOp,
             DropoutOp, MaskedFillOp, NotOp, DropoutGradOp>(op) ||
         // Tensor math (TxMathOps.td), element-wise glue too.
         isa<ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, TanhOp, CosOp, SinOp,
             SigmoidOp, SiluOp,
             GeluTanhOp, PowOp, MinimumOp, MaximumOp, ClampOp, UnaryGradOp>(
             op);
}

/// The operand whose buffer the op's first result may take when that operand
/// dies at the op: the first operand of element-wise ops, the residual of a
/// linear and the addend of a linear's gradient (libtxrt accumulates into
/// them), an addend of add + layer / RMS norm.
SmallVector<Value, 2> inPlaceCandidates(Operation *op) {
  if (writesInPlace(op) && op->getNumOperands() > 0)
    return {op->getOperand(0)};
  if (auto linear = dyn_cast<LinearOp>(op))
    if (Value residual = linear.getResidual())
      return {residual};
  if (auto grad = dyn_cast<LinearGradOp>(op))
    if (Value addend = grad.getAddend())
      return {addend};
  if (auto norm = dyn_cast<AddLayerNormOp>(op))
    return {norm.getLhs(), norm.getRhs()};
  if (auto norm = dyn_cast<AddRmsNormOp>(op))
    return {norm.getLhs(), norm.getRhs()};
  return {};
}

/// Whether `op` is a tx.cast of a parameter read whose result is the
/// parameter's bf16 copy in the parameter arena (tx-precision marked the
/// parameter bf16_copy, and `bf16Copies` holds its name; planBf16Copies
/// places the copy).
bool readsBf16Copy(Operation *op, const llvm::DenseSet<StringAttr> &bf16Copies) {
  auto cast = dyn_cast<CastOp>(op);
  auto param = cast ? cast.getInput().getDefiningOp<ParamOp>() : ParamOp();
  return param && bf16Copies.contains(param.getNameAttr().getAttr());
}

/// Values that live outside the activation arena.
bool needsNoBuffer(Operation *op,
                   const llvm::DenseSet<StringAttr> &bf16Copies) {
  return isa<ParamOp, ConstantOp>(op) || readsBf16Copy(op, bf16Copies);
}

/// Program positions of one entry: op index and the last use of each value.
struct Liveness {
  explicit Liveness(func::FuncOp func) {
    int64_t i = 0;
    for (Operation &op : func.front())
      index[&op] = i++;
    for (Operation &op : func.front())
      for (Value result : op.getResults()) {
        int64_t last = index[&op];
        for (Operation *user : result.getUsers()) {
          Operation *top = func.front().findAncestorOpInBlock(*user);
          if (top)
            last = std::max(last, index[top]);
        }
        lastUse[result] = last;
      }
  }
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Value, int64_t> lastUse;
};

/// Where the buffers of `op`'s results start: at the op, or, for a cast
/// its producer writes (tx.cast by_producer), at the producer, so that the
/// cast's buffer shares no memory with what the producer reads.
int64_t startOf(Operation *op, Liveness &liveness) {
  if (auto castOp = dyn_cast<CastOp>(op))
    if (castOp.getByProducer())
      if (Operation *producer = castOp.getInput().getDefiningOp())
        if (liveness.index.count(producer))
          return liveness.index[producer];
  return liveness.index[op];
}

struct Buffer {
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
  int64_t offset = -1;
  int64_t output = -1; ///< the entry output that holds it, or -1 (arena)
  SmallVector<Value> values;
};

struct PlanMemoryPass : mlir::tx::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;

  void runOnOperation() override {
    if (alignment <= 0 || (alignment & (alignment - 1))) {
      getOperation().emitError("tx-plan-memory: alignment must be a power of "
                               "two, got ")
          << static_cast<int64_t>(alignment.getValue());
      return signalPassFailure();
    }
    if (failed(planParameters()) || failed(planBf16Copies()))
      return signalPassFailure();
    // Names of the parameters with a bf16 copy, looked up once: a symbol
    // lookup per parameter read scans the module (quadratic in depth).
    for (auto param : getOperation().getOps<ParameterOp>())
      if (param->hasAttr("bf16_copy"))
        bf16Copies.insert(param.getSymNameAttr());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr("tx.entry") || func.isExternal())
        continue;
      if (!llvm::hasSingleElement(func.getBody())) {
        func.emitError("tx-plan-memory: entries must have a single block");
        return signalPassFailure();
      }
      if (failed(planEntry(func)))
        return signalPassFailure();
    }
  }

  LogicalResult planParameters() {
    ModuleOp module = getOperation();
    OpBuilder builder(module.getContext());
    int64_t offset = 0;
    for (auto param : module.getOps<ParameterOp>()) {
      param->setAttr("offset", builder.getI64IntegerAttr(offset));
      std::optional<int64_t> bytes = getUpperBoundBytes(param.getType());
      if (!bytes)
        return param.emitError("parameter '")
               << param.getSymName() << "', " << formatType(param.getType())
               << ", " << whyUnplannable(param.getType());
      std::optional<int64_t> end = addWithinArena(offset, *bytes, alignment);
      if (!end)
        return param.emitError("the parameter arena would exceed ")
               << kMaxArenaBytes << " bytes (2^48, the limit) at parameter '"
               << param.getSymName() << "', " << formatType(param.getType());
      offset = *end;
    }
    // A module that trains keeps, after the parameters, a region of the
    // same layout for each of: gradients, Adam's first and second moments,
    // trainingRegionStride bytes apart.
    auto trainer = llvm::find_if(module.getOps<func::FuncOp>(), [](auto func) {
      return func->hasAttr("tx.train_kind");
    });
    bool trains = trainer != module.getOps<func::FuncOp>().end();
    if (trains) {
      std::optional<int64_t> region = trainingRegionStride(offset, alignment);
      if (!region || *region > (kMaxArenaBytes - offset) / 3) {
        std::optional<int64_t> needed;
        if (region)
          if (std::optional<int64_t> regions =
                  llvm::checkedMul(*region, int64_t(3)))
            needed = llvm::checkedAdd(offset, *regions);
        return (*trainer).emitError("the parameter arena with gradients and "
                                    "Adam's two moments would need ")
               << (needed ? std::to_string(*needed) : std::string("over 2^63"))
               << " bytes, over the limit of " << kMaxArenaBytes
               << " (2^48): parameters may take at most a quarter of it";
      }
      for (auto param : module.getOps<ParameterOp>()) {
        int64_t at = param->getAttrOfType<IntegerAttr>("offset").getInt();
        param->setAttr("grad_offset", builder.getI64IntegerAttr(at + *region));
        param->setAttr("exp_avg_offset",
                       builder.getI64IntegerAttr(at + 2 * *region));
        param->setAttr("exp_avg_sq_offset",
                       builder.getI64IntegerAttr(at + 3 * *region));
      }
      offset += 3 * *region;
    }
    module->setAttr("tx.param_arena_bytes", builder.getI64IntegerAttr(offset));
    return success();
  }

  /// After everything planParameters placed: the bf16 copy of each
  /// parameter tx-precision marked ("bf16_copy"), at "bf16_offset".
  /// Checkpoints never hold them: the Adam step and the driver write them.
  LogicalResult planBf16Copies() {
    ModuleOp module = getOperation();
    OpBuilder builder(module.getContext());
    int64_t offset =
        module->getAttrOfType<IntegerAttr>("tx.param_arena_bytes").getInt();
    for (auto param : module.getOps<ParameterOp>()) {
      if (!param->hasAttr("bf16_copy"))
        continue;
      RankedTensorType copy =
          param.getTensorType().clone(builder.getBF16Type());
      std::optional<int64_t> bytes = getUpperBoundBytes(copy);
      std::optional<int64_t> end =
          bytes ? addWithinArena(offset, *bytes, alignment) : std::nullopt;
      if (!end)
        return param.emitError("the parameter arena would exceed ")
               << kMaxArenaBytes << " bytes (2^48, the limit) at the bf16 "
               << "copy of '" << param.getSymName() << "'";
      param->setAttr("bf16_offset", builder.getI64IntegerAttr(offset));
      offset = *end;
    }
    module->setAttr("tx.param_arena_bytes", builder.getI64IntegerAttr(offset));
    return success();
  }

  llvm::DenseSet<StringAttr> bf16Copies;

  LogicalResult planEntry(func::FuncOp func) {
    Liveness liveness(func);
    std::vector<Buffer> buffers;
    llvm::DenseMap<Value, size_t> bufferOf;
    // Every result's aligned size: bounds the sums below (int64).
    int64_t alignedBytes = 0;

    // Sizes were checked (in the loop below) before buffers start.
    auto startBuffer = [&](Value value, int64_t at) {
      Buffer buffer;
      buffer.bytes =
          *alignTo(std::max<int64_t>(*getUpperBoundBytes(value.getType()), 1),
                   alignment);
      buffer.start = at;
      buffer.end = std::max(at, liveness.lastUse[value]);
      buffer.values.push_back(value);
      bufferOf[value] = buffers.size();
      buffers.push_back(buffer);
    };
    // Whether `op` reads `buffer` through an operand other than the
    // in-place candidate `candidate`. Writing the result over the candidate
    // is then unsound unless the op is element-wise and reads the other
    // operand element for element as the candidate (it is the same value):
    // a linear whose residual is also its input (`linear(h) + h`) would
    // overwrite rows of h that its product still reads (wrong outputs before
    // this check: test/E2E/linear-residual-is-input.test). Add + layer / RMS
    // norm add their operands element for element before writing a row.
    auto readsBufferElsewhere = [&](Operation &op, Value candidate,
                                    size_t buffer) {
      bool elementWise =
          writesInPlace(&op) || isa<AddLayerNormOp, AddRmsNormOp>(op);
      bool candidateSeen = false;
      for (Value operand : op.getOperands()) {
        if (operand == candidate && !candidateSeen) {
          candidateSeen = true;
          continue;
        }
        auto it = bufferOf.find(operand);
        if (it == bufferOf.end() || it->second != buffer)
          continue;
        if (!(elementWise && operand == candidate))
          return true;
      }
      return false;
    };
    auto join = [&](Value value, size_t buffer) {
      buffers[buffer].values.push_back(value);
      buffers[buffer].end =
          std::max(buffers[buffer].end, liveness.lastUse[value]);
      bufferOf[value] = buffer;
    };

    // Views that start inside their buffer rather than at its start.
    llvm::DenseSet<Value> innerViews;
    for (Operation &op : func.front()) {
      if (needsNoBuffer(&op, bf16Copies))
        continue;
      int64_t at = startOf(&op, liveness);
      for (Value result : op.getResults()) {
        if (!isa<RankedTensorType>(result.getType()))
          continue;
        std::optional<int64_t> bytes = getUpperBoundBytes(result.getType());
        if (!bytes)
          return op.emitOpError("result ")
                 << formatType(result.getType()) << " "
                 << whyUnplannable(result.getType());
        std::optional<int64_t> aligned = alignTo(*bytes, alignment);
        std::optional<int64_t> sum =
            aligned ? llvm::checkedAdd(alignedBytes, *aligned) : std::nullopt;
        if (!sum)
          return func.emitError("entry '")
                 << func.getSymName()
                 << "' has more tensor bytes than int64 can count";
        alignedBytes = *sum;
        if (isa<ReshapeOp, CacheWriteOp>(op) || isStridedView(&op) ||
            isOffsetView(&op)) {
          Value source = op.getOperand(0);
          auto it = bufferOf.find(source);
          if (it != bufferOf.end())
            join(result, it->second);
          if (isOffsetView(&op) || innerViews.count(source))
            innerViews.insert(result);
          // A view (reshape, a transpose / split_heads read through
          // strides, a contiguous slice or split piece) of an argument,
          // parameter or constant needs no buffer.
          continue;
        }
        bool joined = false;
        if (result == op.getResult(0))
          for (Value operand : inPlaceCandidates(&op)) {
            // Writing at the buffer's start would not be in place.
            if (operand.getType() != result.getType() ||
                innerViews.count(operand))
              continue;
            auto it = bufferOf.find(operand);
            if (it != bufferOf.end() && buffers[it->second].end <= at &&
                !readsBufferElsewhere(op, operand, it->second)) {
              join(result, it->second);
              joined = true;
              break;
            }
          }
        if (!joined)
          startBuffer(result, at);
      }
    }
    // A returned value is computed straight into the caller's output buffer
    // (with the values that share its buffer in place): no arena space and
    // no final copy.
    auto ret = cast<func::ReturnOp>(func.front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto it = bufferOf.find(value);
      // An inner view is copied out: its buffer holds more than it.
      if (it != bufferOf.end() && buffers[it->second].output < 0 &&
          !innerViews.count(value))
        buffers[it->second].output = i;
    }
    // The buffers in the arena (not in an output) to placeInArena.
    std::vector<size_t> inArena;
    SmallVector<ArenaBuffer> lifetimes;
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].output < 0) {
        inArena.push_back(i);
        lifetimes.push_back({buffers[i].bytes, buffers[i].start, buffers[i].end});
      }
    SmallVector<int64_t> offsets;
    size_t overLimit = 0;
    std::optional<int64_t> arena = placeInArena(lifetimes, offsets, overLimit);
    if (!arena) {
      Value value = buffers[inArena[overLimit]].values.front();
      return emitError(value.getLoc(), "entry '")
             << func.getSymName() << "' needs an activation arena over the "
             << "limit of " << kMaxArenaBytes << " bytes (2^48) to hold "
             << formatType(value.getType()) << " here";
    }
    for (size_t i = 0; i < inArena.size(); ++i)
      buffers[inArena[i]].offset = offsets[i];

    OpBuilder builder(func.getContext());
    for (Operation &op : func.front()) {
      if (op.getNumResults() == 0)
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults()) {
        auto it = bufferOf.find(result);
        if (it == bufferOf.end())
          offsets.push_back(-1);
        else if (buffers[it->second].output >= 0)
          offsets.push_back(-2 - buffers[it->second].output);
        else
          offsets.push_back(buffers[it->second].offset);
      }
      op.setAttr(kOffsetsAttr, builder.getDenseI64ArrayAttr(offsets));
    }
    // The tensors the arena holds, each as if alone: the rows
    // printMemoryPlan lists at an offset (their own bytes; a view of an
    // argument, a parameter or a KV cache holds nothing and has no row).
    // Those computed straight into an output buffer are counted apart: in
    // the arena's total they made an entry of outputs only "0 B for 16 KiB,
    // saving 100 %".
    int64_t tensorBytes = 0, outputBytes = 0;
    for (const auto &[value, buffer] : bufferOf)
      (buffers[buffer].output >= 0 ? outputBytes : tensorBytes) +=
          *getUpperBoundBytes(value.getType());
    func->setAttr(kArenaBytesAttr, builder.getI64IntegerAttr(*arena));
    func->setAttr(kTensorBytesAttr, builder.getI64IntegerAttr(tensorBytes));
    func->setAttr(kOutputTensorBytesAttr,
                  builder.getI64IntegerAttr(outputBytes));
    return success();
  }
};

std::string formatBytes(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= (1 << 20))
    os << llvm::format("%.2f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return text;
}

} // namespace

void mlir::tx::printMemoryPlan(ModuleOp module, llvm::raw_ostream &os) {
  if (auto params = module->getAttrOfType<IntegerAttr>("tx.param_arena_bytes"))
    os << "// parameter arena: " << formatBytes(params.getInt()) << " ("
       << params.getInt() << " B)\n";
  for (auto func : module.getOps<func::FuncOp>()) {
    auto arena = func->getAttrOfType<IntegerAttr>(kArenaBytesAttr);
    auto total = func->getAttrOfType<IntegerAttr>(kTensorBytesAttr);
    if (!arena || !total)
      continue;
    os << "// entry " << func.getSymName() << ": activation arena "
       << formatBytes(arena.getInt()) << " (" << arena.getInt()
       << " B) for tensors totalling " << formatBytes(total.getInt()) << " ("
       << total.getInt() << " B)";
    if (arena.getInt() > 0)
      os << llvm::format(", %.1fx reuse",
                         double(total.getInt()) / double(arena.getInt()));
    if (auto outputs = func->getAttrOfType<IntegerAttr>(kOutputTensorBytesAttr);
        outputs && outputs.getInt() > 0)
      os << "; tensors totalling " << formatBytes(outputs.getInt()) << " ("
         << outputs.getInt() << " B) are computed in the outputs' buffers";
    os << "\n//   " << llvm::left_justify("op", 6) << llvm::left_justify("kind", 24)
       << llvm::left_justify("type", 28) << llvm::right_justify("bytes", 12)
       << llvm::right_justify("offset", 12) << "  live\n";
    Liveness liveness(func);
    for (Operation &op : func.front()) {
      for (Value result : op.getResults()) {
        std::optional<int64_t> offset = getPlannedOffset(result);
        std::optional<int64_t> output = getPlannedOutput(result);
        if (!offset && !output)
          continue;
        int64_t at = liveness.index[&op];
        std::string kind = op.getName().getStringRef().str();
        auto castOp = dyn_cast<CastOp>(op);
        if (castOp && castOp.getByProducer())
          kind += " by_producer";
        os << "//   " << llvm::left_justify("#" + std::to_string(at), 6)
           << llvm::left_justify(kind, 24)
           << llvm::left_justify(formatType(result.getType()), 28)
           << llvm::right_justify(
                  std::to_string(getUpperBoundBytes(result.getType()).value_or(-1)),
                  12)
           << llvm::right_justify(offset ? std::to_string(*offset)
                                         : "out" + std::to_string(*output),
                                  12)
           << "  [" << startOf(&op, liveness) << ", "
           << liveness.lastUse[result] << "]\n";
      }
    }
  }
}
