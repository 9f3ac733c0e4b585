//===- TxDialect.h - the tx dialect -------------------------------*- C++ -*-===//
//
// Declares the tx dialect, its attributes and its ops. Include this one
// header to use the dialect.
//
//===----------------------------------------------------------------------===//
#ifndef TX_DIALECT_TXDIALECT_H
#define TX_DIALECT_TXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tx/Dialect/TxOpsDialect.h.inc"
#include "tx/Dialect/TxOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tx/Dialect/TxOpsAttributes.h.inc"

#include "tx/Dialect/TxInterfaces.h.inc"

namespace mlir::tx {

/// True for a ranked tensor whose dynamic dimensions are all described by a
/// `#tx.dims` encoding (and static tensors without encoding).
bool isWellFormedTensor(Type type);

/// Shared result-type inference for element-wise ops with broadcasting;
/// `resultElement` null keeps the operands' element type. Reports through
/// `loc` when the shapes do not broadcast.
LogicalResult inferBroadcastResult(std::optional<Location> loc, Type lhs,
                                   Type rhs, Type resultElement,
                                   SmallVectorImpl<Type> &types);

/// Whether `value` is computed from a tx.param (through any ops): such a
/// value takes a gradient in the train entry.
bool dependsOnParameter(Value value);

/// Shared result-type inference for reductions over `axes`.
LogicalResult inferReduceResult(std::optional<Location> loc, Type input,
                                ArrayRef<int64_t> axes, bool keepdim,
                                SmallVectorImpl<Type> &types);

/// Op trait of every tx op but tx.parameter: it lies inside a function
/// (an entry or a def), not at module level.
template <typename ConcreteType>
class InFunction : public OpTrait::TraitBase<ConcreteType, InFunction> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp())
      if (isa<FunctionOpInterface>(parent))
        return success();
    return op->emitOpError("must be inside a function (an entry or a def), "
                           "not at module level");
  }
};

} // namespace mlir::tx

#define GET_OP_CLASSES
#include "tx/Dialect/TxOps.h.inc"

#endif // TX_DIALECT_TXDIALECT_H
