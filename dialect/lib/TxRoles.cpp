//===- TxRoles.cpp - model kinds, entry roles and input roles -------------===//
//
// The tables behind TxRoles.h, and the dialect's verification of the
// `tx.kind`, `tx.kind_inferred` and `tx.role` attributes.
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxRoles.h"
#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tx;

namespace {
constexpr ModelKind kAllKinds[] = {ModelKind::None, ModelKind::Seq2Seq,
                                   ModelKind::LanguageModel,
                                   ModelKind::Classifier};

const llvm::StringRef kSeq2SeqInputs[] = {"source", "target_in", "target_out",
                                          "memory"};
const llvm::StringRef kLanguageModelInputs[] = {"tokens", "targets"};
const llvm::StringRef kClassifierInputs[] = {"tokens", "segments", "label"};
const llvm::StringRef kDerivedInputs[] = {"cache", "cache_ids"};

const llvm::StringRef kSeq2SeqEntries[] = {
    "train", "train_grad", "encode", "decode", "decode_init", "decode_step"};
const llvm::StringRef kLanguageModelEntries[] = {"train", "train_grad",
                                                 "logits", "lm_step"};
const llvm::StringRef kClassifierEntries[] = {"train", "train_grad",
                                              "classify"};
} // namespace

llvm::StringRef mlir::tx::modelKindName(ModelKind kind) {
  switch (kind) {
  case ModelKind::None:
    return "none";
  case ModelKind::Seq2Seq:
    return "seq2seq";
  case ModelKind::LanguageModel:
    return "language_model";
  case ModelKind::Classifier:
    return "classifier";
  }
  return "none";
}

std::optional<ModelKind> mlir::tx::parseModelKind(llvm::StringRef name) {
  for (ModelKind kind : kAllKinds)
    if (modelKindName(kind) == name)
      return kind;
  return std::nullopt;
}

std::string mlir::tx::declarableKinds() {
  return "seq2seq, language_model, classifier";
}

llvm::ArrayRef<llvm::StringRef> mlir::tx::inputRolesOf(ModelKind kind) {
  switch (kind) {
  case ModelKind::None:
    return {};
  case ModelKind::Seq2Seq:
    return kSeq2SeqInputs;
  case ModelKind::LanguageModel:
    return kLanguageModelInputs;
  case ModelKind::Classifier:
    return kClassifierInputs;
  }
  return {};
}

llvm::ArrayRef<llvm::StringRef> mlir::tx::entryRolesOf(ModelKind kind) {
  switch (kind) {
  case ModelKind::None:
    return {};
  case ModelKind::Seq2Seq:
    return kSeq2SeqEntries;
  case ModelKind::LanguageModel:
    return kLanguageModelEntries;
  case ModelKind::Classifier:
    return kClassifierEntries;
  }
  return {};
}

bool mlir::tx::isInputRole(llvm::StringRef role) {
  return llvm::is_contained(kDerivedInputs, role) ||
         llvm::any_of(kAllKinds, [&](ModelKind kind) {
           return llvm::is_contained(inputRolesOf(kind), role);
         });
}

bool mlir::tx::isEntryRole(llvm::StringRef role) {
  return llvm::any_of(kAllKinds, [&](ModelKind kind) {
    return llvm::is_contained(entryRolesOf(kind), role);
  });
}

std::optional<RoleType> mlir::tx::roleType(llvm::StringRef role) {
  if (role == "memory")
    return RoleType{3, true, "f32 [B, S, d]"};
  if (role == "label")
    return RoleType{1, false, "i32 class ids [B]"};
  if (role == "cache")
    return std::nullopt;
  return RoleType{2, false, "i32 token ids [B, T]"};
}

//===----------------------------------------------------------------------===//
// Verification of the attributes
//===----------------------------------------------------------------------===//

LogicalResult TxDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kKindAttr) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !kind || !parseModelKind(kind.getValue()))
      return op->emitError() << "'" << kKindAttr
                             << "' must be a string on a module, one of none, "
                             << declarableKinds();
    return success();
  }
  if (name == kKindInferredAttr) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kKindInferredAttr
                             << "' must be a unit attribute on a module";
    return success();
  }
  if (name == kRoleAttr) {
    auto role = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !role || !isEntryRole(role.getValue()))
      return op->emitError() << "'" << kRoleAttr
                             << "' on an operation must be an entry role "
                                "string on a function";
    return success();
  }
  return success();
}

LogicalResult TxDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  if (attr.getName().getValue() != kRoleAttr)
    return success();
  auto role = dyn_cast<StringAttr>(attr.getValue());
  if (!role || !isInputRole(role.getValue()))
    return op->emitError() << "argument " << argIndex << ": '" << kRoleAttr
                           << "' must be an input role string";
  return success();
}

LogicalResult TxDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  if (attr.getName().getValue() != kRoleAttr)
    return success();
  auto role = dyn_cast<StringAttr>(attr.getValue());
  if (!role || role.getValue() != "cache")
    return op->emitError() << "result " << resultIndex << ": '" << kRoleAttr
                           << "' must be \"cache\"";
  return success();
}
