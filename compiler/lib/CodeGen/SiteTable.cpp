//===- SiteTable.cpp - which spec op each runtime call site is ------------===//
//
// LowerEntries numbers every runtime call it emits (the `site` argument) and
// leaves the module attribute "tx.sites": one dictionary per site with the
// entry, the tx op and its location. addSiteTable moves it into the
// executable's metadata as
//   "sites": [{"site": 3, "entry": "train", "op": "linear",
//              "loc": "base.tx:25:14", "scope": "encoder.layers.0.self_attn",
//              "fused": ["matmul", "add"]}, ...]
// so a profile (txrt_profile_*) can be reported by spec line and op.
//
//===----------------------------------------------------------------------===//
#include "txc/CodeGen/CodeGen.h"
#include "txc/Transforms/FusedLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;

namespace {

std::string scopeOf(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    return fused.getLocations().empty() ? ""
                                        : scopeOf(fused.getLocations()[0]);
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string scope = name.getName().str();
    std::replace(scope.begin(), scope.end(), '/', '.');
    return scope;
  }
  return "";
}

} // namespace

std::string mlir::tx::addSiteTable(llvm::StringRef json, ModuleOp module) {
  auto sites = module->getAttrOfType<ArrayAttr>("tx.sites");
  if (!sites)
    return json.str();
  module->removeAttr("tx.sites");
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return json.str();
  }
  llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return json.str();
  llvm::json::Array table;
  for (Attribute attr : sites) {
    auto dict = dyn_cast<DictionaryAttr>(attr);
    if (!dict)
      continue;
    llvm::json::Object site;
    if (auto id = dict.getAs<IntegerAttr>("site"))
      site["site"] = id.getInt();
    if (auto entry = dict.getAs<StringAttr>("entry"))
      site["entry"] = entry.getValue().str();
    if (auto op = dict.getAs<StringAttr>("op"))
      site["op"] = op.getValue().str();
    if (auto locAttr = dict.getAs<LocationAttr>("loc")) {
      Location loc(locAttr);
      if (auto file = loc->findInstanceOf<FileLineColLoc>())
        site["loc"] = (file.getFilename().getValue() + ":" +
                       llvm::Twine(file.getLine()) + ":" +
                       llvm::Twine(file.getColumn()))
                          .str();
      std::string scope = scopeOf(loc);
      if (!scope.empty())
        site["scope"] = scope;
      std::vector<std::string> fused = fusedFrom(loc);
      if (!fused.empty()) {
        llvm::json::Array names;
        for (const std::string &name : fused)
          names.push_back(name);
        site["fused"] = std::move(names);
      }
    }
    table.push_back(std::move(site));
  }
  (*root)["sites"] = std::move(table);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(*root));
  return out;
}
