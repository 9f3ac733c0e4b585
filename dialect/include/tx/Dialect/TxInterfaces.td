//===- TxInterfaces.td - interfaces of tx ops ---------------*- tablegen -*-===//
//
// DifferentiableOpInterface: how reverse-mode autodiff asks an op for its
// vector-Jacobian product. Declared here; the VJP rules are filled in by the
// autodiff pass (tx-autodiff).
//
//===----------------------------------------------------------------------===//
#ifndef TX_INTERFACES_TD
#define TX_INTERFACES_TD

include "mlir/IR/OpBase.td"

def DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::tx";
  let description = [{
    An op that reverse-mode autodiff can differentiate. `buildVJP` receives
    the gradients of the op's results (null where a result has none) and
    appends the gradient of each operand (null for operands that take none,
    such as token ids and masks).
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Whether operand `index` receives a gradient.",
      /*retTy=*/"bool", /*methodName=*/"isDifferentiableOperand",
      /*args=*/(ins "unsigned":$index),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        auto type = ::llvm::dyn_cast<::mlir::ShapedType>(
            $_op->getOperand(index).getType());
        return type && type.getElementType().isF32();
      }]>,
    InterfaceMethod<
      /*desc=*/[{
        Builds the vector-Jacobian product at the builder's insertion point:
        given `resultGrads` (one per result, null when a result has no
        gradient), appends one value per operand to `operandGrads` (null for
        operands without a gradient).
      }],
      /*retTy=*/"::llvm::LogicalResult", /*methodName=*/"buildVJP",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ValueRange":$resultGrads,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return $_op->emitOpError("has no VJP rule yet");
      }]>,
  ];
}

#endif // TX_INTERFACES_TD
