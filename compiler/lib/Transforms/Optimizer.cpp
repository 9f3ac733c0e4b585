//===- Optimizer.cpp - the spec's optimizer as parameter updates ----------===//
//
// tx-optimizer: after tx-autodiff, the differentiated train entry is kept as
// `<train>_grad` (gradients stored, for checks) and the train entry becomes
// the whole training step: each tx.store_grad becomes a tx.adam_update with
// the module's tx.optimizer settings. With gradient clipping the updates
// wait for the global norm of every gradient.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxRoles.h"

#include "mlir/IR/Builders.h"

#include <cstdio>
#include <limits>

namespace mlir::tx {
#define GEN_PASS_DEF_OPTIMIZERPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

double number(DictionaryAttr dict, StringRef key, double fallback) {
  if (auto value = dict ? dict.getAs<FloatAttr>(key) : nullptr)
    return value.getValueAsDouble();
  if (auto value = dict ? dict.getAs<IntegerAttr>(key) : nullptr)
    return static_cast<double>(value.getInt());
  return fallback;
}

/// What a tx.optimizer value may be (the .tx front end checks the same;
/// hand-written IR gave a tx.adam_update whose verifier blamed a tx.param,
/// or clipping silently off for clip <= 0).
enum class Range { Positive, NonNegative, Beta };

/// `key` of `dict` as a number in `range` (its `fallback` when absent), or
/// an error on the module naming the key and the value.
FailureOr<double> checkedNumber(ModuleOp module, DictionaryAttr dict,
                                StringRef key, double fallback, Range range) {
  Attribute value = dict ? dict.get(key) : Attribute();
  if (!value)
    return fallback;
  if (!isa<FloatAttr, IntegerAttr>(value))
    return module.emitError("tx.optimizer: '")
           << key << "' must be a number, got " << value;
  double x = number(dict, key, fallback);
  bool ok = range == Range::Beta       ? x >= 0 && x < 1
            : range == Range::Positive ? x > 0
                                       : x >= 0;
  // Adam runs in f32: a value it cannot hold is infinity (or, for eps, 0).
  ok = ok && x <= double(std::numeric_limits<float>::max()) &&
       !(key == "eps" && x < double(std::numeric_limits<float>::min()));
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.10g", x);
  if (!ok)
    return module.emitError("tx.optimizer: '")
           << key << "' = " << shown << " is out of range: it must be "
           << (range == Range::Beta       ? "in [0, 1)"
               : range == Range::Positive ? "positive"
                                          : "0 or more")
           << (key == "clip" ? " (leave clip out for no clipping)" : "")
           << " and a finite f32";
  return x;
}

LogicalResult lowerToAdam(ModuleOp module, func::FuncOp train,
                          DictionaryAttr optimizer) {
  OpBuilder builder(train.getContext());
  auto f64 = [&](double v) { return builder.getF64FloatAttr(v); };
  SmallVector<NamedAttribute> attrs;
  // Every value checked first (IR written by hand, not by the front end).
  {
    DictionaryAttr schedule = optimizer.getAs<DictionaryAttr>("lr");
    struct Check {
      DictionaryAttr dict;
      const char *key;
      Range range;
    };
    for (const Check &check : std::initializer_list<Check>{
             {schedule ? DictionaryAttr() : optimizer, "lr", Range::Positive},
             {schedule, "factor", Range::Positive},
             {schedule, "d_model", Range::Positive},
             {schedule, "warmup", Range::Positive},
             {optimizer, "beta1", Range::Beta},
             {optimizer, "beta2", Range::Beta},
             {optimizer, "eps", Range::Positive},
             {optimizer, "weight_decay", Range::NonNegative},
             {optimizer, "clip", Range::Positive}})
      if (check.dict) {
        // The schedule's values have no default (warmup 0 divides by 0).
        if (check.dict == schedule && !schedule.get(check.key))
          return module.emitError("tx.optimizer: the noam schedule needs '")
                 << check.key << "'";
        if (failed(
                checkedNumber(module, check.dict, check.key, 1.0, check.range)))
          return failure();
      }
  }
  Attribute lr = optimizer.get("lr");
  if (!lr)
    return module.emitError("optimizer 'adam' has no learning rate `lr`");
  if (auto schedule = dyn_cast<DictionaryAttr>(lr)) {
    auto name = schedule.getAs<StringAttr>("schedule");
    if (!name || name.getValue() != "noam")
      return module.emitError("learning-rate schedule '")
             << (name ? name.getValue() : "?")
             << "' has no implementation in this version of txc (noam has, "
                "or a constant lr)";
    attrs.push_back(builder.getNamedAttr("schedule", builder.getStringAttr("noam")));
    attrs.push_back(builder.getNamedAttr("lr", f64(number(schedule, "factor", 1.0))));
    attrs.push_back(builder.getNamedAttr("d_model", f64(number(schedule, "d_model", 0))));
    attrs.push_back(builder.getNamedAttr("warmup", f64(number(schedule, "warmup", 0))));
  } else {
    attrs.push_back(builder.getNamedAttr("schedule", builder.getStringAttr("constant")));
    attrs.push_back(builder.getNamedAttr("lr", f64(number(optimizer, "lr", 0))));
    attrs.push_back(builder.getNamedAttr("d_model", f64(0)));
    attrs.push_back(builder.getNamedAttr("warmup", f64(0)));
  }
  attrs.push_back(builder.getNamedAttr("beta1", f64(number(optimizer, "beta1", 0.9))));
  attrs.push_back(builder.getNamedAttr("beta2", f64(number(optimizer, "beta2", 0.999))));
  attrs.push_back(builder.getNamedAttr("eps", f64(number(optimizer, "eps", 1e-8))));
  attrs.push_back(builder.getNamedAttr("weight_decay",
                                       f64(number(optimizer, "weight_decay", 0))));
  double clip = number(optimizer, "clip", 0);

  SmallVector<StoreGradOp> stores;
  train.walk([&](StoreGradOp store) { stores.push_back(store); });
  Value scale;
  if (clip > 0 && !stores.empty()) {
    // Every gradient is needed for the norm: update at the end.
    builder.setInsertionPoint(train.front().getTerminator());
    SmallVector<Value> gradients;
    for (StoreGradOp store : stores)
      gradients.push_back(store.getGrad());
    scale = builder.create<GradNormOp>(
        train.getLoc(),
        RankedTensorType::get({}, builder.getF32Type()), gradients,
        builder.getF64FloatAttr(clip));
  }
  for (StoreGradOp store : stores) {
    // A constant gradient is a parameter the loss does not reach: PyTorch
    // skips those (grad None), so does the step.
    if (auto constant = store.getGrad().getDefiningOp<ConstantOp>()) {
      store.erase();
      if (constant->use_empty())
        constant.erase();
      continue;
    }
    if (!scale)
      builder.setInsertionPoint(store);
    SmallVector<Value> operands = {store.getGrad()};
    if (scale)
      operands.push_back(scale);
    SmallVector<NamedAttribute> opAttrs(attrs);
    opAttrs.push_back(builder.getNamedAttr("name", store.getNameAttr()));
    builder.create<AdamUpdateOp>(store.getLoc(), TypeRange{}, operands, opAttrs);
    store.erase();
  }
  return success();
}

struct OptimizerPass : mlir::tx::impl::OptimizerPassBase<OptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Another kind of value was read as no optimizer: the train entry
    // kept its gradients and updated nothing, without a word.
    Attribute setting = module->getAttr("tx.optimizer");
    if (setting && !isa<DictionaryAttr>(setting)) {
      module.emitError("tx.optimizer must be a dictionary ({name = \"adam\", "
                       "lr = ...}), got ")
          << setting;
      return signalPassFailure();
    }
    auto optimizer = dyn_cast_or_null<DictionaryAttr>(setting);
    SmallVector<func::FuncOp> trains;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>("tx.train_kind");
      if (kind && kind.getValue() == "grad" &&
          !func.getSymName().ends_with("_grad"))
        trains.push_back(func);
    }
    if (!optimizer || trains.empty())
      return;
    auto name = optimizer.getAs<StringAttr>("name");
    if (!name || name.getValue() != "adam") {
      module.emitError("optimizer '")
          << (name ? name.getValue() : "?")
          << "' has no update rule in this version of txc (adam has)";
      return signalPassFailure();
    }
    for (func::FuncOp train : trains) {
      func::FuncOp grad = train.clone();
      grad.setSymName((train.getSymName() + "_grad").str());
      if (grad->hasAttr(kRoleAttr))
        grad->setAttr(kRoleAttr, StringAttr::get(&getContext(), "train_grad"));
      module.getBody()->getOperations().insertAfter(
          Block::iterator(train), grad.getOperation());
      train->setAttr("tx.train_kind", StringAttr::get(&getContext(), "step"));
      if (failed(lowerToAdam(module, train, optimizer)))
        return signalPassFailure();
    }
  }
};

} // namespace
