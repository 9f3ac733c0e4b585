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

def FuseAddNormPass : Pass<"tx-fuse-add-norm", "mlir::ModuleOp"> {
  let summary = "fuses layer_norm(x + y) into tx.add_layer_norm";
  let description = [{
    Rewrites `tx.layer_norm(tx.add(x, y), weight, bias)` into one
    `tx.add_layer_norm x, y, weight, bias` (one pass over memory in the
    runtime), for either operand order. When the sum has other users, they
    use the fused op's second result (only when they come after the norm).
    Adds whose operands have different types (broadcasting) are left
    alone.
  }];
}

def FuseLinearPass : Pass<"tx-fuse-linear", "mlir::ModuleOp"> {
  let summary = "folds activations and residual adds into tx.linear epilogues";
  let description = [{
    `relu(linear(x))` / `gelu(linear(x))` become `linear(x)` with that
    `activation`, and `linear(x) + r` (either order, same type, no
    broadcasting) becomes `linear(x)` with `residual r` — oneDNN post-ops in
    the runtime. A linear whose result has other users, or that already has
    the epilogue part, is left alone.
  }];
}

def PlanMemoryPass : Pass<"tx-plan-memory", "mlir::ModuleOp"> {
  let summary = "assigns every tensor an offset in an arena from liveness";
  let description = [{
    Parameters get offsets in the parameter arena (`offset` on each
    `tx.parameter`, total in the module's `tx.param_arena_bytes`). In each
    entry, every intermediate tensor gets an offset in one activation arena:
    its size is its upper bound (symbolic dimensions at their bounds, 64-byte
    aligned), its lifetime runs from its definition to its last use (to the
    end for returned values), and buffers are placed largest first at the
    lowest offset that no buffer with an overlapping lifetime occupies.
    `tx.reshape` results share their operand's buffer, and an element-wise op
    whose first operand dies at it writes in place. Each op gets
    `tx.offsets` (one offset per result, -1 for none); each entry gets
    `tx.arena_bytes` (the arena) and `tx.tensor_bytes` (the sum of all its
    buffers without reuse).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "byte alignment of every buffer">,
  ];
}

def LowerEntriesPass : Pass<"tx-lower-entries", "mlir::ModuleOp"> {
  let summary = "lowers planned entries to runtime calls and linalg glue";
  let description = [{
    Replaces each planned entry `@name` by
    `func.func @txc_entry_name(ctx, params, arena, dims, inputs, outputs) -> i32`
    (all pointers): tensors become addresses (inputs, parameter offsets,
    planned arena offsets); heavy ops (linear, matmul, layer_norm,
    add_layer_norm, softmax, embedding, cross_entropy, dropout, attention,
    gelu, reductions) become calls into libtxrt declared through the runtime
    registry, each followed by a status check that returns the status on
    failure; element-wise and layout ops become `linalg.generic` on memref
    views. Returned values are copied to `outputs`. `tx.parameter`s are
    removed (their layout is in the model metadata).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // TXC_TRANSFORMS_PASSES_TD
