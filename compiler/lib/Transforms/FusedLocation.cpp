//===- FusedLocation.cpp - where a fused op came from ---------------------===//
#include "txc/Transforms/FusedLocation.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kTag = "fused: ";
} // namespace

std::vector<std::string> mlir::tx::fusedFrom(Location loc) {
  std::vector<std::string> names;
  auto fused = dyn_cast<FusedLoc>(loc);
  if (!fused)
    return names;
  auto tag = dyn_cast_or_null<StringAttr>(fused.getMetadata());
  if (!tag || !tag.getValue().starts_with(kTag))
    return names;
  llvm::StringRef rest = tag.getValue().drop_front(kTag.size());
  while (!rest.empty()) {
    auto [name, tail] = rest.split(", ");
    names.push_back(name.str());
    rest = tail;
  }
  return names;
}

Location mlir::tx::fusedLocation(Location primary,
                                 ArrayRef<Operation *> absorbed) {
  // In program order when they share a block (the passes collect them in
  // match order).
  SmallVector<Operation *> ops(absorbed.begin(), absorbed.end());
  if (llvm::all_of(ops, [&](Operation *op) {
        return op->getBlock() == ops.front()->getBlock();
      }))
    llvm::sort(ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  std::string tag = kTag.str();
  SmallVector<Location> locations = {primary};
  bool first = true;
  for (Operation *op : ops) {
    std::vector<std::string> inner = fusedFrom(op->getLoc());
    if (inner.empty())
      inner.push_back(op->getName().stripDialect().str());
    for (const std::string &name : inner) {
      tag += (first ? "" : ", ") + name;
      first = false;
    }
    locations.push_back(op->getLoc());
  }
  MLIRContext *context = primary->getContext();
  return FusedLoc::get(context, locations, StringAttr::get(context, tag));
}
