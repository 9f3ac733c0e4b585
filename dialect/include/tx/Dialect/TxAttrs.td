//===- TxAttrs.td - tx dialect attributes -------------------*- tablegen -*-===//
//
// `#tx.dims` (the symbolic-dimension tensor encoding) and the enum attributes
// used by tx ops.
//
//===----------------------------------------------------------------------===//
#ifndef TX_ATTRS_TD
#define TX_ATTRS_TD

include "tx/Dialect/TxDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tx_DimsAttr : AttrDef<Tx_Dialect, "Dims"> {
  let mnemonic = "dims";
  let summary = "symbols and upper bounds of a tensor's dynamic dimensions";
  let description = [{
    The encoding of a ranked tensor with dynamic dimensions: one
    `symbol: bound` entry per `?` in the shape, in order.

    ```mlir
    tensor<?x?x512xf32, #tx.dims<B: 64, S: 256>>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "dimension symbols">:$symbols,
    ArrayRefParameter<"int64_t", "upper bounds">:$bounds);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Tx_Activation : I32EnumAttr<"Activation", "linear epilogue activation", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"gelu_tanh", 3>,
    I32EnumAttrCase<"silu", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tx";
}
def Tx_ActivationAttr : EnumAttr<Tx_Dialect, Tx_Activation, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tx_CmpPredicate : I32EnumAttr<"CmpPredicate", "comparison predicate", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tx";
}
def Tx_CmpPredicateAttr : EnumAttr<Tx_Dialect, Tx_CmpPredicate, "predicate">;

def Tx_Init : I32EnumAttr<"Init", "parameter initializer", [
    I32EnumAttrCase<"xavier_uniform", 0>,
    I32EnumAttrCase<"zeros", 1>,
    I32EnumAttrCase<"ones", 2>,
    I32EnumAttrCase<"normal", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tx";
}
def Tx_InitAttr : EnumAttr<Tx_Dialect, Tx_Init, "init"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TX_ATTRS_TD
