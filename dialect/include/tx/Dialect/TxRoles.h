//===- TxRoles.h - model kinds, entry roles and input roles ------*- C++
//-*-===//
//
// What a spec's `kind` and `@role`s may say (docs/spec-language.md, "Roles
// and model kinds"), in one place for the frontend that checks them, the
// dialect that verifies the attributes carrying them, and the passes that
// derive entries. In the IR:
//   module attributes {tx.kind = "language_model", tx.kind_inferred}
//   func.func @logits(%ids: tensor<...> {tx.name = "ids", tx.role = "tokens"})
//       -> (tensor<...> {tx.name = "logits"}) attributes {tx.role = "logits"}
// An entry or input without `tx.role` has the empty role (only `run`).
//
//===----------------------------------------------------------------------===//
#ifndef TX_DIALECT_TXROLES_H
#define TX_DIALECT_TXROLES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::tx {

enum class ModelKind { None, Seq2Seq, LanguageModel, Classifier };

/// "none", "seq2seq", "language_model", "classifier".
llvm::StringRef modelKindName(ModelKind kind);
std::optional<ModelKind> parseModelKind(llvm::StringRef name);
/// The kinds a spec may declare: "seq2seq, language_model, classifier".
std::string declarableKinds();

/// The input roles a spec may write for `kind` (not "cache" / "cache_ids",
/// which only derived entries have).
llvm::ArrayRef<llvm::StringRef> inputRolesOf(ModelKind kind);
/// The entry roles of `kind`, derived ones included.
llvm::ArrayRef<llvm::StringRef> entryRolesOf(ModelKind kind);
/// Any kind's input role, or "cache" / "cache_ids".
bool isInputRole(llvm::StringRef role);
/// Any kind's entry role.
bool isEntryRole(llvm::StringRef role);

/// What an input with `role` must be: rank and element type.
struct RoleType {
  unsigned rank;
  bool isFloat;     ///< f32, else i32
  const char *what; ///< "i32 token ids [B, T]"
};
/// Roles written in specs; nullopt for "cache" (any f32 tensor).
std::optional<RoleType> roleType(llvm::StringRef role);

/// "tx.kind", "tx.kind_inferred", "tx.role".
constexpr llvm::StringLiteral kKindAttr = "tx.kind";
constexpr llvm::StringLiteral kKindInferredAttr = "tx.kind_inferred";
constexpr llvm::StringLiteral kRoleAttr = "tx.role";
/// On the module: why tx-decode-step derived no decode_step / lm_step (the
/// metadata's "no_kv_cache"; decoding then re-runs the prefix).
constexpr llvm::StringLiteral kNoKvCacheAttr = "tx.no_kv_cache";

} // namespace mlir::tx

#endif // TX_DIALECT_TXROLES_H
