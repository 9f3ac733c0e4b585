//===- tx-opt.cpp - mlir-opt for the tx dialect ---------------------------===//
//
// An mlir-opt-style driver with the tx dialect, func (and arith and math,
// which glue kernels use; linalg, memref and cf, which tx-lower-entries
// leaves; llvm, scf, affine, vector and gpu, which the later lowerings and
// `txc --emit=gpu` write, so that tx-opt reads back its own output) and
// every txc pass registered (plus MLIR's generic canonicalize/CSE). lit
// tests run IR through it.
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"
#include "txc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerInlinerPass();
  mlir::tx::registerTxcPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tx::TxDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::linalg::LinalgDialect, mlir::memref::MemRefDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect,
                  mlir::scf::SCFDialect, mlir::affine::AffineDialect,
                  mlir::vector::VectorDialect, mlir::gpu::GPUDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tx optimizer driver\n", registry));
}
