//===- Passes.h - txc passes --------------------------------------*- C++ -*-===//
#ifndef TXC_TRANSFORMS_PASSES_H
#define TXC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tx {

#define GEN_PASS_DECL
#include "txc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "txc/Transforms/Passes.h.inc"

} // namespace mlir::tx

#endif // TXC_TRANSFORMS_PASSES_H
