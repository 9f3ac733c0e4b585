//===- Passes.td - txc passes -------------------------------*- tablegen -*-===//
//
// Every txc pass is declared here and implemented in one file of
// compiler/lib/Transforms named after it (without the Pass suffix).
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TRANSFORMS_PASSES_TD
#define TXC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ShapeCheckPass : Pass<"tx-shape-check", "mlir::ModuleOp"> {
  let summary = "checks that entries are well-formed tx programs";
  let description = [{
    Re-infers the result type of every tx op and checks it against the IR,
    checks that every `tx.param` names a `tx.parameter` of the same type,
    that every entry (`func.func` with `tx.entry`) returns ranked tensors,
    and that symbolic dimensions with the same symbol carry the same bound
    throughout the module. Runs after the frontend and after every rewrite.
  }];
}

def StripDropoutPass : Pass<"tx-strip-dropout", "mlir::ModuleOp"> {
  let summary = "removes tx.dropout from entries that do not train";
  let description = [{
    Dropout is the identity outside training. This pass replaces every
    `tx.dropout` in an entry whose `tx.entry` kind is not `train` (and in
    every entry when `all` is set) by its input.
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "also strip dropout from train entries">,
  ];
}

#endif // TXC_TRANSFORMS_PASSES_TD
