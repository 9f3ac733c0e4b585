//===- TxDialect.td - the tx dialect ------------------------*- tablegen -*-===//
//
// The tx dialect describes a Transformer as written in a spec: ranked tensors
// of f32, i32 token ids and i1 masks, with named parameters and the ops of
// DESIGN.md §5. Symbolic (dynamic) dimensions carry their symbol and upper
// bound in a `#tx.dims` tensor encoding.
//
//===----------------------------------------------------------------------===//
#ifndef TX_DIALECT_TD
#define TX_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tx_Dialect : Dialect {
  let name = "tx";
  let cppNamespace = "::mlir::tx";
  let summary = "Transformer model dialect of txc";
  let description = [{
    The `tx` dialect is the first IR of txc. A spec's entries become
    `func.func` bodies of `tx` ops on ranked tensors; parameters are
    module-level `tx.parameter` symbols read with `tx.param`.

    **Element types.** `f32` activations and parameters, `i32` token ids, `i1`
    masks.

    **Dimensions.** A dimension is either static (`512`) or symbolic (`?`).
    Every symbolic dimension of a tensor carries a symbol and an upper bound in
    the tensor's encoding, in order of the dynamic dimensions:

    ```mlir
    tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>
    ```

    Two dimensions are equal when both are static and equal, or both are
    symbolic with the same symbol.

    **Broadcasting.** Element-wise ops broadcast like NumPy: shapes are
    aligned at their last dimension; a missing leading dimension or a static
    dimension of size 1 stretches to the other operand's dimension; any other
    pair of dimensions must be equal. The result has the broadcast shape.

    **Roles.** What kind of model the module is and what each entry and
    entry input means to the executable's driver (docs/spec-language.md):
    `tx.kind` (a string: none, seq2seq, language_model, classifier) and
    `tx.kind_inferred` (unit: inferred from legacy input names) on the
    module; `tx.role` on an entry function (its entry role), on its
    arguments (input roles) and on its results (`"cache"`):

    ```mlir
    module @gpt attributes {tx.kind = "language_model"} {
      func.func @logits(%ids: tensor<?x?xi32, #tx.dims<B: 8, T: 64>>
                          {tx.name = "ids", tx.role = "tokens"}) -> ...
          attributes {tx.entry = "logits", tx.role = "logits"}
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  // tx.kind / tx.kind_inferred on the module, tx.role on entries, their
  // arguments and results (TxRoles.h).
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

// Every tx op but tx.parameter computes inside a function (an entry or a
// def): one at module level verified and was dropped, or named another
// problem later (`tx.param` at module level: "refers to no tx.parameter").
def Tx_InFunction : NativeOpTrait<"InFunction"> {
  let cppNamespace = "::mlir::tx";
}

class Tx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tx_Dialect, mnemonic, !listconcat(traits, [Tx_InFunction])>;

// An op of the module itself (tx.parameter).
class Tx_ModuleOp<string mnemonic, list<Trait> traits = []>
    : Op<Tx_Dialect, mnemonic, traits>;

#endif // TX_DIALECT_TD
