//===- Autodiff.cpp - reverse-mode differentiation of the train entry -----===//
//
// tx-autodiff: the train entry's loss is differentiated with respect to every
// parameter it reads. The walk goes over the forward ops in reverse; each op
// with a gradient at one of its results builds its operands' gradients
// through DifferentiableOpInterface (dialect/lib/TxVJP.cpp). Only active
// values (those that depend on a parameter) receive gradients; a value with
// several users sums them. A parameter's gradient is final when the walk
// reaches its first read, where a tx.store_grad is emitted, so tx-optimizer
// can update it there and its gradient buffer dies early.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/DeadOps.h"
#include "txc/Transforms/Passes.h"
#include "txc/Transforms/RandomKeys.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tx {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// Whether `value` is available at `op`, both in `block`: an argument of
/// the block or the result of an op before `op`.
bool definedBefore(Value value, Operation *op, Block &block) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &block;
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == &block && def->isBeforeInBlock(op);
}

/// A value with several users sums their gradients; where one of two
/// addends is a linear's input gradient (dy · weight) read by nothing else,
/// the sum becomes that tx.linear_grad's addend: libtxrt's product then
/// accumulates into the other gradient (oneDNN's beta = 1, cuBLASLt's beta)
/// instead of a pass of glue over both. base.tx's step sums 65 such pairs
/// (the residual stream read by Q/K/V, the encoder memory read by every
/// cross-attention's K and V). The addend must already exist where the
/// linear_grad is; otherwise the tx.add stays.
void foldSumsIntoLinearGrads(Block &block) {
  SmallVector<AddOp> adds;
  for (Operation &op : block)
    if (auto add = dyn_cast<AddOp>(op))
      adds.push_back(add);
  for (AddOp add : adds) {
    if (add.getLhs().getType() != add.getType() ||
        add.getRhs().getType() != add.getType())
      continue; // a broadcasting add
    for (int side = 1; side >= 0; --side) {
      Value mine = side ? add.getRhs() : add.getLhs();
      Value other = side ? add.getLhs() : add.getRhs();
      auto grad = mine.getDefiningOp<LinearGradOp>();
      if (!grad || mine != grad.getDinput() || grad.getAddend() ||
          !mine.hasOneUse() || !definedBefore(other, grad, block))
        continue;
      OpBuilder builder(grad);
      auto folded = builder.create<LinearGradOp>(
          grad.getLoc(), grad->getResultTypes(),
          ValueRange{grad.getInput(), grad.getWeight(), grad.getDresult(),
                     other},
          grad->getAttrs());
      add.getResult().replaceAllUsesWith(folded.getDinput());
      add.erase();
      grad.getDweight().replaceAllUsesWith(folded.getDweight());
      grad.getDbias().replaceAllUsesWith(folded.getDbias());
      grad.erase();
      break;
    }
  }
}

/// Replaces `op` by its training form `TrainOp`, which has the same operands
/// and attributes and also saves a statistic (its second result) for the
/// backward.
template <typename TrainOp>
void replaceByTrainingForm(OpBuilder &builder, Operation *op) {
  builder.setInsertionPoint(op);
  auto trained = builder.create<TrainOp>(op->getLoc(), op->getOperands(),
                                         op->getAttrs());
  op->getResult(0).replaceAllUsesWith(trained.getResult());
  op->erase();
}

/// Gives every random op a key (RandomKeys.h: tx-fuse-attention may have
/// keyed them already) and makes attention and the loss save their
/// log-sum-exps.
void prepareForward(func::FuncOp train) {
  OpBuilder builder(train.getContext());
  keyRandomOps(train);
  SmallVector<Operation *> attentions, losses;
  train.walk([&](Operation *op) {
    if (isa<AttentionOp>(op))
      attentions.push_back(op);
    if (isa<CrossEntropyOp>(op))
      losses.push_back(op);
  });
  for (Operation *attention : attentions)
    replaceByTrainingForm<AttentionTrainOp>(builder, attention);
  for (Operation *loss : losses)
    replaceByTrainingForm<CrossEntropyTrainOp>(builder, loss);
}

/// The spec position of `loc` (each call of a def has a location of its
/// own: a name, the scope, wraps the file position).
Location specPlace(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return file;
  return loc;
}

/// The names of the parameters one line makes: all of them, or the first
/// three and the last ("'a', 'b', 'c', ... 'z'").
std::string quotedNames(ArrayRef<StringRef> names) {
  constexpr size_t kShown = 3;
  std::string out = "'" + llvm::join(names.take_front(kShown), "', '") + "'";
  if (names.size() > kShown)
    out += (names.size() > kShown + 1 ? ", ... '" : ", '") +
           names.back().str() + "'";
  return out;
}

/// Warns of the parameters `train` reads but gives no gradient (`found` in
/// reverse program order): one warning for each place that makes them, so
/// a def called in a loop of 24 layers says it once, naming the layers'
/// parameters (it said it 24 times, the last layer first).
void warnNoGradient(func::FuncOp train,
                    ArrayRef<std::pair<Location, StringRef>> found) {
  llvm::MapVector<Location, std::pair<Location, SmallVector<StringRef>>>
      byPlace;
  for (const auto &[loc, name] : llvm::reverse(found))
    byPlace.insert({specPlace(loc), {loc, {}}})
        .first->second.second.push_back(name);
  for (const auto &[place, first] : byPlace) {
    const auto &[loc, names] = first;
    const bool one = names.size() == 1;
    auto warning = emitWarning(loc);
    if (one)
      warning << "parameter " << quotedNames(names) << " gets";
    else
      warning << names.size() << " parameters made here get";
    warning << " no gradient from the loss of '" << train.getSymName() << "'";
    if (!one)
      warning << ": " << quotedNames(names);
    warning << " (" << (one ? "its value reaches" : "their values reach")
            << " the loss only through comparisons, ids, stop_gradient or "
               "nothing at all): training leaves "
            << (one ? "it as it is" : "them as they are")
            << ", as torch.optim does a parameter whose .grad is None";
  }
}

LogicalResult differentiate(func::FuncOp train) {
  // The spec language writes one block (loops are scf); the first block's
  // branch was read as the return ("the loss is f32[4]" of its operand).
  if (!train.getBody().hasOneBlock())
    return train.emitError("the train entry has ")
           << train.getBody().getBlocks().size()
           << " blocks; tx-autodiff differentiates an entry of one block "
              "(write loops with scf)";
  Block &body = train.front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return train.emitError("the train entry's block ends without a return");
  if (ret.getNumOperands() != 1)
    return train.emitError("the train entry returns " +
                           std::to_string(ret.getNumOperands()) +
                           " results; it must return one scalar f32 loss to "
                           "be differentiated");
  auto lossType = cast<RankedTensorType>(ret.getOperand(0).getType());
  if (lossType.getRank() != 0 || !lossType.getElementType().isF32()) {
    // Where the loss is computed, with its type (it pointed at the entry's
    // header and said neither).
    Location at = ret.getOperand(0).getDefiningOp()
                      ? ret.getOperand(0).getDefiningOp()->getLoc()
                      : train.getLoc();
    return emitError(at) << "the train entry's loss is " << formatType(lossType)
                         << "; it must be one scalar f32 to be "
                            "differentiated (reduce it: reduce_mean(...), "
                            "reduce_sum(...), or cross_entropy(...))";
  }
  Value loss = ret.getOperand(0);

  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);

  // Active values: parameters, and results of differentiable ops with an
  // active differentiable operand.
  llvm::MapVector<StringAttr, ParamOp> firstRead;
  // `throughStops`: as if stop_gradient passed gradients (for the message
  // when it is what cuts every parameter off).
  auto activeValues = [&](bool throughStops) {
    llvm::DenseSet<Value> active;
    for (Operation *op : forward) {
      if (auto param = dyn_cast<ParamOp>(op)) {
        active.insert(param.getResult());
        firstRead.insert({param.getNameAttr().getAttr(), param});
        continue;
      }
      if (auto stop = dyn_cast<StopGradientOp>(op)) {
        if (throughStops && active.count(stop.getInput()))
          active.insert(stop.getResult());
        continue;
      }
      auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
      if (!differentiable)
        continue;
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        if (active.count(operand) &&
            differentiable.isDifferentiableOperand(i)) {
          for (Value result : op->getResults())
            if (cast<RankedTensorType>(result.getType())
                    .getElementType()
                    .isF32())
              active.insert(result);
          break;
        }
    }
    return active;
  };
  llvm::DenseSet<Value> active = activeValues(false);
  if (!active.count(loss)) {
    // The loss's value depends on parameters, but only through
    // stop_gradient: "does not depend on any parameter" was not true.
    if (llvm::DenseSet<Value> through = activeValues(true);
        through.count(loss)) {
      InFlightDiagnostic error = train.emitError(
          "the loss gets a gradient from no parameter: stop_gradient cuts "
          "every path that would carry one, so nothing would train");
      // One that cuts a parameter off (not one of an input).
      train.walk([&](StopGradientOp stop) {
        if (!through.count(stop.getInput()))
          return WalkResult::advance();
        error.attachNote(stop.getLoc())
            << "this stop_gradient cuts a parameter off";
        return WalkResult::interrupt();
      });
      return error;
    }
    return train.emitError("the loss does not depend on any parameter");
  }

  OpBuilder builder(ret);
  llvm::DenseMap<Value, Value> grads;
  llvm::DenseMap<StringAttr, Value> paramGrads;
  auto accumulate = [&](Value value, Value grad, Location loc) {
    Value &slot = grads[value];
    slot = slot ? builder.create<AddOp>(loc, slot, grad).getResult() : grad;
  };
  grads[loss] = builder.create<ConstantOp>(
      loss.getLoc(),
      DenseElementsAttr::get(cast<RankedTensorType>(loss.getType()),
                             ArrayRef<Attribute>{builder.getF32FloatAttr(1.0)}));

  // Parameters without a gradient, in reverse program order.
  SmallVector<std::pair<Location, StringRef>> noGradient;
  for (Operation *op : llvm::reverse(forward)) {
    builder.setInsertionPoint(ret);
    if (auto param = dyn_cast<ParamOp>(op)) {
      StringAttr name = param.getNameAttr().getAttr();
      if (Value grad = grads.lookup(param.getResult())) {
        Value &total = paramGrads[name];
        total = total ? builder.create<AddOp>(param.getLoc(), total, grad)
                            .getResult()
                      : grad;
      }
      if (firstRead.lookup(name) != param)
        continue;
      Value total = paramGrads.lookup(name);
      // Read but not on the loss's path (through a comparison, ids, or a
      // value nothing uses): a zero gradient, which tx-optimizer skips as
      // torch.optim skips a parameter whose .grad is None. Said, since the
      // spec may not mean it (tests/E2E/untrained-parameters.test).
      if (!total)
        noGradient.push_back({param.getLoc(), name.getValue()});
      if (!total)
        total = builder.create<ConstantOp>(
            param.getLoc(),
            DenseElementsAttr::get(
                cast<RankedTensorType>(param.getType()),
                ArrayRef<Attribute>{builder.getF32FloatAttr(0.0)}));
      builder.create<StoreGradOp>(param.getLoc(), param.getNameAttr(), total);
      continue;
    }
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      resultGrads.push_back(grads.lookup(result));
      any |= static_cast<bool>(resultGrads.back());
    }
    if (!any)
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("is on the path from the parameters to the loss "
                             "but has no gradient");
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildVJP(builder, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitOpError("VJP rule returned ")
             << operandGrads.size() << " gradients for "
             << op->getNumOperands() << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !active.count(operand))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitOpError("VJP rule gave a gradient of type ")
               << grad.getType() << " for an operand of type "
               << operand.getType();
      accumulate(operand, grad, op->getLoc());
    }
  }
  warnNoGradient(train, noGradient);
  // Gradients of inputs that need none, forward values nobody reads.
  eraseDeadOps(train.front());
  foldSumsIntoLinearGrads(train.front());
  return success();
}

/// Warns of each parameter `train` never reads (another entry's alone):
/// training leaves it as it is, as torch.optim does a parameter whose .grad
/// is None, where a user may have meant to train it.
void warnUnread(func::FuncOp train) {
  llvm::DenseSet<StringAttr> read;
  train.walk(
      [&](ParamOp param) { read.insert(param.getNameAttr().getAttr()); });
  auto module = train->getParentOfType<ModuleOp>();
  // One warning for each place and set of readers: a def called in a loop
  // of 24 layers said it 48 times (a weight and a bias a layer).
  struct Unread {
    Location loc;
    SmallVector<StringRef> names;
  };
  llvm::MapVector<std::pair<Location, StringAttr>, Unread> byPlace;
  for (auto parameter : module.getOps<ParameterOp>()) {
    if (read.contains(parameter.getSymNameAttr()))
      continue;
    SmallVector<StringRef> readers;
    for (auto func : module.getOps<func::FuncOp>()) {
      bool reads = false;
      func.walk([&](ParamOp param) {
        reads |= param.getNameAttr().getAttr() == parameter.getSymNameAttr();
      });
      if (reads)
        readers.push_back(func.getSymName());
    }
    const std::string by =
        readers.empty() ? std::string()
                        : " (only by '" + llvm::join(readers, "', '") + "')";
    auto it = byPlace
                  .insert({{specPlace(parameter.getLoc()),
                            StringAttr::get(module.getContext(), by)},
                           Unread{parameter.getLoc(), {}}})
                  .first;
    it->second.names.push_back(parameter.getSymName());
  }
  for (const auto &[key, unread] : byPlace) {
    const StringRef by = key.second.getValue();
    const bool one = unread.names.size() == 1;
    auto warning = emitWarning(unread.loc);
    if (one)
      warning << "parameter " << quotedNames(unread.names) << " is";
    else
      warning << unread.names.size() << " parameters made here are";
    warning << " not read by '" << train.getSymName() << "'" << by;
    if (one)
      warning << ": training leaves it as it is";
    else
      warning << ": " << quotedNames(unread.names)
              << "; training leaves them as they are";
    warning << ", as torch.optim does a parameter whose .grad is None";
  }
}

struct AutodiffPass : mlir::tx::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    for (auto func : llvm::make_early_inc_range(
             getOperation().getOps<func::FuncOp>())) {
      if (!isUndifferentiatedTrainEntry(func))
        continue;
      prepareForward(func);
      warnUnread(func);
      if (failed(differentiate(func)))
        return signalPassFailure();
      // No gradient went through them; now they are the identity.
      func.walk([](StopGradientOp stop) {
        stop.getResult().replaceAllUsesWith(stop.getInput());
        stop.erase();
      });
      func->setAttr("tx.train_kind", StringAttr::get(&getContext(), "grad"));
    }
  }
};

} // namespace
