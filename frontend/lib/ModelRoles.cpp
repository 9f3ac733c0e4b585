//===- ModelRoles.cpp - the spec's kind and roles, checked and derived ----===//
//
// A spec says what kind of model it is (`kind language_model`) and what each
// entry input means (`ids: i32[B, T] @tokens`); the executable's driver reads
// both from the metadata instead of matching names. Here, after MLIRGen:
//  - the kind and every written role are checked (known, of the kind, on an
//    input of the right dtype and rank, once per entry) and recorded as
//    `tx.kind` on the module and `tx.role` on entry arguments;
//  - a spec without `kind` whose entries use the legacy seq2seq names
//    (train(src, tgt_in, tgt_out), encode(src), decode(tgt, memory, src)) is
//    inferred as seq2seq (`tx.kind_inferred`); any other is kind none;
//  - each entry's role is derived from its inputs and outputs (`tx.role` on
//    the function): train, encode, decode, logits, classify; a declared kind
//    whose forward entries are missing or ambiguous is an error.
// The derived entries (train_grad, decode_init, decode_step, lm_step) get
// their roles from the passes that build them.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

#include "tx/Dialect/TxRoles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::tx;
using namespace txc;
using namespace txc::detail;

namespace {

std::string joinRoles(llvm::ArrayRef<llvm::StringRef> roles,
                      const char *prefix = "@") {
  std::string text;
  for (llvm::StringRef role : roles)
    text += (text.empty() ? "" : ", ") + (prefix + role).str();
  return text;
}

/// The legacy input names of a seq2seq spec and their roles.
std::optional<llvm::StringRef> legacyRole(llvm::StringRef name) {
  if (name == "src")
    return llvm::StringRef("source");
  if (name == "tgt_in" || name == "tgt")
    return llvm::StringRef("target_in");
  if (name == "tgt_out")
    return llvm::StringRef("target_out");
  if (name == "memory")
    return llvm::StringRef("memory");
  return std::nullopt;
}

/// An entry function with what the checks need about it.
struct Entry {
  mutable func::FuncOp func; // an op handle; its methods are not const
  const ast::EntryDecl *decl;
  bool isTrain() const { return func.getSymName() == "train"; }
  /// The argument index with `role`, or -1.
  int argWithRole(llvm::StringRef role) const {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, kRoleAttr);
          attr && attr.getValue() == role)
        return int(i);
    return -1;
  }
  bool has(llvm::StringRef role) const { return argWithRole(role) >= 0; }
  /// Every argument has one of `roles` (and there is at least one).
  bool onlyRoles(llvm::ArrayRef<llvm::StringRef> roles) const {
    if (func.getNumArguments() == 0)
      return false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto attr = func.getArgAttrOfType<StringAttr>(i, kRoleAttr);
      if (!attr || !llvm::is_contained(roles, attr.getValue()))
        return false;
    }
    return true;
  }
  /// One result, of `rank`, f32.
  bool returnsOne(unsigned rank) const {
    if (func.getNumResults() != 1)
      return false;
    auto type = cast<RankedTensorType>(func.getResultTypes()[0]);
    return type.getRank() == rank && type.getElementType().isF32();
  }
  /// One result of logits [B, T, V]: the batch and length of the input
  /// with `role`, a static vocabulary (a `transpose(..., 1, 2)` to [B, V,
  /// T] fit "rank 3", got lm_step, trained, and failed at generate).
  bool returnsLogitsOf(llvm::StringRef role) const {
    int index = argWithRole(role);
    if (!returnsOne(3) || index < 0)
      return false;
    Shape out = getShape(cast<RankedTensorType>(func.getResultTypes()[0]));
    auto inType = dyn_cast<RankedTensorType>(func.getArgument(index).getType());
    if (!inType || inType.getRank() != 2)
      return false;
    Shape in = getShape(inType);
    return out[0] == in[0] && out[1] == in[1] && !out[2].isSymbolic();
  }
};

/// A forward entry role of a kind: what fits it.
struct ForwardRole {
  llvm::StringRef role;
  const char *description;
  std::function<bool(const Entry &)> fits;
};

class RoleChecker {
public:
  RoleChecker(ModuleOp module, const ast::Module &ast,
              txc::DiagnosticEngine &diags)
      : module(module), diags(diags) {
    for (const ast::DeclPtr &decl : ast.decls) {
      if (auto *kind = llvm::dyn_cast_or_null<ast::KindDecl>(decl.get()))
        kindDecl = kind;
      if (auto *def = llvm::dyn_cast_or_null<ast::DefDecl>(decl.get()))
        for (const ast::Param &param : def->params)
          if (!param.role.empty())
            defParamsWithRoles.push_back(&param);
      if (auto *entry = llvm::dyn_cast_or_null<ast::EntryDecl>(decl.get()))
        if (auto func = module.lookupSymbol<func::FuncOp>(entry->name);
            func && func->hasAttr("tx.entry"))
          entries.push_back({func, entry});
    }
  }

  void run() {
    if (kindDecl) {
      std::optional<ModelKind> parsed = parseModelKind(kindDecl->name);
      if (!parsed || *parsed == ModelKind::None) {
        diags.error(kindDecl->nameLoc,
                    "unknown model kind '" + kindDecl->name + "'",
                    "use one of " + declarableKinds());
        return;
      }
      kind = *parsed;
    }
    for (const Entry &entry : entries)
      warnUnreadInputs(entry);
    unsigned errors = diags.getNumErrorReports();
    for (const ast::Param *param : defParamsWithRoles)
      diags.error(param->roleLoc,
                  "role '@" + param->role + "' on '" + param->name +
                      "', a parameter of a def",
                  "roles say what an entry's inputs are; move it to the "
                  "entry parameter that feeds this one");
    for (const Entry &entry : entries)
      checkWrittenRoles(entry);
    if (diags.getNumErrorReports() != errors)
      return;
    bool inferred = false;
    if (!kindDecl)
      inferred = inferLegacySeq2Seq();
    if (kind == ModelKind::None)
      return;
    Builder builder(module.getContext());
    module->setAttr(kKindAttr, builder.getStringAttr(modelKindName(kind)));
    if (inferred)
      module->setAttr(kKindInferredAttr, builder.getUnitAttr());
    deriveEntryRoles(inferred);
  }

private:
  /// An entry input nothing reads still has to be given at every call
  /// (`run --input`, a training batch): most likely a leftover or a typo.
  /// Not one that alone gives a dim the entry uses its size (`arange(T)`,
  /// `wpe[:T]` read T from it): removing it, as the warning said, made the
  /// spec an error.
  void warnUnreadInputs(const Entry &entry) {
    auto symbolsOf = [](Type type, std::set<std::string> &names) {
      if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
        for (const Dim &dim : getShape(tensor))
          if (dim.isSymbolic())
            names.insert(dim.symbol.getValue().str());
    };
    std::set<std::string> used; // dims of the values the entry computes
    entry.func.walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        symbolsOf(type, used);
    });
    std::vector<std::set<std::string>> inputDims;
    std::map<std::string, int> inputsWith; // dim -> the inputs that have it
    for (BlockArgument arg : entry.func.getArguments()) {
      symbolsOf(arg.getType(), inputDims.emplace_back());
      for (const std::string &name : inputDims.back())
        ++inputsWith[name];
    }
    for (unsigned i = 0;
         i < entry.func.getNumArguments() && i < entry.decl->params.size();
         ++i) {
      if (!entry.func.getArgument(i).use_empty())
        continue;
      if (llvm::none_of(inputDims[i], [&](const std::string &name) {
            return inputsWith[name] == 1 && used.count(name) != 0;
          }))
        diags.warning(entry.decl->params[i].loc,
                      "input '" + entry.decl->params[i].name +
                          "' of entry '" + entry.decl->name +
                          "' is never read",
                      "remove it: every call of the entry must still "
                      "give it");
    }
  }

  /// Checks the `@role`s written on `entry`'s parameters and records them.
  void checkWrittenRoles(const Entry &entry) {
    std::map<std::string, SourceLoc> seen;
    for (auto [index, param] : llvm::enumerate(entry.decl->params)) {
      if (param.role.empty())
        continue;
      std::string at = "'@" + param.role + "' on '" + param.name + "'";
      if (!kindDecl) {
        diags.error(param.roleLoc, "role " + at + " needs a `kind` declaration",
                    "declare what the model is, e.g. `kind language_model` "
                    "(one of " +
                        declarableKinds() + ")");
        continue;
      }
      llvm::ArrayRef<llvm::StringRef> allowed = inputRolesOf(kind);
      if (!llvm::is_contained(allowed, param.role)) {
        bool known = isInputRole(param.role) && param.role != "cache" &&
                     param.role != "cache_ids";
        diags.error(param.roleLoc,
                    (known ? "role " + at + " is not a role of a " +
                                 modelKindName(kind).str() + " model"
                           : "unknown role " + at),
                    "the roles of a " + modelKindName(kind).str() +
                        " model are " + joinRoles(allowed));
        continue;
      }
      auto type = cast<RankedTensorType>(entry.func.getArgumentTypes()[index]);
      std::optional<RoleType> want = roleType(param.role);
      if (want && (type.getRank() != int64_t(want->rank) ||
                   (want->isFloat ? !type.getElementType().isF32()
                                  : !type.getElementType().isInteger(32)))) {
        diags.error(param.roleLoc,
                    "role " + at + " needs " + want->what + ", but '" +
                        param.name + "' is " + formatType(type),
                    "give '" + param.name + "' that type, or another role");
        continue;
      }
      if (auto [first, inserted] = seen.emplace(param.role, param.roleLoc);
          !inserted) {
        diags.error(param.roleLoc,
                    "role '@" + param.role + "' is given twice in entry '" +
                        entry.decl->name + "'",
                    "an entry has one input of each role");
        diags.note(first->second, "'@" + param.role + "' is first given here");
        continue;
      }
      entry.func.setArgAttr(index, kRoleAttr,
                            StringAttr::get(module.getContext(), param.role));
    }
  }

  /// A spec without `kind` that follows the legacy seq2seq names.
  bool inferLegacySeq2Seq() {
    auto names = [&](llvm::StringRef entryName) {
      std::set<std::string> found;
      for (const Entry &entry : entries)
        if (entry.func.getSymName() == entryName)
          for (const ast::Param &param : entry.decl->params)
            found.insert(param.name);
      return found;
    };
    std::set<std::string> train = names("train"), encode = names("encode"),
                          decode = names("decode");
    // As the driver has always told seq2seq specs: a train entry taking
    // src and a target, or encode taking src and decode taking tgt.
    bool trains =
        train.count("src") && (train.count("tgt_in") || train.count("tgt"));
    bool decodes =
        encode.count("src") && (decode.count("tgt") || decode.count("tgt_in"));
    if (!trains && !decodes)
      return false;
    kind = ModelKind::Seq2Seq;
    for (const Entry &entry : entries) {
      llvm::StringRef name = entry.func.getSymName();
      if (name != "train" && name != "encode" && name != "decode")
        continue;
      for (auto [index, param] : llvm::enumerate(entry.decl->params)) {
        std::optional<llvm::StringRef> role = legacyRole(param.name);
        if (!role)
          continue;
        auto type =
            cast<RankedTensorType>(entry.func.getArgumentTypes()[index]);
        std::optional<RoleType> want = roleType(*role);
        if (want && type.getRank() == int64_t(want->rank) &&
            (want->isFloat ? type.getElementType().isF32()
                           : type.getElementType().isInteger(32)))
          entry.func.setArgAttr(index, kRoleAttr,
                                StringAttr::get(module.getContext(), *role));
      }
    }
    return true;
  }

  void deriveEntryRoles(bool inferred) {
    // The training entry is the one named `train` (the one tx-autodiff
    // differentiates); it needs its kind's training inputs.
    llvm::SmallVector<llvm::StringRef> trainRoles;
    llvm::SmallVector<ForwardRole> forward;
    switch (kind) {
    case ModelKind::Seq2Seq:
      trainRoles = {"source", "target_in", "target_out"};
      forward.push_back(
          {"encode",
           "a forward entry taking @source (and no @target_in) with one "
           "result, the memory",
           [](const Entry &e) {
             return e.has("source") && !e.has("target_in") &&
                    e.func.getNumResults() == 1;
           }});
      forward.push_back(
          {"decode",
           "a forward entry taking @target_in and @memory and returning "
           "logits [B, T, V]",
           [](const Entry &e) {
             return e.has("target_in") && e.has("memory") &&
                    !e.has("target_out") && e.returnsLogitsOf("target_in");
           }});
      break;
    case ModelKind::LanguageModel:
      trainRoles = {"tokens", "targets"};
      forward.push_back({"logits",
                         "a forward entry taking only @tokens and returning "
                         "logits [B, T, V]",
                         [](const Entry &e) {
                           return e.onlyRoles({"tokens"}) &&
                                  e.returnsLogitsOf("tokens");
                         }});
      break;
    case ModelKind::Classifier:
      trainRoles = {"tokens", "label"};
      forward.push_back(
          {"classify",
           "a forward entry taking @tokens (and @segments) and returning "
           "class logits [B, C]",
           [](const Entry &e) {
             return e.has("tokens") && e.onlyRoles({"tokens", "segments"}) &&
                    e.returnsOne(2);
           }});
      break;
    case ModelKind::None:
      return;
    }
    Builder builder(module.getContext());
    std::string kindName = modelKindName(kind).str();
    for (const Entry &entry : entries) {
      if (!entry.isTrain())
        continue;
      llvm::SmallVector<llvm::StringRef> missing;
      for (llvm::StringRef role : trainRoles)
        if (!entry.has(role))
          missing.push_back(role);
      // `train` feeds the training entry its kind's roles only (a
      // classifier's @segments too): another input compiled, and `train`
      // then failed naming the executable's metadata, with no spec line.
      llvm::SmallVector<llvm::StringRef> fed = trainRoles;
      if (kind == ModelKind::Classifier)
        fed.push_back("segments");
      bool unfed = false;
      for (unsigned i = 0; missing.empty() && i < entry.func.getNumArguments();
           ++i) {
        auto role = entry.func.getArgAttrOfType<StringAttr>(i, kRoleAttr);
        if (role && llvm::is_contained(fed, role.getValue()))
          continue;
        // With the kind inferred from legacy names too: `train` then
        // failed saying the model had no train_step entry.
        unfed = true;
        const ast::Param *param =
            i < entry.decl->params.size() ? &entry.decl->params[i] : nullptr;
        diags.error(param ? param->loc : entry.decl->getLoc(),
                    "input '" + (param ? param->name : std::to_string(i)) +
                        "' of the training entry 'train' has " +
                        (role ? "role @" + role.getValue().str()
                              : std::string("no role")) +
                        ": `train` feeds a " + kindName +
                        " model's training entry only inputs with roles " +
                        joinRoles(fed),
                    "compute it in the entry from those inputs, or declare "
                    "no kind and call the entry with `run train`");
      }
      if (missing.empty() && !unfed) {
        entry.func->setAttr(kRoleAttr, builder.getStringAttr("train"));
      } else if (!missing.empty() && !inferred) {
        diags.error(entry.decl->getLoc(),
                    "the training entry 'train' of a " + kindName +
                        " model needs inputs with roles " +
                        joinRoles(trainRoles) + "; " + joinRoles(missing) +
                        " missing",
                    "write the missing roles after the types of its "
                    "inputs, e.g. `labels: i32[B, T] @" +
                        missing.front().str() + "`");
      }
    }
    for (const ForwardRole &role : forward) {
      llvm::SmallVector<const Entry *> fits;
      for (const Entry &entry : entries)
        if (!entry.isTrain() && role.fits(entry))
          fits.push_back(&entry);
      if (fits.size() == 1) {
        fits[0]->func->setAttr(kRoleAttr, builder.getStringAttr(role.role));
        continue;
      }
      if (inferred)
        continue;
      if (fits.empty()) {
        // Each entry as the role sees it: its inputs' roles and results,
        // so the input that keeps it from fitting shows.
        std::string names;
        for (const Entry &entry : entries) {
          if (entry.isTrain())
            continue;
          std::string inputs;
          for (unsigned i = 0; i < entry.func.getNumArguments(); ++i) {
            auto attr = entry.func.getArgAttrOfType<StringAttr>(i, kRoleAttr);
            std::string name = i < entry.decl->params.size()
                                   ? entry.decl->params[i].name
                                   : "#" + std::to_string(i);
            inputs += (inputs.empty() ? "" : ", ") + name +
                      (attr ? " @" + attr.getValue().str()
                            : std::string(" with no role"));
          }
          std::string results;
          for (Type type : entry.func.getResultTypes())
            results += (results.empty() ? "" : ", ") + formatType(type);
          names += (names.empty() ? "'" : "; '") +
                   entry.func.getSymName().str() + "' (" + inputs + " -> " +
                   (results.empty() ? "nothing" : results) + ")";
        }
        diags.error(kindDecl->getLoc(),
                    "a " + kindName + " model needs a '" + role.role.str() +
                        "' entry: " + role.description +
                        "; none of the "
                        "entries (" +
                        names + ") fits",
                    "add that entry, or declare another kind");
        continue;
      }
      std::string names;
      for (const Entry *entry : fits)
        names += (names.empty() ? "'" : " and '") +
                 entry->func.getSymName().str() + "'";
      diags.error(fits[1]->decl->getLoc(),
                  "entries " + names + " both fit role '" + role.role.str() +
                      "' (" + role.description + ")",
                  "change the roles of the inputs of all but one of them");
    }
  }

  ModuleOp module;
  txc::DiagnosticEngine &diags;
  const ast::KindDecl *kindDecl = nullptr;
  std::vector<const ast::Param *> defParamsWithRoles;
  ModelKind kind = ModelKind::None;
  std::vector<Entry> entries;
};

} // namespace

void txc::detail::checkModelRoles(ModuleOp module, const ast::Module &ast,
                                  DiagnosticEngine &diags) {
  RoleChecker(module, ast, diags).run();
}
