//===- SpecFrontendFuzzer.cpp - fuzz txc from spec text to memory plan ----===//
//
// One input is the text of a spec (.tx). It goes through what
// `txc --emit=planned` runs in-process, without lowering or linking:
//
//   parse -> AST printer -> config -> MLIRGen -> tx-shape-check
//   -> tx-fuse-attention -> tx-fuse-add-norm -> tx-fuse-linear
//   -> tx-decode-step -> tx-autodiff -> tx-optimizer -> tx-shape-check
//   -> tx-strip-dropout -> tx-plan-memory -> the buffer table
//
// Besides crashes, hangs and sanitizer reports it checks what txc promises:
// a stage that fails has reported an error (txc would otherwise exit 1
// saying "0 errors generated"), and a pass that succeeds leaves IR that
// verifies (a verifier error after a successful pass is a compiler bug that
// txc would show the user as an error in their spec).
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"
#include "txc/Frontend/ConstEval.h"
#include "txc/Frontend/Diagnostics.h"
#include "txc/Frontend/MLIRGen.h"
#include "txc/Frontend/Parser.h"
#include "txc/Transforms/MemoryPlan.h"
#include "txc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "fuzz-spec-frontend: %s\n", what.c_str());
  std::abort();
}

/// Verifies the module after every pass that succeeded; a failure is a bug
/// of that pass, reported with the verifier's message.
class VerifyAfterPass : public PassInstrumentation {
public:
  void runAfterPass(Pass *pass, Operation *op) override {
    std::string messages;
    {
      ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &diag) {
        messages += diag.str() + "\n";
        return success();
      });
      if (succeeded(verify(op)))
        return;
    }
    fail("the IR does not verify after " + pass->getArgument().str() +
         " succeeded:\n" + messages);
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  txc::SourceFile file("fuzz.tx",
                       std::string(reinterpret_cast<const char *>(data), size));
  txc::DiagnosticEngine diags(file);
  std::unique_ptr<txc::ast::Module> ast = txc::parseSpec(file, diags);
  if (!ast)
    fail("parseSpec returned no module");
  if (diags.hasErrors())
    return 0;
  (void)txc::ast::print(*ast);

  txc::ConfigEnv env = txc::evaluateConfig(*ast, {}, diags);
  if (diags.hasErrors())
    return 0;

  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.loadDialect<tx::TxDialect, func::FuncDialect>();
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module = txc::mlirGen(context, *ast, env, diags);
  if (!module) {
    if (!diags.hasErrors())
      fail("MLIRGen returned no module and reported no error");
    return 0;
  }
  if (diags.hasErrors())
    return 0;

  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    txc::reportToSpec(diag, diags);
    return success();
  });
  PassManager pm(&context);
  pm.enableVerifier(false); // VerifyAfterPass tells bugs from spec errors
  pm.addInstrumentation(std::make_unique<VerifyAfterPass>());
  pm.addPass(tx::createShapeCheckPass());
  pm.addPass(tx::createFuseAttentionPass());
  pm.addPass(tx::createFuseAddNormPass());
  pm.addPass(tx::createFuseLinearPass());
  pm.addPass(tx::createDecodeStepPass());
  pm.addPass(tx::createAutodiffPass());
  pm.addPass(tx::createOptimizerPass());
  pm.addPass(tx::createShapeCheckPass());
  pm.addPass(tx::createStripDropoutPass());
  pm.addPass(tx::createAttentionLayoutPass());
  pm.addPass(tx::createInferenceFingerprintPass());
  pm.addPass(tx::createPlanMemoryPass());
  if (failed(pm.run(*module))) {
    if (!diags.hasErrors())
      fail("a pass failed and reported no error");
    return 0;
  }
  if (diags.hasErrors())
    return 0;
  std::string table;
  llvm::raw_string_ostream os(table);
  tx::printMemoryPlan(*module, os);
  return 0;
}
