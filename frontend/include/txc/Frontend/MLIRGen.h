//===- MLIRGen.h - spec AST to the tx dialect --------------------*- C++ -*-===//
//
// MLIRGen walks a parsed spec and emits a module of tx ops: one `func.func`
// per `entry` (marked `tx.entry`), one `tx.parameter` per parameter (named by
// the `as` call path, PyTorch state_dict style), `def` blocks inlined at each
// call. Shapes are inferred op by op with the dialect's own rules; every
// error — unknown names, wrong arguments, shapes that do not fit — is
// reported at its spec location, and generation goes on to report the rest.
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
