//===- MLIRGen.h - spec AST to the tx dialect --------------------*- C++ -*-===//
//
// MLIRGen walks a parsed spec and emits a module of tx ops: one `func.func`
// per `entry` (marked `tx.entry`), one `tx.parameter` per parameter (named by
// the `as` call path, PyTorch state_dict style), `def` blocks inlined at each
// call. Shapes are inferred op by op with the dialect's own rules; every
// error — unknown names, wrong arguments, shapes that do not fit — is
// reported at its spec location, and generation goes on to report the rest.
//
// Loops are unrolled and defs inlined, so a short spec can ask for unbounded
// work: generation stops with an error at the limits below (documented in
// docs/spec-language.md, "Limits").
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_MLIRGEN_H
#define TXC_FRONTEND_MLIRGEN_H

#include "txc/Frontend/AST.h"
#include "txc/Frontend/ConstEval.h"
#include "txc/Frontend/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class Diagnostic;
} // namespace mlir

namespace txc {

/// Defs inlined inside each other at once (a chain of calls f0 -> f1 -> ...).
constexpr unsigned kMaxCallDepth = 128;
/// Expressions nested inside each other once defs are inlined: each def's
/// body nests at most `kMaxNesting` (Parser.h) deep, and calls stack them.
constexpr unsigned kMaxInlinedNesting = 1024;
/// Ops generated for the whole spec (every entry, every loop iteration and
/// every inlined call counted).
constexpr int64_t kMaxGeneratedOps = 100000;
/// Expression nodes generated for the whole spec: the size of the program
/// once loops are unrolled and defs inlined (each iteration counts one more),
/// bounding the work of statements that generate no ops.
constexpr int64_t kMaxUnrolledSize = 1000000;

/// Reports an MLIR diagnostic (and its notes) to `diags` at the spec
/// location it carries. MLIRGen and the compiler's passes both use it, so
/// every error of a compilation reads `file:line:col: error: ...`.
void reportToSpec(mlir::Diagnostic &diag, DiagnosticEngine &diags);

/// Lowers `module` (whose config was evaluated into `env`) to tx IR in
/// `context` (which must have the tx and func dialects loaded). Returns null
/// when any error was reported to `diags`.
mlir::OwningOpRef<mlir::ModuleOp> mlirGen(mlir::MLIRContext &context,
                                          const ast::Module &module,
                                          const ConfigEnv &env,
                                          DiagnosticEngine &diags);

} // namespace txc

#endif // TXC_FRONTEND_MLIRGEN_H
