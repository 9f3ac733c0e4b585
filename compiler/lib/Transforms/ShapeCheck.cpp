//===- ShapeCheck.cpp - module-level shape consistency checks -------------===//
//
// The op verifiers check each op's shapes; this pass checks what no single op
// sees: every symbolic dimension keeps one upper bound across the module,
// every tensor stays within the size limits the generated code and libtxrt
// can address (TxShape.h: dims up to 2^31 - 1, 2^40 elements), and entries
// take and return tx tensors.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/EntrySignature.h"
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
        if (failed(checkEntrySignature(func)))
          ok = false;
      }
    });
    // The module's bounds (what the executable checks each call's dims
    // against) are the types' (what the arenas were planned for): a
    // hand-edited `tx.dims = {N = 9}` over `#tx.dims<N: 4>` types let calls
    // with N = 9 run past a 4-row arena.
    if (auto dims = getOperation()->getAttrOfType<DictionaryAttr>("tx.dims"))
      for (NamedAttribute dim : dims) {
        auto bound = dyn_cast<IntegerAttr>(dim.getValue());
        auto it = bounds.find(dim.getName().getValue());
        if (bound && it != bounds.end() && bound.getInt() != it->second.first) {
          InFlightDiagnostic diag =
              getOperation()->emitError("the module's tx.dims gives '")
              << dim.getName().getValue() << "' bound " << bound.getInt()
              << ", but the types give it bound " << it->second.first
              << " (the arenas are planned for the types' bound)";
          diag.attachNote(it->second.second) << "the types' bound here";
          ok = false;
        }
      }
    if (!ok)
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tx::checkEntrySignature(func::FuncOp entry) {
  bool ok = true;
  auto check = [&](Type type, const char *what) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    Type element = tensor ? tensor.getElementType() : Type();
    if (isWellFormedTensor(type) &&
        (element.isF32() || element.isInteger(32) || element.isInteger(1)))
      return;
    entry.emitError("entry '") << entry.getSymName() << "' " << what << " "
                               << type << ", not a tx tensor of f32, i32 or i1";
    ok = false;
  };
  for (Type type : entry.getFunctionType().getInputs())
    check(type, "takes");
  for (Type type : entry.getFunctionType().getResults())
    check(type, "returns");
  return success(ok);
}
