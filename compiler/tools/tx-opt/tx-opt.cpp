//===- tx-opt.cpp - mlir-opt for the tx dialect ---------------------------===//
//
// An mlir-opt-style driver with the tx dialect, func (and arith and math,
// which glue kernels use; linalg, memref and cf, which tx-lower-entries
// leaves; llvm, scf, affine, vector and gpu, which the later lowerings and
// `txc --emit=gpu` write, so that tx-opt reads back its own output) and
// every txc pass registered (plus MLIR's generic canonicalize/CSE). lit
// tests run IR through it.
//
// Unlike mlir-opt, the output is written only when every pass succeeded,
// through a temporary renamed over `-o FILE` (through a symlink to its
// target; a device or FIFO is written to as it is): mlir-opt removed FILE
// when a pass failed, so `tx-opt x.mlir --pass -o x.mlir` lost the input.
// As txc, it never replaces a checkpoint or an .npy array
// (ProtectedFiles.h).
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"
#include "txc/Transforms/Passes.h"

#include "../ProtectedFiles.h"

#include <csignal>

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

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
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "tx optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  std::string error;
  if (std::string kept = txc::protectedKindOf(outputFile, /*binary=*/false);
      !kept.empty()) {
    llvm::errs() << "tx-opt: error: the output '" << outputFile << "' is "
                 << kept
                 << ": writing IR there would destroy it; choose another -o "
                    "(or remove the file)\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "tx-opt: error: " << error << "\n";
    return 1;
  }
  std::string text;
  llvm::raw_string_ostream output(text);
  if (mlir::failed(
          mlir::MlirOptMain(output, std::move(input), registry, config)))
    return 1;
  // `ulimit -f` makes a write fail (EFBIG), not end the process.
  ::signal(SIGXFSZ, SIG_IGN);
  if (std::string problem = txc::writeOutputWhole(outputFile, text);
      !problem.empty()) {
    llvm::errs() << "tx-opt: error: cannot write '" << outputFile
                 << "': " << problem << "\n";
    return 1;
  }
  return 0;
}
