//===- MLIRGen.cpp - spec AST to the tx dialect ---------------------------===//
//
// Walks the AST of a spec and emits tx IR: entries become functions, `def`s
// are inlined at each call under their `as` scope, parameters are declared
// once by name, compile-time expressions are folded, and every tensor op gets
// its result type from the dialect's inference. Errors are reported at the
// spec location and generation continues with the next statement.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>

#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::tx;
using namespace txc;
using namespace txc::detail;

static_assert(kMaxDimBound == kMaxDimSize,
              "dim bounds and static sizes share one limit");

int64_t BoundArgs::integer(size_t i) const {
  const ConstValue &value = *values[i].constant;
  return value.kind == ConstValue::Kind::Int
             ? value.i
             : static_cast<int64_t>(value.asDouble());
}

/// The spec position of an MLIR location (0:0 when it has none).
static SourceLoc specLoc(Location loc) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return {fileLoc.getLine(), fileLoc.getColumn()};
  return {};
}

void txc::reportToSpec(mlir::Diagnostic &diag, DiagnosticEngine &diags) {
  SourceLoc loc = specLoc(diag.getLocation());
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    diags.error(loc, diag.str());
    break;
  case DiagnosticSeverity::Warning:
    diags.warning(loc, diag.str());
    break;
  default:
    diags.note(loc, diag.str());
    break;
  }
  for (mlir::Diagnostic &note : diag.getNotes())
    diags.note(specLoc(note.getLocation()), note.str());
}

MLIRGenImpl::MLIRGenImpl(MLIRContext &context, const ast::Module &module,
                         const ConfigEnv &env, DiagnosticEngine &diags)
    : context(context), ast(module), env(env), diags(diags),
      builder(&context) {
  fileName = StringAttr::get(&context, diags.getFile().getName());
  builder.setListener(&opCounter);
}

Location MLIRGenImpl::getLoc(SourceLoc loc) {
  Location file = FileLineColLoc::get(fileName, loc.line, loc.col);
  if (scope.empty() && !builtinCall.first)
    return file;
  // Inside inlined defs: the `as` path of the defs ("h.0.attn") names the
  // location, which txc --emit=dot groups by (diagnostics look through it);
  // a builtin's own `as` ("h.0.ln_1") ends it.
  std::string path;
  for (const std::string &part : scope)
    path += (path.empty() ? "" : ".") + part;
  if (builtinCall.first)
    path += (path.empty() ? "" : ".") + builtinCall.second;
  return NameLoc::get(StringAttr::get(&context, path), file);
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> MLIRGenImpl::generate() {
  // MLIR diagnostics (shape inference, verification) become spec diagnostics.
  ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    reportToSpec(diag, diags);
    return success();
  });

  std::optional<StringRef> name;
  if (!env.modelName.empty())
    name = env.modelName;
  OwningOpRef<ModuleOp> owned(ModuleOp::create(getLoc({1, 1}), name));
  module = *owned;
  for (const ConfigEnv::Dim &dim : env.dims)
    dims[dim.name] = &dim;

  bool sawEntry = false;
  for (const ast::DeclPtr &decl : ast.decls) {
    if (auto *def = llvm::dyn_cast<ast::DefDecl>(decl.get())) {
      if (lookupBuiltin(def->name) || isConstFunction(def->name))
        diags.error(def->getLoc(),
                    "def '" + def->name + "' shadows the builtin of that name",
                    "rename it");
      else
        defs[def->name] = def;
      checkDefParamNames(*def);
    } else if (auto *entry = llvm::dyn_cast<ast::EntryDecl>(decl.get())) {
      entryNames.insert(entry->name);
    }
  }
  const ast::EntryDecl *train = nullptr;
  const ast::OptimizerDecl *optimizer = nullptr;
  for (const ast::DeclPtr &decl : ast.decls) {
    if (auto *entry = llvm::dyn_cast<ast::EntryDecl>(decl.get())) {
      declareEntry(*entry);
      sawEntry = true;
      if (entry->name == "train")
        train = entry;
    } else if (auto *opt = llvm::dyn_cast<ast::OptimizerDecl>(decl.get())) {
      declareOptimizer(*opt);
      optimizer = opt;
    }
  }
  // Without an optimizer, tx-autodiff still differentiates `train`, but
  // tx-optimizer has no update rule to add: the entry only computes the
  // gradients, and the executable cannot `train`.
  if (train && !optimizer)
    diags.warning(train->getLoc(),
                  "entry 'train' gets its gradients but updates no parameter: "
                  "the spec declares no optimizer",
                  "add one, e.g. `optimizer adam(lr = 0.001)`");
  // A def no entry calls is never generated, so nothing checks its body:
  // an undefined name in it passed without a word.
  if (sawEntry && !diags.hasErrors())
    for (const auto &[name, def] : defs)
      if (!calledDefs.count(name))
        diags.warning(def->getLoc(),
                      "def '" + name +
                          "' is never called: txc checks a def's body only "
                          "where an entry calls it",
                      "call it from an entry, or remove it");
  if (!sawEntry && !diags.hasErrors())
    diags.error({1, 1}, "the spec declares no entry",
                "add one, e.g. `entry encode(src: i32[B, S]) -> memory { ... }`");

  if (!diags.hasErrors())
    checkModelRoles(module, ast, diags);
  if (!diags.hasErrors())
    checkModelContract(module, ast, env, diags);
  emitParameters();
  setModuleAttributes();
  if (diags.hasErrors())
    return nullptr;
  if (failed(verify(module)))
    return nullptr;
  return owned;
}

void MLIRGenImpl::emitParameters() {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  // The module's symbols so far (the entries), in a set: lookupSymbol scans
  // the module, so a lookup per parameter was quadratic in the layers (43 %
  // of a 400-layer spec's front end).
  llvm::StringSet<> taken;
  for (Operation &op : *module.getBody())
    if (auto symbol = op.getAttrOfType<StringAttr>(
            SymbolTable::getSymbolAttrName()))
      taken.insert(symbol.getValue());
  for (const ParamInfo &param : params) {
    // Parameters, entries, the runtime's functions and the glue share the
    // module's symbols (MLIR said "redefinition of symbol named 'fwd'").
    llvm::StringRef name = param.name;
    if (taken.contains(name)) {
      diags.error(param.loc,
                  "parameter '" + param.name + "' has the name of entry '" +
                      param.name +
                      "': parameters and entries share one namespace",
                  "rename the parameter (`as " + param.name +
                      "_weight`) or the entry");
      continue;
    }
    if (name.starts_with("txrt_") || name.starts_with("__txc")) {
      diags.error(param.loc,
                  "parameter name '" + param.name +
                      "' is reserved: names starting with txrt_ or __txc "
                      "are the runtime's and the compiled glue's",
                  "rename the parameter");
      continue;
    }
    // Checkpoints keep a parameter P's Adam moments as P.exp_avg and
    // P.exp_avg_sq, the weight average as __ema.P and their metadata as
    // __metadata__: a parameter of such a name trained to the end and then
    // failed to save ("duplicate or reserved tensor name"), or saved a file
    // that every later command called damaged.
    llvm::StringRef last = name.rsplit('.').second.empty()
                               ? name
                               : name.rsplit('.').second;
    if (name.starts_with("__") || last == "exp_avg" || last == "exp_avg_sq") {
      diags.error(param.loc,
                  "parameter name '" + param.name +
                      "' is reserved: checkpoints store a parameter P's Adam "
                      "moments as P.exp_avg and P.exp_avg_sq, and their own "
                      "state under names that start with '__'",
                  "rename the parameter");
      continue;
    }
    auto type = RankedTensorType::get(param.shape, builder.getF32Type());
    auto op = builder.create<ParameterOp>(
        getLoc(param.loc), TypeRange{}, ValueRange{},
        ArrayRef<NamedAttribute>{
            builder.getNamedAttr(SymbolTable::getSymbolAttrName(),
                                 builder.getStringAttr(param.name)),
            builder.getNamedAttr("type", TypeAttr::get(type)),
            builder.getNamedAttr("init", InitAttr::get(&context, param.init))});
    if (param.std)
      op->setAttr("std", builder.getF32FloatAttr(float(*param.std)));
    taken.insert(name);
  }
}

void MLIRGenImpl::setModuleAttributes() {
  SmallVector<NamedAttribute> config, bounds;
  for (const auto &[name, value] : env.config) {
    Attribute attr;
    switch (value.kind) {
    case ConstValue::Kind::Int:
      attr = builder.getI64IntegerAttr(value.i);
      break;
    case ConstValue::Kind::Float:
      attr = builder.getF64FloatAttr(value.f);
      break;
    case ConstValue::Kind::Bool:
      attr = builder.getBoolAttr(value.b);
      break;
    }
    config.push_back(builder.getNamedAttr(name, attr));
  }
  SmallVector<NamedAttribute> boundConfigs;
  for (const ConfigEnv::Dim &dim : env.dims) {
    bounds.push_back(
        builder.getNamedAttr(dim.name, builder.getI64IntegerAttr(dim.bound)));
    boundConfigs.push_back(
        builder.getNamedAttr(dim.name, builder.getStringAttr(dim.configKey)));
  }
  module->setAttr("tx.config", builder.getDictionaryAttr(config));
  module->setAttr("tx.dims", builder.getDictionaryAttr(bounds));
  // Which config item each dim's bound is (empty: none), for the
  // executable's advice on raising it (metadata dims[i].config).
  module->setAttr("tx.dim_configs", builder.getDictionaryAttr(boundConfigs));
  // Config items written as another's name (`src_vocab = vocab`), where no
  // -D set them: `-D src_vocab=N` would not change what `vocab` sizes, so
  // the executable's advice on a vocabulary names the item they follow.
  if (!env.aliases.empty()) {
    SmallVector<NamedAttribute> aliases;
    for (const auto &[item, target] : env.aliases)
      aliases.push_back(
          builder.getNamedAttr(item, builder.getStringAttr(target)));
    module->setAttr("tx.config_aliases", builder.getDictionaryAttr(aliases));
  }
  if (optimizer)
    module->setAttr("tx.optimizer", optimizer);
  // Config items that size entry inputs (declareEntry): metadata
  // "size_configs", which the executable compares as it compares bounds.
  SmallVector<Attribute> sizes;
  for (const std::string &name : sizeConfigs)
    sizes.push_back(builder.getStringAttr(name));
  if (!sizes.empty())
    module->setAttr("tx.size_configs", builder.getArrayAttr(sizes));
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

/// Entries that txc derives from others, by the entry they come from.
static const char *derivedFrom(StringRef name) {
  if (name == "decode_init" || name == "decode_step")
    return "decode";
  if (name == "train_grad")
    return "train";
  if (name == "lm_step")
    return "logits";
  return nullptr;
}

bool MLIRGenImpl::checkEntryName(const ast::EntryDecl &entry) {
  // Names the object file and its header use themselves: txc_entry_table
  // (the table of entries) and txc_entry_fn (its type) would clash with an
  // entry `table` or `fn`, and the runtime's functions (txrt_*) and the
  // glue kernels (__txc_*) share the module's symbols with the entries.
  llvm::StringRef name = entry.name;
  if (name == "table" || name == "fn" || name.starts_with("txrt_") ||
      name.starts_with("__txc")) {
    diags.error(entry.getLoc(),
                "entry name '" + entry.name +
                    "' is reserved: " +
                    (name.starts_with("txrt_") || name.starts_with("__txc")
                         ? "names starting with txrt_ or __txc are the "
                           "runtime's and the compiled glue's"
                         : "the object file exports txc_entry_table and "
                           "the type txc_entry_fn"),
                "rename the entry");
    return false;
  }
  const char *source = derivedFrom(entry.name);
  if (!source)
    return true;
  std::string why =
      std::string(source) == "train"
          ? "txc derives it from 'train' (the gradients without the "
            "optimizer step)"
          : "txc derives it from '" + std::string(source) +
                "' for incremental decoding";
  diags.error(entry.getLoc(),
              "entry name '" + entry.name + "' is reserved: " + why,
              "rename the entry; the executable would run the derived one in "
              "its place");
  return false;
}

void MLIRGenImpl::declareEntry(const ast::EntryDecl &entry) {
  // Past a limit nothing more is generated (and nothing more reported).
  if (abandoned || !checkEntryName(entry))
    return;
  SmallVector<Type> argTypes;
  bool ok = true;
  for (const ast::Param &param : entry.params) {
    if (!param.type) {
      diags.error(param.loc,
                  "entry parameter '" + param.name + "' needs a type",
                  "write e.g. `" + param.name + ": i32[B, S]`");
      ok = false;
      continue;
    }
    std::optional<RankedTensorType> type = resolveType(*param.type, nullptr);
    if (!type) {
      ok = false;
      continue;
    }
    // A config item an entry input's shape names (`ids: i32[B, T]` with
    // `config B = 8`): a size, as a dim would be (tx.size_configs); and the
    // item it is another name for (`config B = batch`: batch too).
    for (const ast::ExprPtr &dimExpr : param.type->dims) {
      auto *name = llvm::dyn_cast<ast::NameExpr>(dimExpr.get());
      if (!name || !env.lookup(name->name))
        continue;
      for (std::string key = name->name;
           !llvm::is_contained(sizeConfigs, key);) {
        sizeConfigs.push_back(key);
        auto alias = env.aliases.find(key);
        if (alias == env.aliases.end())
          break;
        key = alias->second;
      }
    }
    std::string why = checkSizeLimits(getShape(*type));
    if (!why.empty()) {
      diags.error(param.loc, "entry parameter '" + param.name + "', " +
                                 formatType(*type) + ", " + why);
      ok = false;
      continue;
    }
    argTypes.push_back(*type);
  }
  if (!ok)
    return;

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = builder.create<func::FuncOp>(
      getLoc(entry.getLoc()), entry.name,
      builder.getFunctionType(argTypes, {}));
  func->setAttr("tx.entry", builder.getStringAttr(entry.name));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);

  frames.push_back({});
  // All at once: setting them one by one would build n argument lists.
  SmallVector<Attribute> argAttrs;
  for (auto [index, param] : llvm::enumerate(entry.params)) {
    frames.back().vars[param.name] = Val::of(body->getArgument(index));
    argAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        "tx.name", builder.getStringAttr(param.name))));
  }
  func.setAllArgAttrs(argAttrs);
  inTrainEntry = entry.name == "train";
  entryName = entry.name;
  entryDims.clear();
  for (Type type : argTypes)
    for (const Dim &dim : getShape(cast<RankedTensorType>(type)))
      if (dim.isSymbolic())
        entryDims.push_back(dim.symbol);
  unsigned errorsBefore = diags.getNumErrorReports();
  std::optional<Val> returned;
  genBlock(entry.body, &returned);

  SmallVector<Value> results;
  SmallVector<std::string> resultNames;
  if (returned) {
    if (entry.results.size() > 1) {
      diags.error(entry.getLoc(),
                  "entry '" + entry.name +
                      "' declares several results; assign them instead of "
                      "using `return`");
    } else if (returned->isTensor()) {
      // `z = x` then `return x * 2` returned x * 2 as z, the assignment
      // ignored without a word: one or the other.
      // The assignment is looked for in loops too (`for ... { z = x }`).
      const ast::AssignStmt *assigned = nullptr;
      std::function<void(const ast::Block &)> find =
          [&](const ast::Block &block) {
            for (const ast::StmtPtr &stmt : block) {
              if (auto *assign = llvm::dyn_cast<ast::AssignStmt>(stmt.get())) {
                for (const ast::AssignTarget &target : assign->targets)
                  if (!assigned && target.name == entry.results[0].name)
                    assigned = assign;
              } else if (auto *loop = llvm::dyn_cast<ast::ForStmt>(stmt.get())) {
                find(loop->body);
              }
            }
          };
      if (!entry.results.empty() &&
          frames.back().vars.count(entry.results[0].name))
        find(entry.body);
      if (assigned)
        diags.error(assigned->getLoc(),
                    "entry '" + entry.name + "' assigns its result '" +
                        entry.results[0].name +
                        "' here and also ends with `return`, which is what "
                        "it returns",
                    "assign the result or return it, not both");
      results.push_back(returned->tensor);
      resultNames.push_back(entry.results.empty() ? "result"
                                                  : entry.results[0].name);
    } else if (returned->isConst()) {
      diags.error(entry.getLoc(), "entry '" + entry.name +
                                      "' returns a constant, not a tensor");
    } else if (returned->isTuple()) {
      diags.error(entry.getLoc(),
                  "entry '" + entry.name + "' returns " +
                      std::to_string(returned->tuple.size()) +
                      " tensors with one `return`",
                  "assign them to the names after `->` instead");
    }
  } else {
    if (entry.results.empty() && diags.getNumErrorReports() == errorsBefore)
      diags.error(entry.getLoc(), "entry '" + entry.name + "' has no result",
                  "declare one with `-> name` or end with `return expr`");
    for (const ast::ResultName &result : entry.results) {
      auto it = frames.back().vars.find(result.name);
      if (it == frames.back().vars.end()) {
        if (diags.getNumErrorReports() == errorsBefore)
          diags.error(result.loc, "result '" + result.name +
                                      "' is never assigned in entry '" +
                                      entry.name + "'");
        continue;
      }
      if (!it->second.isTensor()) {
        if (it->second.isConst()) {
          diags.error(result.loc,
                      "result '" + result.name + "' is the constant " +
                          it->second.constant->str() + ", not a tensor");
          // Where it got that value: the last statement of the body that
          // assigns it (the error pointed at the header alone), inside
          // loops too, a loop's variable included (the note named an
          // earlier `y = x` over the loop's `y = 1`).
          std::optional<SourceLoc> last;
          std::function<void(const ast::Block &)> scan =
              [&](const ast::Block &block) {
                for (const ast::StmtPtr &stmt : block) {
                  if (auto *assign =
                          llvm::dyn_cast<ast::AssignStmt>(stmt.get())) {
                    for (const ast::AssignTarget &target : assign->targets)
                      if (target.name == result.name)
                        last = target.loc;
                  } else if (auto *loop =
                                 llvm::dyn_cast<ast::ForStmt>(stmt.get())) {
                    if (loop->var == result.name)
                      last = loop->varLoc;
                    scan(loop->body);
                  }
                }
              };
          scan(entry.body);
          if (last)
            diags.note(*last, "'" + result.name + "' is last assigned here");
        }
        continue;
      }
      results.push_back(it->second.tensor);
      resultNames.push_back(result.name);
    }
  }
  frames.pop_back();
  inTrainEntry = false;

  builder.create<func::ReturnOp>(getLoc(entry.getLoc()), results);
  SmallVector<Type> resultTypes;
  for (Value value : results)
    resultTypes.push_back(value.getType());
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  SmallVector<Attribute> resultAttrs;
  for (const std::string &name : resultNames)
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr("tx.name", builder.getStringAttr(name))));
  func.setAllResultAttrs(resultAttrs);
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

void MLIRGenImpl::declareOptimizer(const ast::OptimizerDecl &decl) {
  static const std::map<std::string, std::vector<std::string>> known = {
      {"adam", {"lr", "beta1", "beta2", "eps", "clip", "weight_decay"}},
  };
  auto kind = known.find(decl.name);
  if (kind == known.end()) {
    diags.error(decl.getLoc(), "unknown optimizer '" + decl.name + "'",
                "txc knows `adam` (the optimizer tx-optimizer implements)");
    return;
  }
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(builder.getNamedAttr("name", builder.getStringAttr(decl.name)));
  bool sawLr = false;
  // What the step size is judged by (below): lr, or noam's arguments.
  std::optional<double> constantLr, beta1;
  std::optional<std::array<double, 3>> noamArgs; // d_model, warmup, factor
  SourceLoc lrLoc = decl.getLoc();
  for (const ast::Arg &arg : decl.args) {
    if (arg.keyword.empty()) {
      diags.error(arg.loc, "optimizer arguments are written `name = value`",
                  "e.g. `lr = 0.001`");
      continue;
    }
    const std::vector<std::string> &names = kind->second;
    if (std::find(names.begin(), names.end(), arg.keyword) == names.end()) {
      std::string hint = closestMatch(arg.keyword, names);
      diags.error(arg.loc,
                  "optimizer '" + decl.name + "' has no argument '" +
                      arg.keyword + "'",
                  hint.empty() ? "" : "did you mean '" + hint + "'?");
      continue;
    }
    if (arg.keyword == "lr") {
      sawLr = true;
      lrLoc = arg.loc;
      auto *call = llvm::dyn_cast<ast::CallExpr>(arg.value.get());
      if (call && call->callee == "noam") {
        // noam(d_model, warmup = 4000, factor = 1.0)
        std::optional<ConstValue> dModel, warmup, factor = ConstValue::ofFloat(1.0);
        unsigned errorsBefore = diags.getNumErrorReports();
        for (auto [index, noamArg] : llvm::enumerate(call->args)) {
          std::optional<ConstValue> value = evalConst(*noamArg.value);
          if (!value)
            continue;
          std::string key = noamArg.keyword.empty()
                                ? (index == 0 ? "d_model" : index == 1 ? "warmup" : "factor")
                                : noamArg.keyword;
          if (!value->isNumber() || value->asDouble() <= 0) {
            diags.error(noamArg.loc, "noam " + key + " must be a positive number");
            continue;
          }
          // Computed in f32, as the constant lr is (warmup = 1e39 is
          // infinity there: an lr of 0 for ever).
          if (value->asDouble() > double(std::numeric_limits<float>::max()) ||
              value->asDouble() < double(std::numeric_limits<float>::min())) {
            diags.error(noamArg.loc,
                        "noam " + key + " = " + value->str() +
                            " is not representable in f32",
                        "the optimizer computes in f32: from about 1.2e-38 to "
                        "3.4e38");
            continue;
          }
          if (key == "d_model")
            dModel = value;
          else if (key == "warmup")
            warmup = value;
          else if (key == "factor")
            factor = value;
          else
            diags.error(noamArg.loc, "noam has no argument '" + key + "'",
                        "noam(d_model, warmup = 4000, factor = 1.0)");
        }
        if (!dModel || !warmup) {
          // An argument reported above is not missing as well.
          if (diags.getNumErrorReports() == errorsBefore)
            diags.error(call->getLoc(), "noam needs d_model and warmup",
                        "e.g. `lr = noam(d_model, warmup = 4000)`");
          continue;
        }
        noamArgs = {dModel->asDouble(), warmup->asDouble(), factor->asDouble()};
        attrs.push_back(builder.getNamedAttr(
            "lr", builder.getDictionaryAttr({
                      builder.getNamedAttr("schedule", builder.getStringAttr("noam")),
                      builder.getNamedAttr("d_model", builder.getF64FloatAttr(dModel->asDouble())),
                      builder.getNamedAttr("warmup", builder.getF64FloatAttr(warmup->asDouble())),
                      builder.getNamedAttr("factor", builder.getF64FloatAttr(factor->asDouble())),
                  })));
        continue;
      }
    }
    std::optional<ConstValue> value = evalConst(*arg.value);
    if (!value)
      continue;
    if (!value->isNumber()) {
      diags.error(arg.loc, "optimizer argument '" + arg.keyword +
                               "' must be a number, got " + value->str());
      continue;
    }
    double number = value->asDouble();
    bool isBeta = arg.keyword == "beta1" || arg.keyword == "beta2" ||
                  arg.keyword == "momentum";
    // lr, eps and clip must be positive (clip = 0 scaled every gradient to
    // 0: nothing trained); weight_decay may be 0. The hint said "positive"
    // for all of them.
    const bool positive =
        arg.keyword == "lr" || arg.keyword == "eps" || arg.keyword == "clip";
    if ((isBeta && !(number >= 0 && number < 1)) ||
        (!isBeta && !(number >= 0)) || (positive && number <= 0)) {
      diags.error(arg.loc,
                  "optimizer argument '" + arg.keyword + "' = " + value->str() +
                      " is out of range",
                  isBeta                  ? "it must be in [0, 1)"
                  : arg.keyword == "clip" ? "it must be positive (clip = 0 "
                                            "would scale every gradient to "
                                            "0); leave clip out for no "
                                            "clipping"
                  : positive              ? "it must be positive"
                                          : "it must be 0 or more");
      continue;
    }
    // Adam runs in f32, judged by the f32 each value becomes: one f32
    // cannot hold is infinity (lr = 1e39: the first update is NaN), and one
    // below f32's normal range but 0 is flushed to 0 (lr = 1e-46 trained
    // nothing without a word; a smaller eps divides by zero). f32's limits
    // written with 9 digits (1.17549435e-38, 3.40282347e38) are those limits.
    const float inF32 = float(number);
    if (std::isinf(inF32) ||
        (number != 0 && inF32 < std::numeric_limits<float>::min())) {
      diags.error(arg.loc,
                  "optimizer argument '" + arg.keyword + "' = " +
                      value->str() + " is not representable in f32",
                  "the optimizer computes in f32: from about 1.2e-38 to "
                  "3.4e38");
      continue;
    }
    // A beta below 1 that f32 rounds to 1 (0.99999999999) passed, and every
    // step then failed at run time.
    if (isBeta && inF32 >= 1.0f) {
      diags.error(arg.loc,
                  "optimizer argument '" + arg.keyword + "' = " +
                      value->str() + " is 1 in f32",
                  "the optimizer computes in f32, where the largest beta "
                  "below 1 is 0.99999994");
      continue;
    }
    if (arg.keyword == "lr")
      constantLr = number;
    else if (arg.keyword == "beta1")
      beta1 = number;
    attrs.push_back(
        builder.getNamedAttr(arg.keyword, builder.getF64FloatAttr(number)));
  }
  // Adam moves a weight by up to lr / (1 - beta1^t) at step t, computed in
  // f32: past f32's largest it is infinity, and every weight became inf at
  // step 1 though lr itself fit (1e38 with beta1 = 0.9; noam's product of
  // fitting arguments, 1e39). Its largest value over the run is at step 1
  // or either side of the warmup (the ratio grows up to it, then falls).
  // Computed as the runtime does (runtime/lib/AdamScalars.h): from the
  // f32 values, beta1 as the shortest decimal of its f32 (0.99999993 and
  // 0.99999997 are one f32: judged as written, one was refused and the
  // other overflowed).
  if (constantLr || noamArgs) {
    auto f32 = [](double x) { return double(float(x)); };
    auto writtenF32 = [](double x) {
      const float rounded = float(x);
      double value = rounded;
      char text[48];
      auto printed = std::to_chars(text, text + sizeof(text), rounded);
      if (printed.ec == std::errc())
        std::from_chars(text, printed.ptr, value);
      return value;
    };
    const double b1 = writtenF32(beta1.value_or(0.9));
    // The rate at step t before its rounding to f32 (the largest step size
    // is found, and said, by it; whether f32 holds it, by the rounded).
    auto rateAt = [&](double t) {
      return constantLr ? f32(*constantLr)
                        : f32((*noamArgs)[2]) / std::sqrt(f32((*noamArgs)[0])) *
                              std::min(1.0 / std::sqrt(t),
                                       t * std::pow(f32((*noamArgs)[1]), -1.5));
    };
    auto stepSize = [&](double t) {
      return rateAt(t) / (1.0 - std::pow(b1, t));
    };
    double worstStep = 1;
    if (noamArgs)
      for (double t : {std::floor((*noamArgs)[1]), std::ceil((*noamArgs)[1])})
        if (t >= 1 && t < 9e15 && stepSize(t) > stepSize(worstStep))
          worstStep = t;
    const double worst = stepSize(worstStep);
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.4g", worst);
    if (std::isinf(
            float(f32(rateAt(worstStep)) / (1.0 - std::pow(b1, worstStep)))))
      diags.error(lrLoc,
                  "Adam's step size lr / (1 - beta1^t) is " +
                      std::string(shown) + " at step " +
                      ast::formatNumber(worstStep, true) +
                      ", more than f32 holds (about 3.4e38): every weight "
                      "would become infinite",
                  constantLr ? "lower lr, or beta1 (the step size at step 1 "
                               "is lr / (1 - beta1))"
                             : "lower the noam factor (its largest rate is "
                               "at the end of the warmup)");
  }
  if (!sawLr)
    diags.error(decl.getLoc(), "optimizer '" + decl.name + "' needs `lr`",
                "e.g. `lr = noam(d_model, warmup = 4000)` or `lr = 0.001`");
  optimizer = builder.getDictionaryAttr(attrs);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void MLIRGenImpl::genBlock(const ast::Block &block,
                           std::optional<Val> *returned) {
  for (const ast::StmtPtr &stmt : block) {
    if (abandoned)
      return;
    if (returned && *returned) {
      diags.error(stmt->getLoc(), "statement after `return` is never run");
      return;
    }
    genStmt(*stmt, returned);
  }
}

void MLIRGenImpl::genStmt(const ast::Stmt &stmt,
                          std::optional<Val> *returned) {
  if (auto *assign = llvm::dyn_cast<ast::AssignStmt>(&stmt)) {
    genAssign(*assign);
    return;
  }
  if (auto *ret = llvm::dyn_cast<ast::ReturnStmt>(&stmt)) {
    int64_t size = 1 + sizeOf(*ret->value);
    for (const ast::ExprPtr &value : ret->rest)
      size += sizeOf(*value);
    if (!withinLimits(ret->getLoc(), size))
      return;
    Val value =
        ret->rest.empty() ? genValue(*ret->value) : genReturnTuple(*ret);
    if (returned)
      *returned = value;
    return;
  }
  auto *loop = llvm::cast<ast::ForStmt>(&stmt);
  if (!checkBindable(loop->var, loop->varLoc, /*loopVariable=*/true))
    return;
  std::optional<ConstValue> lo = evalConst(*loop->lo);
  std::optional<ConstValue> hi = evalConst(*loop->hi);
  if (!lo || !hi)
    return;
  if (lo->kind != ConstValue::Kind::Int || hi->kind != ConstValue::Kind::Int) {
    // At the bound that is not one (it pointed at `for`); the hint on `/`
    // only for a float.
    const bool loBad = lo->kind != ConstValue::Kind::Int;
    const ConstValue &bad = loBad ? *lo : *hi;
    diags.error(
        (loBad ? loop->lo : loop->hi)->getLoc(),
        "loop bounds must be integers, got " + lo->str() + ".." + hi->str(),
        bad.kind == ConstValue::Kind::Float &&
                !llvm::isa<ast::NumberExpr>(loBad ? *loop->lo : *loop->hi)
            ? "`/` divides to a float; `//` keeps an integer (`n // 2`)"
            : "");
    return;
  }
  constexpr int64_t kMaxIterations = 4096;
  // Compare without overflow: bounds may be anywhere in int64.
  if (hi->i > lo->i && (lo->i < 0 ? hi->i > lo->i + kMaxIterations
                                  : hi->i - lo->i > kMaxIterations)) {
    diags.error(loop->getLoc(),
                "loop from " + lo->str() + " to " + hi->str() +
                    " repeats more than " + std::to_string(kMaxIterations) +
                    " times",
                "defs are inlined once per iteration; use fewer layers");
    return;
  }
  unrollSites.push_back(loop->getLoc());
  auto popSite = llvm::make_scope_exit([&] { unrollSites.pop_back(); });
  for (int64_t i = lo->i; i < hi->i; ++i) {
    if (!withinLimits(loop->getLoc(), 1))
      return;
    frames.back().vars[loop->var] = Val::of(ConstValue::ofInt(i));
    unsigned errorsBefore = diags.getNumErrorReports();
    // An error that only a later iteration meets names it (`16 - i` fit at
    // i = 0 and not at i = 1, and nothing said which); one the first meets
    // holds for the loop as written.
    const bool later = i > lo->i;
    if (later)
      diags.pushCallSite(loop->getLoc(), "in the iteration " + loop->var +
                                             " = " + std::to_string(i) +
                                             " of this loop");
    genBlock(loop->body, returned);
    if (later)
      diags.popCallSite();
    // One report per error, not one per iteration.
    if (diags.getNumErrorReports() != errorsBefore || (returned && *returned))
      break;
  }
}

bool MLIRGenImpl::checkBindable(const std::string &name, SourceLoc loc,
                                bool loopVariable) {
  const char *what = env.lookup(name)   ? "config value"
                     : dims.count(name) ? "dimension"
                                        : nullptr;
  if (!what)
    return true;
  if (loopVariable)
    diags.error(loc,
                std::string("cannot use ") + what + " '" + name +
                    "' as a loop variable",
                "config values and dims keep one value in the whole spec; "
                "name the loop variable otherwise, e.g. `for i in ...`");
  else if (env.lookup(name))
    diags.error(loc, "cannot assign to config value '" + name + "'",
                "use another name, or override it with `-D " + name + "=...`");
  else
    diags.error(loc, "cannot assign to dimension '" + name + "'");
  return false;
}

Val MLIRGenImpl::genReturnTuple(const ast::ReturnStmt &ret) {
  std::vector<const ast::Expr *> exprs = {ret.value.get()};
  for (const ast::ExprPtr &value : ret.rest)
    exprs.push_back(value.get());
  std::vector<Value> tensors;
  bool ok = true;
  for (size_t i = 0; i < exprs.size(); ++i) {
    Val value = genExpr(*exprs[i]);
    if (value.isConst())
      diags.error(exprs[i]->getLoc(),
                  "value " + std::to_string(i + 1) + " of `return` is the " +
                      "constant " + value.constant->str() +
                      "; several values returned together must be tensors");
    if (!value.isTensor())
      ok = false;
    else
      tensors.push_back(value.tensor);
  }
  return ok ? Val::ofTuple(std::move(tensors)) : Val{};
}

void MLIRGenImpl::genAssign(const ast::AssignStmt &assign) {
  for (const ast::AssignTarget &target : assign.targets)
    if (!checkBindable(target.name, target.loc, /*loopVariable=*/false)) {
      // The names hold no value from here on: their later reads report
      // nothing more (`d = x` then `y = d` is one error, not two).
      for (const ast::AssignTarget &name : assign.targets)
        frames.back().vars[name.name] = Val{};
      return;
    }
  if (!withinLimits(assign.getLoc(), 1 + sizeOf(*assign.value)))
    return;
  // Names stay bound even after an error so later uses do not cascade.
  if (assign.targets.size() == 1) {
    frames.back().vars[assign.targets[0].name] = genExpr(*assign.value);
    return;
  }
  Val value = genValue(*assign.value);
  size_t names = assign.targets.size();
  size_t given = value.isTuple() ? value.tuple.size() : 1;
  if (value.valid() && given != names) {
    std::string what = "the value is one ";
    if (value.isTensor())
      what += "tensor, " + formatType(value.tensor.getType());
    else if (value.isConst())
      what += "constant, " + value.constant->str();
    if (auto *call = llvm::dyn_cast<ast::CallExpr>(assign.value.get());
        call && value.isTuple())
      what = "'" + call->callee + "' gives " + std::to_string(given) +
             " tensors";
    diags.error(assign.getLoc(),
                what + ", but " + std::to_string(names) +
                    " names are assigned",
                value.isTuple() ? "assign each tensor to one name"
                                : "chunk and split give several tensors");
    value = {};
  }
  for (size_t i = 0; i < names; ++i)
    frames.back().vars[assign.targets[i].name] =
        value.isTuple() ? Val::of(value.tuple[i]) : Val{};
}

int64_t MLIRGenImpl::sizeOf(const ast::Expr &expr) {
  auto cached = exprSizes.find(&expr);
  if (cached != exprSizes.end())
    return cached->second;
  int64_t size = 1;
  // Recursion is bounded by the parser's nesting limit (kMaxNesting).
  if (auto *unary = llvm::dyn_cast<ast::UnaryExpr>(&expr)) {
    if (unary->operand)
      size += sizeOf(*unary->operand);
  } else if (auto *binary = llvm::dyn_cast<ast::BinaryExpr>(&expr)) {
    if (binary->lhs)
      size += sizeOf(*binary->lhs);
    if (binary->rhs)
      size += sizeOf(*binary->rhs);
  } else if (auto *call = llvm::dyn_cast<ast::CallExpr>(&expr)) {
    for (const ast::Arg &arg : call->args)
      if (arg.value)
        size += sizeOf(*arg.value);
    for (const ast::ScopePart &part : call->scope)
      if (part.index)
        size += sizeOf(*part.index);
  } else if (auto *subscript = llvm::dyn_cast<ast::SubscriptExpr>(&expr)) {
    if (subscript->base)
      size += sizeOf(*subscript->base);
    for (const ast::Index &index : subscript->indices)
      for (const ast::ExprPtr *part :
           {&index.value, &index.start, &index.stop, &index.step})
        if (*part)
          size += sizeOf(**part);
  }
  exprSizes[&expr] = size;
  return size;
}

bool MLIRGenImpl::withinLimits(SourceLoc loc, int64_t size) {
  if (abandoned)
    return false;
  unrolledSize += size; // at most kMaxUnrolledSize + one statement's size
  std::string what;
  if (opCounter.count > kMaxGeneratedOps)
    what = "generates more than " + std::to_string(kMaxGeneratedOps) + " ops";
  else if (unrolledSize > kMaxUnrolledSize)
    what = "unrolls to more than " + std::to_string(kMaxUnrolledSize) +
           " expressions";
  if (what.empty())
    return true;
  // Blame the outermost loop or call being unrolled: that is what repeats.
  SourceLoc at = unrollSites.empty() ? loc : unrollSites.front();
  diags.error(at,
              "the spec " + what +
                  " once loops are unrolled and defs inlined (the limit)",
              "each loop iteration and each call of a def repeats its body; "
              "use fewer or smaller loops and layers");
  if (at.line != loc.line || at.col != loc.col)
    diags.note(loc, "the limit was reached here");
  abandoned = true;
  return false;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool MLIRGenImpl::isNamed(Value value) const {
  for (const Frame &frame : frames)
    for (const auto &entry : frame.vars) {
      const Val &var = entry.second;
      if (var.tensor == value || llvm::is_contained(var.tuple, value))
        return true;
    }
  return false;
}

std::vector<std::string> MLIRGenImpl::visibleNames() {
  std::vector<std::string> names;
  if (!frames.empty())
    for (const auto &entry : frames.back().vars)
      names.push_back(entry.first);
  for (const auto &entry : env.config)
    names.push_back(entry.first);
  for (const auto &entry : dims)
    names.push_back(entry.first);
  return names;
}

bool MLIRGenImpl::isConstExpr(const ast::Expr &expr) {
  switch (expr.getKind()) {
  case ast::Expr::Kind::Number:
  case ast::Expr::Kind::Bool:
    return true;
  case ast::Expr::Kind::Name: {
    const std::string &name = llvm::cast<ast::NameExpr>(expr).name;
    if (!frames.empty()) {
      auto it = frames.back().vars.find(name);
      if (it != frames.back().vars.end())
        return it->second.isConst();
    }
    return env.lookup(name).has_value();
  }
  case ast::Expr::Kind::Unary:
    return isConstExpr(*llvm::cast<ast::UnaryExpr>(expr).operand);
  case ast::Expr::Kind::Binary: {
    const auto &binary = llvm::cast<ast::BinaryExpr>(expr);
    return isConstExpr(*binary.lhs) && isConstExpr(*binary.rhs);
  }
  case ast::Expr::Kind::Call: {
    const auto &call = llvm::cast<ast::CallExpr>(expr);
    if (!call.scope.empty())
      return false;
    auto def = defs.find(call.callee);
    if (def != defs.end() && !lookupBuiltin(call.callee)) {
      for (const ast::Arg &arg : call.args)
        if (!arg.value || !isConstExpr(*arg.value))
          return false;
      return defGivesConstant(*def->second);
    }
    if (!isConstFunction(call.callee))
      return false;
    for (const ast::Arg &arg : call.args)
      if (!arg.keyword.empty() || !isConstExpr(*arg.value))
        return false;
    return true;
  }
  case ast::Expr::Kind::Subscript:
    return false; // subscripts index tensors
  }
  return false;
}

bool MLIRGenImpl::defGivesConstant(const ast::DefDecl &def) {
  auto known = constantDefs.find(&def);
  if (known != constantDefs.end())
    return known->second;
  // A def reached again through its own body is no constant: its call
  // reports the recursion.
  constantDefs[&def] = false;
  // Every name the body binds, taken as a number: the body gives one when
  // each assignment and the return are then numbers, for by induction over
  // the statements as they run, every value bound is one.
  std::set<std::string> numbers;
  for (const ast::Param &param : def.params) {
    if (param.type)
      return false; // a typed parameter takes a tensor
    numbers.insert(param.name);
  }
  std::function<void(const ast::Block &)> collect = [&](const ast::Block &b) {
    for (const ast::StmtPtr &stmt : b) {
      if (const auto *assign = llvm::dyn_cast<ast::AssignStmt>(stmt.get()))
        for (const ast::AssignTarget &target : assign->targets)
          numbers.insert(target.name);
      else if (const auto *loop = llvm::dyn_cast<ast::ForStmt>(stmt.get())) {
        numbers.insert(loop->var);
        collect(loop->body);
      }
    }
  };
  collect(def.body);
  std::function<bool(const ast::Expr &)> number = [&](const ast::Expr &e) {
    switch (e.getKind()) {
    case ast::Expr::Kind::Number:
    case ast::Expr::Kind::Bool:
      return true;
    case ast::Expr::Kind::Name: {
      const std::string &name = llvm::cast<ast::NameExpr>(e).name;
      return numbers.count(name) || env.lookup(name).has_value();
    }
    case ast::Expr::Kind::Unary:
      return number(*llvm::cast<ast::UnaryExpr>(e).operand);
    case ast::Expr::Kind::Binary: {
      const auto &binary = llvm::cast<ast::BinaryExpr>(e);
      return number(*binary.lhs) && number(*binary.rhs);
    }
    case ast::Expr::Kind::Call: {
      const auto &call = llvm::cast<ast::CallExpr>(e);
      if (!call.scope.empty())
        return false;
      for (const ast::Arg &arg : call.args)
        if (!arg.value || !number(*arg.value))
          return false;
      auto callee = defs.find(call.callee);
      if (callee != defs.end() && !lookupBuiltin(call.callee))
        return defGivesConstant(*callee->second);
      if (!isConstFunction(call.callee))
        return false;
      for (const ast::Arg &arg : call.args)
        if (!arg.keyword.empty())
          return false;
      return true;
    }
    case ast::Expr::Kind::Subscript:
      return false;
    }
    return false;
  };
  bool returns = false;
  std::function<bool(const ast::Block &)> check = [&](const ast::Block &b) {
    for (const ast::StmtPtr &stmt : b) {
      if (const auto *assign = llvm::dyn_cast<ast::AssignStmt>(stmt.get())) {
        if (assign->targets.size() != 1 || !assign->value ||
            !number(*assign->value))
          return false;
      } else if (const auto *ret =
                     llvm::dyn_cast<ast::ReturnStmt>(stmt.get())) {
        if (!ret->rest.empty() || !ret->value || !number(*ret->value))
          return false;
        returns = true;
      } else if (const auto *loop = llvm::dyn_cast<ast::ForStmt>(stmt.get())) {
        if (!loop->lo || !loop->hi || !number(*loop->lo) ||
            !number(*loop->hi) || !check(loop->body))
          return false;
      }
    }
    return true;
  };
  bool gives = check(def.body) && returns;
  constantDefs[&def] = gives;
  return gives;
}

std::optional<ConstValue> MLIRGenImpl::evalConst(const ast::Expr &expr) {
  NameLookup lookup = [&](const std::string &name) -> std::optional<ConstValue> {
    if (!frames.empty()) {
      auto it = frames.back().vars.find(name);
      if (it != frames.back().vars.end())
        return it->second.constant;
    }
    return env.lookup(name);
  };
  UnknownNameHint hintFor = [&](const std::string &name) -> std::string {
    if (!frames.empty()) {
      auto shapeVar = frames.back().symbolicShapeVars.find(name);
      if (shapeVar != frames.back().symbolicShapeVars.end())
        return "'" + name +
               "' is a shape variable of this def, bound to the dim " +
               shapeVar->second + " at this call: its size is known only at " +
               "run time (bound to a number, it would be that number)";
    }
    if (dims.count(name) || env.findDim(name))
      return "'" + name +
             "' is a dim: its size is known only at run time, so it has no "
             "value where a compile-time number is needed";
    if (!frames.empty() && frames.back().vars.count(name))
      return "'" + name +
             "' is a tensor: a compile-time number (a config value, a loop "
             "variable, a literal) is needed here";
    std::string match = closestMatch(name, visibleNames());
    return match.empty() ? std::string() : "did you mean '" + match + "'?";
  };
  // A def whose body computes a number (defGivesConstant) is inlined here:
  // `for i in 0..half(n)`, `x[:, f(2):]`.
  CallHook call = [&](const ast::CallExpr &c,
                      std::optional<ConstValue> &value) {
    if (!defs.count(c.callee) || lookupBuiltin(c.callee))
      return false;
    Val result = genCall(c);
    value.reset();
    if (result.isConst())
      value = result.constant;
    else if (result.valid())
      diags.error(c.getLoc(), "'" + c.callee +
                                  "' gives a tensor here, where a "
                                  "compile-time number is needed");
    return true;
  };
  return evaluateConstWithHint(expr, lookup, hintFor, diags, call);
}

Val MLIRGenImpl::genExpr(const ast::Expr &expr) {
  if (abandoned)
    return {};
  if (nesting >= kMaxInlinedNesting) {
    diags.error(expr.getLoc(),
                "expressions nest more than " +
                    std::to_string(kMaxInlinedNesting) +
                    " levels deep once defs are inlined (the limit)",
                "a def's body is generated inside the expression that calls "
                "it; assign parts of deep expressions to names");
    abandoned = true;
    return {};
  }
  ++nesting;
  auto leave = llvm::make_scope_exit([&] { --nesting; });
  if (isConstExpr(expr)) {
    std::optional<ConstValue> value = evalConst(expr);
    return value ? Val::of(*value) : Val{};
  }
  switch (expr.getKind()) {
  case ast::Expr::Kind::Name:
    return genName(llvm::cast<ast::NameExpr>(expr));
  case ast::Expr::Kind::Unary:
    return genUnary(llvm::cast<ast::UnaryExpr>(expr));
  case ast::Expr::Kind::Binary:
    return genBinary(llvm::cast<ast::BinaryExpr>(expr));
  case ast::Expr::Kind::Call: {
    const auto &call = llvm::cast<ast::CallExpr>(expr);
    Val value = genCall(call);
    if (value.isTuple() && &expr != tupleExpr) {
      size_t n = value.tuple.size();
      std::string names;
      for (size_t i = 0; i < n; ++i)
        names += (i ? ", " : "") + std::string(1, char('a' + i % 26));
      diags.error(expr.getLoc(),
                  "'" + call.callee + "' gives " + std::to_string(n) +
                      " tensors here, where one is expected",
                  "assign them to names: `" + names + " = " + call.callee +
                      "(...)`");
      return {};
    }
    return value;
  }
  case ast::Expr::Kind::Subscript:
    return genSubscript(llvm::cast<ast::SubscriptExpr>(expr));
  default:
    // Numbers and booleans are constant expressions, handled above.
    return {};
  }
}

Val MLIRGenImpl::genValue(const ast::Expr &expr) {
  const ast::Expr *saved = tupleExpr;
  tupleExpr = &expr;
  Val value = genExpr(expr);
  tupleExpr = saved;
  return value;
}

Val MLIRGenImpl::genName(const ast::NameExpr &expr) {
  if (!frames.empty()) {
    auto it = frames.back().vars.find(expr.name);
    if (it != frames.back().vars.end())
      return it->second; // invalid after an earlier error: no cascade
    auto shapeVar = frames.back().symbolicShapeVars.find(expr.name);
    if (shapeVar != frames.back().symbolicShapeVars.end()) {
      diags.error(expr.getLoc(),
                  "shape variable '" + expr.name + "' is bound to the dim " +
                      shapeVar->second +
                      " at this call and has no value at compile time",
                  "a shape variable bound to a size is that number; one "
                  "bound to a dim stands where a dim may: in types, "
                  "reshapes, a slice's end (`x[:L]`) and arange(L)");
      return {};
    }
  }
  if (dims.count(expr.name)) {
    diags.error(
        expr.getLoc(),
        "dimension '" + expr.name +
            "' is symbolic and has no value at compile time",
        "a dim stands in types, reshapes, a slice's end (`x[:" + expr.name +
            "]`) and arange(" + expr.name + "), and takes no arithmetic");
    return {};
  }
  if (defs.count(expr.name) || lookupBuiltin(expr.name)) {
    diags.error(expr.getLoc(), "'" + expr.name + "' is a function",
                "call it: `" + expr.name + "(...)`");
    return {};
  }
  std::string hint =
      diags.isFull() ? "" : closestMatch(expr.name, visibleNames());
  if (expr.name == "True" || expr.name == "False")
    hint = "did you mean '" +
           std::string(expr.name == "True" ? "true" : "false") +
           "'? (the language's booleans are lower case)";
  else if (expr.name == "inf" || expr.name == "nan")
    hint = "there is no '" + expr.name +
           "' name: write a number (a mask's "
           "fill is a large negative one, masked_fill(s, !mask, -1e9))";
  else if (!hint.empty())
    hint = "did you mean '" + hint + "'?";
  diags.error(expr.getLoc(), "unknown name '" + expr.name + "'", hint);
  return {};
}

Val MLIRGenImpl::genUnary(const ast::UnaryExpr &expr) {
  Val operand = genExpr(*expr.operand);
  if (!operand.valid())
    return {};
  if (!operand.isTensor())
    return {}; // constant operands are folded by isConstExpr
  Type element =
      cast<RankedTensorType>(operand.tensor.getType()).getElementType();
  if (expr.op == ast::UnaryOp::Not) {
    if (!element.isInteger(1)) {
      diags.error(expr.getLoc(), "'!' needs a bool mask, got " +
                                     formatType(operand.tensor.getType()));
      return {};
    }
    return createValue<NotOp>(expr.getLoc(), operand.tensor);
  }
  if (!element.isF32()) {
    diags.error(expr.getLoc(),
                "'-' needs an f32 tensor, got " +
                    formatType(operand.tensor.getType()),
                "float(x) makes an i32 or bool tensor f32 (positions from "
                "arange, a mask)");
    return {};
  }
  return createValue<NegOp>(expr.getLoc(), operand.tensor);
}

Value MLIRGenImpl::materialize(SourceLoc loc, const ConstValue &value,
                               Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  DenseElementsAttr attr;
  // A finite number past f32's range became inf (`x * 1e39`), silently;
  // the builtins that take numbers refuse it by name, and so does this.
  if (elementType.isF32() && std::isfinite(value.asDouble()) &&
      !std::isfinite(static_cast<float>(value.asDouble())))
    diags.error(loc, "the number " + value.str() +
                         " does not fit f32 (at most about 3.4e38 in "
                         "magnitude): it would be " +
                         (value.asDouble() > 0 ? "inf" : "-inf"),
                "use a number f32 can hold (e.g. 1e38)");
  if (elementType.isF32())
    attr = DenseElementsAttr::get(type, static_cast<float>(value.asDouble()));
  else if (elementType.isInteger(32))
    attr = DenseElementsAttr::get(type, static_cast<int32_t>(value.i));
  else
    attr = DenseElementsAttr::get(type, value.b);
  return builder.create<ConstantOp>(getLoc(loc), attr).getResult();
}

Val MLIRGenImpl::genBinary(const ast::BinaryExpr &expr) {
  Val lhs = genExpr(*expr.lhs);
  Val rhs = genExpr(*expr.rhs);
  if (!lhs.valid() || !rhs.valid())
    return {};
  SourceLoc loc = expr.getLoc();
  const char *op = ast::spelling(expr.op);
  // At least one side is a tensor (otherwise the expression was folded).
  Value tensor = lhs.isTensor() ? lhs.tensor : rhs.tensor;
  Type element = cast<RankedTensorType>(tensor.getType()).getElementType();

  auto toTensor = [&](const Val &side, Type elementType) -> Value {
    if (side.isTensor())
      return side.tensor;
    const ConstValue &c = *side.constant;
    if (elementType.isInteger(32) && c.kind != ConstValue::Kind::Int) {
      diags.error(loc, std::string("cannot compare i32 ids with ") + c.str(),
                  "compare with an integer");
      return nullptr;
    }
    if (elementType.isInteger(32) && (c.i < INT32_MIN || c.i > INT32_MAX)) {
      diags.error(loc,
                  std::string("cannot compare i32 ids with ") + c.str() +
                      ": it is outside i32's range",
                  "ids are i32, from -2147483648 to 2147483647");
      return nullptr;
    }
    if (elementType.isF32() && !c.isNumber()) {
      diags.error(loc, std::string("operator '") + op + "' needs a number, got " + c.str());
      return nullptr;
    }
    return materialize(loc, c, elementType);
  };

  switch (expr.op) {
  case ast::BinaryOp::Add:
  case ast::BinaryOp::Sub:
  case ast::BinaryOp::Mul:
  case ast::BinaryOp::Div: {
    for (const Val *side : {&lhs, &rhs}) {
      if (side->isTensor() && !cast<RankedTensorType>(side->tensor.getType())
                                   .getElementType()
                                   .isF32()) {
        diags.error(loc,
                    std::string("operator '") + op +
                        "' needs f32 tensors, got " +
                        formatType(side->tensor.getType()),
                    "float(x) makes an i32 or bool tensor f32 (positions "
                    "from arange, a mask)");
        return {};
      }
    }
    Value a = toTensor(lhs, element), b = toTensor(rhs, element);
    if (!a || !b)
      return {};
    switch (expr.op) {
    case ast::BinaryOp::Add:
      return createValue<AddOp>(loc, {a, b});
    case ast::BinaryOp::Sub:
      return createValue<SubOp>(loc, {a, b});
    case ast::BinaryOp::Mul:
      return createValue<MulOp>(loc, {a, b});
    default:
      return createValue<DivOp>(loc, {a, b});
    }
  }
  case ast::BinaryOp::Eq:
  case ast::BinaryOp::Ne:
  case ast::BinaryOp::Lt:
  case ast::BinaryOp::Le:
  case ast::BinaryOp::Gt:
  case ast::BinaryOp::Ge: {
    if (element.isInteger(1)) {
      // `mask == 0` (the seeds' idiom) is `!mask`; `mask != 0` is `mask`.
      const Val &other = lhs.isTensor() ? rhs : lhs;
      bool eq = expr.op == ast::BinaryOp::Eq, ne = expr.op == ast::BinaryOp::Ne;
      if (lhs.isTensor() != rhs.isTensor() && (eq || ne)) {
        const ConstValue &c = *other.constant;
        bool truth = c.kind == ConstValue::Kind::Bool ? c.b : c.asDouble() != 0;
        bool isZeroOrOne = c.kind == ConstValue::Kind::Bool ||
                           c.asDouble() == 0 || c.asDouble() == 1;
        if (isZeroOrOne) {
          bool keep = eq == truth;
          return keep ? Val::of(tensor) : createValue<NotOp>(loc, tensor);
        }
      }
      diags.error(loc, std::string("cannot apply '") + op + "' to a bool mask",
                  "use `!mask`, `mask == 0` or combine masks with `&` / `|`");
      return {};
    }
    if (lhs.isTensor() && rhs.isTensor() &&
        cast<RankedTensorType>(lhs.tensor.getType()).getElementType() !=
            cast<RankedTensorType>(rhs.tensor.getType()).getElementType()) {
      diags.error(loc, std::string("cannot compare ") +
                           formatType(lhs.tensor.getType()) + " with " +
                           formatType(rhs.tensor.getType()));
      return {};
    }
    Value a = toTensor(lhs, element), b = toTensor(rhs, element);
    if (!a || !b)
      return {};
    CmpPredicate predicate = expr.op == ast::BinaryOp::Eq   ? CmpPredicate::eq
                             : expr.op == ast::BinaryOp::Ne ? CmpPredicate::ne
                             : expr.op == ast::BinaryOp::Lt ? CmpPredicate::lt
                             : expr.op == ast::BinaryOp::Le ? CmpPredicate::le
                             : expr.op == ast::BinaryOp::Gt ? CmpPredicate::gt
                                                            : CmpPredicate::ge;
    return createValue<CmpOp>(
        loc, {a, b},
        {builder.getNamedAttr("predicate",
                              CmpPredicateAttr::get(&context, predicate))});
  }
  case ast::BinaryOp::And:
  case ast::BinaryOp::Or: {
    if (!lhs.isTensor() || !rhs.isTensor() ||
        !element.isInteger(1) ||
        !cast<RankedTensorType>(rhs.tensor.getType()).getElementType().isInteger(1) ||
        !cast<RankedTensorType>(lhs.tensor.getType()).getElementType().isInteger(1)) {
      diags.error(loc, std::string("operator '") + op +
                           "' combines two bool masks",
                  "build masks with padding_mask, causal_mask or a comparison");
      return {};
    }
    if (expr.op == ast::BinaryOp::And)
      return createValue<AndOp>(loc, {lhs.tensor, rhs.tensor});
    return createValue<OrOp>(loc, {lhs.tensor, rhs.tensor});
  }
  case ast::BinaryOp::Pow: {
    // A tensor to a compile-time power (PyTorch `x ** 2`).
    if (rhs.isTensor()) {
      diags.error(expr.rhs->getLoc(),
                  "the exponent of '**' must be a compile-time number, got " +
                      formatType(rhs.tensor.getType()),
                  "a tensor exponent is not supported; for a positive base "
                  "write exp(y * log(x))");
      return {};
    }
    if (!element.isF32()) {
      diags.error(loc, "operator '**' needs an f32 tensor, got " +
                           formatType(lhs.tensor.getType()));
      return {};
    }
    if (!rhs.constant->isNumber()) {
      diags.error(loc, std::string("operator '**' needs a number, got ") +
                           rhs.constant->str());
      return {};
    }
    // As materialize() says it of any number: `x ** 1e39` read "pow
    // exponent must be finite, got inf" of a finite literal.
    const double exponent = rhs.constant->asDouble();
    if (std::isfinite(exponent) &&
        !std::isfinite(static_cast<float>(exponent))) {
      diags.error(expr.rhs->getLoc(),
                  "the number " + rhs.constant->str() +
                      " does not fit f32 (at most about 3.4e38 in "
                      "magnitude): it would be " +
                      (exponent > 0 ? "inf" : "-inf"),
                  "use a number f32 can hold (e.g. 1e38)");
      return {};
    }
    return createValue<PowOp>(
        loc, lhs.tensor,
        {builder.getNamedAttr(
            "exponent", builder.getF32FloatAttr(
                            static_cast<float>(rhs.constant->asDouble())))});
  }
  default:
    diags.error(loc, std::string("operator '") + op +
                         "' works on compile-time numbers only, not tensors");
    return {};
  }
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

std::optional<std::string> MLIRGenImpl::scopePath(const ast::CallExpr &call) {
  std::string path;
  for (const ast::ScopePart &part : call.scope) {
    if (!path.empty())
      path += ".";
    path += part.name;
    if (part.index) {
      std::optional<ConstValue> index = evalConst(*part.index);
      if (!index)
        return std::nullopt;
      // An integral float (`l[d / 2]`) is taken, as subscripts and sizes
      // take one.
      double value = index->asDouble();
      bool integral = index->kind == ConstValue::Kind::Int
                          ? index->i >= 0
                          : index->kind == ConstValue::Kind::Float &&
                                value >= 0 && value < 9.0e15 &&
                                value == std::trunc(value);
      if (!integral) {
        diags.error(part.index->getLoc(),
                    "scope index must be a non-negative integer, got " +
                        index->str());
        return std::nullopt;
      }
      path += "." + std::to_string(index->kind == ConstValue::Kind::Int
                                       ? index->i
                                       : int64_t(value));
    }
  }
  return path;
}

Val MLIRGenImpl::genCall(const ast::CallExpr &call) {
  if (const Builtin *builtin = lookupBuiltin(call.callee))
    return genBuiltinCall(*builtin, call);
  auto def = defs.find(call.callee);
  if (def != defs.end()) {
    calledDefs.insert(call.callee);
    return genDefCall(*def->second, call);
  }
  if (isConstFunction(call.callee)) {
    // A math function that was not folded: an argument is a tensor.
    for (const ast::Arg &arg : call.args)
      genExpr(*arg.value);
    if (!call.scope.empty())
      diags.error(call.getLoc(), "'" + call.callee +
                                     "' creates no parameters; drop `as`");
    else
      diags.error(call.getLoc(),
                  "'" + call.callee +
                      "' works on compile-time numbers only, not tensors");
    return {};
  }
  if (entryNames.count(call.callee)) {
    for (const ast::Arg &arg : call.args)
      genExpr(*arg.value);
    diags.error(call.getLoc(),
                "'" + call.callee +
                    "' is an entry, which a spec cannot call (an entry is "
                    "what the executable runs)",
                "put what both compute in a def (`def " + call.callee +
                    "_body(...)`) and call it from each entry");
    return {};
  }
  // PyTorch's names for what the language writes otherwise.
  std::string hint;
  if (std::string torch = ast::torchEquivalent(call.callee);
      !torch.empty() && !lookupBuiltin(call.callee))
    hint = "PyTorch's '" + call.callee + "': " + torch;
  else if (!diags.isFull()) { // past the shown errors, skip the costly hint
    std::vector<std::string> names = builtinNames();
    for (const auto &entry : defs)
      names.push_back(entry.first);
    hint = closestMatch(call.callee, names);
    if (!hint.empty())
      hint = "did you mean '" + hint + "'?";
  }
  diags.error(call.getLoc(), "unknown function '" + call.callee + "'",
              hint.empty() ? "define it with `def " + call.callee + "(...)`"
                           : hint);
  return {};
}

/// Sets `want` (and a `hint`) when the number `value` is finite but beyond
/// f32's range: the builtins compute in f32, where it would silently become
/// an infinity (PyTorch's masked_fill, clamp and full refuse such a value).
static void checkFitsF32(const ConstValue &value, std::string &want,
                         std::string &hint) {
  double number = value.asDouble();
  if (!std::isfinite(number) || std::isfinite(float(number)))
    return;
  want = "a number f32 can hold (at most about 3.4e38 in magnitude)";
  hint = "in f32 it would become an infinity";
}

/// Sets `want` (and a `hint`) when `tensor`'s element type is not `elem`.
static void checkElementType(Value tensor, ElemKind elem, std::string &want,
                             std::string &hint) {
  Type type = cast<RankedTensorType>(tensor.getType()).getElementType();
  switch (elem) {
  case ElemKind::Any:
    return;
  case ElemKind::F32:
    if (type.isF32())
      return;
    want = "an f32 tensor";
    hint = "`float(...)` turns ids or a mask into f32 values";
    return;
  case ElemKind::I32:
    if (type.isInteger(32))
      return;
    want = "an i32 tensor of ids";
    hint = "ids come from an entry input typed `i32[...]` or from `arange`";
    return;
  case ElemKind::Bool:
    if (type.isInteger(1))
      return;
    want = "a bool mask";
    hint = type.isInteger(32) ? "compare ids to make one: `ids != pad`"
                              : "compare to make one: `x > 0`";
    return;
  }
}

Val MLIRGenImpl::genBuiltinCall(const Builtin &builtin,
                                const ast::CallExpr &call) {
  if (builtin.createsParameters && call.scope.empty()) {
    diags.error(call.getLoc(),
                "'" + call.callee + "' creates parameters and needs a name",
                "write `" + call.callee + "(...) as name`");
    return {};
  }
  if (!builtin.createsParameters && !call.scope.empty()) {
    diags.error(call.scope.front().loc,
                "'" + call.callee + "' creates no parameters; drop `as " +
                    call.scope.front().name + "`");
    return {};
  }
  BoundArgs args;
  args.values.resize(builtin.params.size());
  args.names.resize(builtin.params.size());
  args.locs.assign(builtin.params.size(), call.getLoc());
  std::vector<bool> given(builtin.params.size(), false);
  size_t positional = 0;
  bool ok = true;
  bool reportedExtra = false;
  for (const ast::Arg &arg : call.args) {
    size_t index;
    if (arg.keyword.empty()) {
      index = builtin.restFirst ? builtin.params.size() : positional++;
      if (index >= builtin.params.size()) {
        if (builtin.variadic) {
          // Extra arguments are re-read from the source by the builtin
          // (they may name symbolic dimensions, which have no value).
          args.rest.push_back(Val{});
          args.restLocs.push_back(arg.loc);
          continue;
        }
        ok = false;
        // One error a call, at the first argument too many.
        if (reportedExtra)
          continue;
        reportedExtra = true;
        size_t count = builtin.params.size();
        // min / max of numbers take any number of arguments (ConstEval).
        bool extremum = call.callee == "min" || call.callee == "max";
        diags.error(
            arg.loc,
            "'" + call.callee + "' takes at most " + std::to_string(count) +
                (count == 1 ? " argument" : " arguments"),
            extremum ? "with a tensor argument it is element-wise "
                       "and takes two; nest it: `" +
                           call.callee + "(" + call.callee + "(a, b), c)`"
                     : "");
        continue;
      }
    } else {
      auto it = std::find_if(
          builtin.params.begin(), builtin.params.end(),
          [&](const ParamSpec &spec) { return arg.keyword == spec.name; });
      if (it == builtin.params.end()) {
        std::vector<std::string> names;
        for (const ParamSpec &spec : builtin.params)
          names.push_back(spec.name);
        // PyTorch's keyword for a parameter spelled otherwise here
        // (`dropout(x, p = 0.1)`); else the closest name.
        static const std::map<std::string, std::string> kTorchKeywords = {
            {"p", "rate"},
            {"dim", "axis"},
            {"keepdims", "keepdim"},
            {"input", "x"}};
        auto torch = kTorchKeywords.find(arg.keyword);
        std::string hint = torch != kTorchKeywords.end() &&
                                   llvm::is_contained(names, torch->second)
                               ? torch->second
                               : closestMatch(arg.keyword, names);
        diags.error(arg.loc, "'" + call.callee + "' has no parameter '" +
                                 arg.keyword + "'",
                    hint.empty() ? "" : "did you mean '" + hint + "'?");
        ok = false;
        continue;
      }
      index = it - builtin.params.begin();
      if (given[index]) {
        diags.error(arg.loc, "argument '" + arg.keyword + "' of '" +
                                 call.callee + "' is given twice");
        ok = false;
        continue;
      }
    }
    given[index] = true;
    args.locs[index] = arg.loc;
    const ParamSpec &spec = builtin.params[index];
    if (spec.kind == ArgKind::Name) {
      // A word of the builtin's vocabulary, not a value: it is not evaluated.
      auto *word = llvm::dyn_cast<ast::NameExpr>(arg.value.get());
      if (!word) {
        diags.error(arg.loc, "argument '" + std::string(spec.name) + "' of '" +
                                 call.callee + "' must be a name, such as `" +
                                 spec.name + " = zeros`");
        ok = false;
        continue;
      }
      args.names[index] = word->name;
      args.values[index] = Val::of(ConstValue::ofBool(true));
      continue;
    }
    Val value = genExpr(*arg.value);
    if (!value.valid()) {
      ok = false;
      continue;
    }
    std::string want, hint;
    switch (spec.kind) {
    case ArgKind::Tensor:
      if (!value.isTensor())
        want = "a tensor";
      else
        checkElementType(value.tensor, spec.elem, want, hint);
      // Ids and masks carry no gradient: nothing to stop (float() would
      // have made one).
      if (!want.empty() && call.callee == "stop_gradient" && value.isTensor())
        hint = "ids and masks carry no gradient: use the tensor as it is";
      break;
    case ArgKind::Int:
      // An int is one (INT64_MIN and INT64_MAX too: as doubles they were
      // ±2^63 and read as "not an integer"); a float must be integral and
      // convert to int64 (BoundArgs::integer). The builtin checks ranges.
      if (!value.isConst() || !value.constant->isNumber())
        want = "a compile-time integer";
      else if (value.constant->kind != ConstValue::Kind::Int) {
        const double v = value.constant->asDouble();
        if (v != std::floor(v) || !(v >= -9223372036854775808.0) ||
            !(v < 9223372036854775808.0))
          want = "a compile-time integer";
      }
      break;
    case ArgKind::Number:
      if (!value.isConst() || !value.constant->isNumber())
        want = "a compile-time number";
      else
        checkFitsF32(*value.constant, want, hint);
      break;
    case ArgKind::Bool:
      if (!value.isConst() || value.constant->kind != ConstValue::Kind::Bool)
        want = "true or false";
      break;
    case ArgKind::TensorOrNumber:
      if (!value.isTensor() && !value.constant->isNumber())
        want = "a tensor or a number";
      else if (!value.isTensor())
        checkFitsF32(*value.constant, want, hint);
      break;
    case ArgKind::Name:
      break; // bound above
    }
    if (!want.empty()) {
      std::string got = value.isTensor() ? formatType(value.tensor.getType())
                                         : value.constant->str();
      diags.error(arg.loc,
                  "argument '" + std::string(spec.name) + "' of '" +
                      call.callee + "' must be " + want + ", got " + got,
                  hint);
      ok = false;
      continue;
    }
    args.values[index] = value;
  }
  for (size_t i = 0; i < builtin.params.size(); ++i) {
    if (given[i])
      continue;
    if (builtin.params[i].defaultValue) {
      args.values[i] = Val::of(*builtin.params[i].defaultValue);
    } else {
      diags.error(call.getLoc(), "'" + call.callee + "' needs argument '" +
                                     builtin.params[i].name + "'");
      ok = false;
    }
  }
  if (!ok)
    return {};
  // The `as` name of a builtin names its ops' locations too, as a def's
  // does (`layer_norm(x) as h[i].ln_1` is h.0.ln_1): the profile and the
  // sites table had no scope for them and merged every layer's norms into
  // one row. Its parameters read the path computed here (once: an invalid
  // index is reported once).
  if (call.scope.empty())
    return builtin.fn(*this, call, args);
  std::optional<std::string> path = scopePath(call);
  if (!path)
    return {};
  auto saved = builtinCall;
  builtinCall = {&call, *path};
  Val result = builtin.fn(*this, call, args);
  builtinCall = saved;
  return result;
}

Val MLIRGenImpl::genDefCall(const ast::DefDecl &def,
                            const ast::CallExpr &call) {
  auto active = std::find(callStack.begin(), callStack.end(), def.name);
  if (active != callStack.end()) {
    // Directly (`f` calls `f`) or through others (`f` -> `g` -> `f`).
    std::string through;
    for (auto it = active; it != callStack.end(); ++it)
      through += *it + " -> ";
    diags.error(call.getLoc(),
                "'" + def.name + "' calls itself" +
                    (active + 1 == callStack.end()
                         ? std::string()
                         : " (" + through + def.name + ")"),
                "defs are inlined; recursion has no end");
    return {};
  }
  if (callStack.size() >= kMaxCallDepth) {
    diags.error(call.getLoc(),
                "calls of defs nest more than " +
                    std::to_string(kMaxCallDepth) +
                    " deep here (the limit), from '" + callStack.front() +
                    "' to '" + def.name + "'",
                "defs are inlined at each call; flatten the chain of calls");
    abandoned = true;
    return {};
  }
  // Bind arguments in the caller's frame.
  std::vector<Val> values(def.params.size());
  std::vector<SourceLoc> locs(def.params.size(), call.getLoc());
  std::vector<bool> given(def.params.size(), false);
  std::map<std::string, size_t> byName; // keyword -> parameter index
  size_t positional = 0;
  bool ok = true;
  for (const ast::Arg &arg : call.args) {
    size_t index;
    if (arg.keyword.empty()) {
      index = positional++;
      if (index >= def.params.size()) {
        // One error at the first extra argument, with the count (one per
        // extra argument said "got more" each time).
        if (index == def.params.size()) {
          size_t given = 0;
          for (const ast::Arg &each : call.args)
            given += each.keyword.empty();
          diags.error(arg.loc,
                      "'" + def.name + "' takes " +
                          std::to_string(def.params.size()) +
                          (def.params.size() == 1 ? " argument" : " arguments") +
                          ", got " + std::to_string(given) + " positional");
        }
        ok = false;
        continue;
      }
    } else {
      if (byName.empty()) // built on the first keyword: defs may be long
        for (size_t i = 0; i < def.params.size(); ++i)
          byName.emplace(def.params[i].name, i);
      auto it = byName.find(arg.keyword);
      if (it == byName.end()) {
        diags.error(arg.loc, "'" + def.name + "' has no parameter '" +
                                 arg.keyword + "'");
        ok = false;
        continue;
      }
      index = it->second;
      if (given[index]) {
        diags.error(arg.loc, "argument '" + arg.keyword + "' is given twice");
        ok = false;
        continue;
      }
    }
    given[index] = true;
    locs[index] = arg.loc;
    values[index] = genExpr(*arg.value);
    ok &= values[index].valid();
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    if (!given[i]) {
      diags.error(call.getLoc(), "'" + def.name + "' needs argument '" +
                                     def.params[i].name + "'");
      ok = false;
    }
  }
  if (!ok)
    return {};
  // The def's types are read in the def's own frame: they see config
  // values, dims and the shape variables earlier arguments bound, not the
  // caller's names (a caller's shape variable, local or loop variable of
  // the same name stood in for a shape variable, refusing valid calls and
  // passing wrong ones). A shape variable bound to a size is that number
  // (`def block(x: [B, k]) { ... linear(x, 4 * k) ... }`, and a later
  // type's `k * 2`); one bound to a dim has no value (evalConst's hint
  // says which dim).
  std::optional<std::string> path = scopePath(call); // the caller's names
  if (!path)
    return {};
  frames.push_back({});
  std::map<std::string, Dim> bindings;
  for (size_t i = 0; i < def.params.size(); ++i) {
    if (!checkArgType(def.params[i], values[i], locs[i], def.name, bindings)) {
      frames.pop_back();
      return {};
    }
    for (const auto &[name, dim] : bindings) {
      if (!dim.isSymbolic() && dim.size >= 0)
        frames.back().vars[name] = Val::of(ConstValue::ofInt(dim.size));
      else if (dim.isSymbolic())
        frames.back().symbolicShapeVars[name] = dim.symbol.getValue().str();
    }
  }

  for (size_t i = 0; i < def.params.size(); ++i)
    frames.back().vars[def.params[i].name] = values[i];
  if (!path->empty())
    scope.push_back(*path);
  callStack.push_back(def.name);
  unrollSites.push_back(call.getLoc());
  diags.pushCallSite(call.getLoc(), "in the call of '" + def.name + "' here");
  unsigned errorsBefore = diags.getNumErrorReports();
  std::optional<Val> returned;
  genBlock(def.body, &returned);
  diags.popCallSite();
  unrollSites.pop_back();
  callStack.pop_back();
  if (!path->empty())
    scope.pop_back();
  frames.pop_back();

  if (!returned) {
    if (diags.getNumErrorReports() == errorsBefore && !abandoned)
      diags.error(def.getLoc(), "def '" + def.name + "' does not return a value",
                  "end it with `return expr`");
    return {};
  }
  if (diags.getNumErrorReports() != errorsBefore)
    return {};
  return *returned;
}

//===----------------------------------------------------------------------===//
// Types and parameters
//===----------------------------------------------------------------------===//

void MLIRGenImpl::checkDefParamNames(const ast::DefDecl &def) {
  // The names the types read: a config value or dim is a size; any other
  // name a shape variable.
  // Every name in the types, also inside expressions (`[B, L, d * 2]`).
  std::map<std::string, SourceLoc> typeNames;
  for (const ast::Param &param : def.params)
    if (param.type)
      for (const ast::ExprPtr &dim : param.type->dims)
        ast::forEachName(*dim, [&](const ast::NameExpr &name) {
          typeNames.emplace(name.name, name.getLoc());
        });
  for (const ast::Param &param : def.params) {
    auto it = typeNames.find(param.name);
    if (it == typeNames.end())
      continue;
    // `def f(x: [B, L, n], n)`: the types bound n to x's size and the body
    // read the argument, so the type checked nothing it seemed to.
    const char *kind = dims.count(param.name)               ? "dim"
                       : env.lookup(param.name).has_value() ? "config value"
                                                            : nullptr;
    diags.error(
        param.loc,
        "parameter '" + param.name + "' of '" + def.name +
            "' has the name of " +
            (kind ? "the " + std::string(kind) + " its types use as a size"
                  : std::string("a shape variable of its types")) +
            ": the types would read " +
            (kind ? "the " + std::string(kind)
                  : std::string("the argument's size")) +
            " and the body the argument",
        "rename the parameter or the " +
            std::string(kind ? kind : "shape variable"));
    diags.note(it->second, "'" + param.name + "' in a type here");
  }
}

std::optional<Dim> MLIRGenImpl::resolveDim(const ast::Expr &expr,
                                           std::map<std::string, Dim> *bindings,
                                           bool *isBindingVar) {
  if (isBindingVar)
    *isBindingVar = false;
  if (auto *name = llvm::dyn_cast<ast::NameExpr>(&expr)) {
    auto dim = dims.find(name->name);
    if (dim != dims.end())
      return Dim::symbolic(StringAttr::get(&context, dim->second->name),
                           dim->second->bound);
    // A def's shape variable bound to a dim is that dim where a dim may
    // stand (`reshape(x, B, L, 2, 4)` with L bound to T).
    if (!bindings && !frames.empty())
      if (auto shapeVar = frames.back().symbolicShapeVars.find(name->name);
          shapeVar != frames.back().symbolicShapeVars.end())
        if (auto bound = dims.find(shapeVar->second); bound != dims.end())
          return Dim::symbolic(StringAttr::get(&context, bound->second->name),
                               bound->second->bound);
    bool isLocal = !frames.empty() && frames.back().vars.count(name->name);
    if (!env.lookup(name->name) && !isLocal) {
      if (bindings) {
        if (isBindingVar)
          *isBindingVar = true;
        auto it = bindings->find(name->name);
        if (it != bindings->end())
          return it->second;
        return Dim::fixed(-1); // unbound shape variable; caller binds it
      }
      std::string hint;
      if (!diags.isFull()) { // past the shown errors, skip the costly hint
        std::vector<std::string> names;
        for (const auto &entry : dims)
          names.push_back(entry.first);
        for (const auto &entry : env.config)
          names.push_back(entry.first);
        hint = closestMatch(name->name, names);
      }
      diags.error(expr.getLoc(),
                  "unknown dimension '" + name->name + "'",
                  (hint.empty() ? "" : "did you mean '" + hint + "'? or ") +
                      "declare it with `dim " + name->name + " <= bound`");
      return std::nullopt;
    }
  }
  std::optional<ConstValue> value = evalConst(expr);
  if (!value)
    return std::nullopt;
  double size = value->isNumber() ? value->asDouble() : -1;
  if (size < 1 || size != std::floor(size)) {
    diags.error(expr.getLoc(),
                "dimension must be a positive integer, got " + value->str(),
                size == -1 ? "a size is never inferred (PyTorch's view(-1, "
                             "...)): write every one, with dims (B, T) and "
                             "config values"
                           : "");
    return std::nullopt;
  }
  if (size > static_cast<double>(kMaxDimSize)) {
    diags.error(expr.getLoc(), "dimension " + value->str() +
                                   " is over the limit of " +
                                   std::to_string(kMaxDimSize) + " (2^31 - 1)");
    return std::nullopt;
  }
  return Dim::fixed(static_cast<int64_t>(size));
}

std::optional<RankedTensorType>
MLIRGenImpl::resolveType(const ast::TypeExpr &type,
                         std::map<std::string, Dim> *bindings) {
  Type element = type.dtype == "i32"    ? Type(builder.getI32Type())
                 : type.dtype == "bool" ? Type(builder.getI1Type())
                                        : Type(builder.getF32Type());
  Shape shape;
  bool ok = true;
  for (const ast::ExprPtr &dimExpr : type.dims) {
    std::optional<Dim> dim = resolveDim(*dimExpr, bindings);
    if (!dim) {
      ok = false;
      continue;
    }
    shape.push_back(*dim);
  }
  if (!ok)
    return std::nullopt;
  return getTensorType(shape, element);
}

bool MLIRGenImpl::checkArgType(const ast::Param &param, const Val &arg,
                               SourceLoc argLoc, const std::string &defName,
                               std::map<std::string, Dim> &bindings) {
  if (!param.type)
    return true;
  if (!arg.isTensor()) {
    diags.error(argLoc, "argument '" + param.name + "' of '" + defName +
                            "' must be a tensor, got " + arg.constant->str());
    return false;
  }
  auto type = cast<RankedTensorType>(arg.tensor.getType());
  Shape actual = getShape(type);
  std::string expected = param.type->dtype + "[";
  bool match = type.getRank() == static_cast<int64_t>(param.type->dims.size());
  Type element = type.getElementType();
  std::string dtype = element.isF32() ? "f32" : element.isInteger(32) ? "i32" : "bool";
  match &= dtype == param.type->dtype;
  std::map<std::string, Dim> newBindings = bindings;
  for (size_t i = 0; i < param.type->dims.size(); ++i) {
    const ast::Expr &dimExpr = *param.type->dims[i];
    bool isVar = false;
    std::optional<Dim> dim = resolveDim(dimExpr, &newBindings, &isVar);
    if (!dim)
      return false;
    if (i)
      expected += ", ";
    if (auto *name = llvm::dyn_cast<ast::NameExpr>(&dimExpr); name && isVar)
      expected += name->name;
    else
      expected += dim->isSymbolic() ? dim->symbol.getValue().str()
                                    : std::to_string(dim->size);
    if (!match || i >= actual.size())
      continue;
    if (isVar && !dim->isSymbolic() && dim->size == -1) {
      newBindings[llvm::cast<ast::NameExpr>(dimExpr).name] = actual[i];
      continue;
    }
    match &= *dim == actual[i];
  }
  expected += "]";
  if (!match) {
    // Shape variables an earlier argument bound: say what they stand for.
    std::string bound;
    for (const ast::ExprPtr &dimExpr : param.type->dims) {
      auto *name = llvm::dyn_cast<ast::NameExpr>(dimExpr.get());
      auto it = name ? bindings.find(name->name) : bindings.end();
      if (it == bindings.end() || bound.find("'" + name->name + "'") !=
                                      std::string::npos)
        continue;
      const Dim &dim = it->second;
      bound += std::string(bound.empty() ? "" : ", ") + "'" + name->name +
               "' is " +
               (dim.isSymbolic() ? dim.symbol.getValue().str()
                                 : std::to_string(dim.size));
    }
    std::string hint =
        dtype != param.type->dtype
            ? "its element type is " + dtype + ", the parameter's " +
                  param.type->dtype
        : bound.empty()
            ? ""
            : bound + " here, bound by the argument of an earlier parameter";
    diags.error(argLoc,
                "argument '" + param.name + "' of '" + defName + "' must be " +
                    expected + ", got " + formatType(type),
                hint);
    return false;
  }
  bindings = std::move(newBindings);
  return true;
}

Value MLIRGenImpl::getParameter(const ast::CallExpr &call, StringRef leaf,
                                ArrayRef<int64_t> shape, Init init,
                                std::optional<double> std) {
  std::optional<std::string> path = builtinCall.first == &call
                                        ? std::optional(builtinCall.second)
                                        : scopePath(call);
  if (!path)
    return nullptr;
  std::string name;
  for (const std::string &part : scope)
    name += part + ".";
  name += *path;
  if (!leaf.empty())
    name += "." + leaf.str();
  auto it = paramIndex.find(name);
  if (it == paramIndex.end()) {
    Shape dims;
    for (int64_t size : shape)
      dims.push_back(Dim::fixed(size));
    std::string why = checkSizeLimits(dims);
    if (!why.empty()) {
      diags.error(call.getLoc(), "parameter '" + name + "', f32" +
                                     formatShape(dims) + ", " + why);
      return nullptr;
    }
    paramIndex[name] = params.size();
    params.push_back(
        {name, SmallVector<int64_t>(shape), init, std, call.getLoc()});
  } else if (ArrayRef<int64_t>(params[it->second].shape) != shape) {
    auto format = [](ArrayRef<int64_t> dims) {
      return "[" + llvm::join(llvm::map_range(dims, [](int64_t d) { return std::to_string(d); }), ", ") + "]";
    };
    diags.error(call.getLoc(),
                "parameter '" + name + "' is used with shape " +
                    format(shape) + " here but " +
                    format(params[it->second].shape) + " before",
                "give one of the calls another `as` name");
    // Where "before" is: in a spec of defs and loops it is far away.
    diags.note(params[it->second].loc, "'" + name +
                                           "' is first used here, with shape " +
                                           format(params[it->second].shape));
    return nullptr;
  } else if (params[it->second].init != init ||
             params[it->second].std != std) {
    // One tensor, one initializer: the second would be dropped silently.
    auto describe = [](Init kind, std::optional<double> deviation) {
      std::string text = stringifyInit(kind).str();
      if (deviation) {
        char number[32];
        std::snprintf(number, sizeof(number), "%g", *deviation);
        text += " (std " + std::string(number) + ")";
      }
      return text;
    };
    diags.error(call.getLoc(),
                "parameter '" + name + "' is initialized with " +
                    describe(init, std) + " here but " +
                    describe(params[it->second].init,
                             params[it->second].std) +
                    " before (a shared parameter is one tensor)",
                "give one of the calls another `as` name, or the same "
                "initializer");
    diags.note(params[it->second].loc,
               "'" + name + "' is first used here, initialized with " +
                   describe(params[it->second].init, params[it->second].std));
    return nullptr;
  }
  auto type = RankedTensorType::get(shape, builder.getF32Type());
  return builder
      .create<ParamOp>(getLoc(call.getLoc()), type,
                       FlatSymbolRefAttr::get(&context, name))
      .getResult();
}

bool MLIRGenImpl::checkSizes(SourceLoc loc, TypeRange types,
                             StringRef opName) {
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue;
    std::string why = checkSizeLimits(getShape(tensor));
    if (why.empty())
      continue;
    opName.consume_front("tx.");
    diags.error(loc, "the result of '" + opName.str() + "', " +
                         formatType(tensor) + ", " + why);
    return false;
  }
  return true;
}

bool MLIRGenImpl::checkDimSize(SourceLoc loc, int64_t size, StringRef what) {
  if (size <= kMaxDimSize)
    return true;
  diags.error(loc, what.str() + " is " + std::to_string(size) +
                       ", over the limit of " + std::to_string(kMaxDimSize) +
                       " (2^31 - 1) for a dimension");
  return false;
}

std::optional<int64_t> MLIRGenImpl::staticDim(SourceLoc loc, Value value,
                                              int64_t index, StringRef what) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  int64_t i = index < 0 ? index + rank : index;
  if (i < 0 || i >= rank) {
    diags.error(loc, what.str() + " needs a tensor of rank >= " +
                         std::to_string(index < 0 ? -index : index + 1) +
                         ", got " + formatType(type));
    return std::nullopt;
  }
  if (type.isDynamicDim(i)) {
    diags.error(loc, what.str() + " needs a static dimension " +
                         std::to_string(i) + ", got " + formatType(type));
    return std::nullopt;
  }
  return type.getDimSize(i);
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> txc::mlirGen(MLIRContext &context,
                                   const ast::Module &module,
                                   const ConfigEnv &env,
                                   DiagnosticEngine &diags) {
  return MLIRGenImpl(context, module, env, diags).generate();
}
