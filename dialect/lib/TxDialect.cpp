//===- TxDialect.cpp - the tx dialect and its attributes ------------------===//
//
// Registers the tx dialect's ops and attributes and implements the
// `#tx.dims` encoding (parse, print, verify).
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tx;

#include "tx/Dialect/TxOpsDialect.cpp.inc"
#include "tx/Dialect/TxOpsEnums.cpp.inc"
#include "tx/Dialect/TxInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tx/Dialect/TxOpsAttributes.cpp.inc"

void TxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tx/Dialect/TxOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tx/Dialect/TxOpsAttributes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #tx.dims
//===----------------------------------------------------------------------===//

Attribute DimsAttr::parse(AsmParser &parser, Type) {
  SmallVector<StringAttr> symbols;
  SmallVector<int64_t> bounds;
  if (parser.parseLess())
    return {};
  auto parseEntry = [&]() -> ParseResult {
    std::string symbol;
    int64_t bound = 0;
    if (parser.parseKeywordOrString(&symbol) || parser.parseColon() ||
        parser.parseInteger(bound))
      return failure();
    symbols.push_back(StringAttr::get(parser.getContext(), symbol));
    bounds.push_back(bound);
    return success();
  };
  if (parser.parseCommaSeparatedList(parseEntry) || parser.parseGreater())
    return {};
  return parser.getChecked<DimsAttr>(parser.getContext(), symbols, bounds);
}

void DimsAttr::print(AsmPrinter &printer) const {
  printer << "<";
  llvm::interleaveComma(llvm::zip(getSymbols(), getBounds()), printer,
                        [&](auto entry) {
                          printer.printKeywordOrString(
                              std::get<0>(entry).getValue());
                          printer << ": " << std::get<1>(entry);
                        });
  printer << ">";
}

LogicalResult DimsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<StringAttr> symbols,
                               ArrayRef<int64_t> bounds) {
  if (symbols.empty())
    return emitError() << "#tx.dims needs at least one 'symbol: bound'";
  if (symbols.size() != bounds.size())
    return emitError() << "#tx.dims has " << symbols.size()
                       << " symbols but " << bounds.size() << " bounds";
  for (auto [symbol, bound] : llvm::zip(symbols, bounds)) {
    if (!symbol || symbol.getValue().empty())
      return emitError() << "#tx.dims symbol must not be empty";
    if (bound <= 0)
      return emitError() << "#tx.dims bound of '" << symbol.getValue()
                         << "' must be positive, got " << bound;
  }
  return success();
}

bool mlir::tx::isWellFormedTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return false;
  int64_t numDynamic = tensor.getNumDynamicDims();
  Attribute encoding = tensor.getEncoding();
  if (numDynamic == 0)
    return !encoding;
  auto dims = dyn_cast_or_null<DimsAttr>(encoding);
  return dims && static_cast<int64_t>(dims.getSymbols().size()) == numDynamic;
}
