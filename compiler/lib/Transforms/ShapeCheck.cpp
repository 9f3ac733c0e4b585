//===- ShapeCheck.cpp - module-level shape consistency checks -------------===//
//
// The op verifiers check each op's shapes; this pass checks what no single op
// sees: every symbolic dimension keeps one upper bound across the module,
// every tensor stays within the size limits the generated code and libtxrt
// can address (TxShape.h: dims up to 2^31 - 1, 2^40 elements), and entries
// take and return tx tensors.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tx {
#define GEN_PASS_DEF_SHAPECHECKPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

struct ShapeCheckPass : mlir::tx::impl::ShapeCheckPassBase<ShapeCheckPass> {
  void runOnOperation() override {
    llvm::StringMap<std::pair<int64_t, Location>> bounds;
    llvm::DenseSet<Type> tooLarge; // reported once per type
    bool ok = true;
    auto checkType = [&](Type type, Location loc) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        return;
      Shape shape = getShape(tensor);
      std::string why = checkSizeLimits(shape);
      if (!why.empty() && tooLarge.insert(type).second) {
        emitError(loc) << "tensor " << formatType(type) << " " << why;
        ok = false;
      }
      for (const Dim &dim : shape) {
        if (!dim.isSymbolic())
          continue;
        auto [it, inserted] =
            bounds.try_emplace(dim.symbol.getValue(), dim.bound, loc);
        if (!inserted && it->second.first != dim.bound) {
          InFlightDiagnostic diag = emitError(loc)
                                    << "symbolic dimension '"
                                    << dim.symbol.getValue() << "' has bound "
                                    << dim.bound << " here but bound "
                                    << it->second.first << " elsewhere";
          diag.attachNote(it->second.second) << "first bound here";
          ok = false;
        }
      }
    };
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Type type : op->getResultTypes())
        checkType(type, op->getLoc());
      if (auto func = dyn_cast<func::FuncOp>(op)) {
        if (!func->hasAttr("tx.entry"))
          return;
        for (Type type : func.getFunctionType().getInputs())
          checkType(type, func.getLoc());
        for (Type type : func.getFunctionType().getResults()) {
          if (!isWellFormedTensor(type)) {
            func.emitError("entry '")
                << func.getSymName() << "' returns " << type
                << ", not a tx tensor";
            ok = false;
          }
        }
      }
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
