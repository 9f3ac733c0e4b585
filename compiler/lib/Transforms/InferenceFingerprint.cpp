//===- InferenceFingerprint.cpp - hash what the inference entries compute -===//
//
// A checkpoint records the config it was trained with, and the executable
// that loads it compares its own: another heads or eps gives tensors of the
// same shapes and another function of them, which deserves a warning, but
// another dropout, warmup or label smoothing changes nothing that encode,
// decode or logits compute. The compiler is what knows which: after dropout
// is stripped from the entries that do not train, this pass hashes those
// entries (names, signatures, every op with its operands, result types and
// attributes; not locations, not the bounds of symbolic dims) into the
// module's `tx.inference_fingerprint`, which the metadata carries and
// checkpoints record. Equal fingerprints mean the same computation; a
// different one (another config, another txc) keeps the warning.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/Passes.h"

#include "tx/Dialect/TxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/xxhash.h"

namespace mlir::tx {
#define GEN_PASS_DEF_INFERENCEFINGERPRINTPASS
#include "txc/Transforms/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// Writes a canonical text of the entries into `os`: values by their
/// number in definition order, types without dim bounds.
class EntryWriter {
public:
  explicit EntryWriter(llvm::raw_ostream &os) : os(os) {}

  void write(func::FuncOp func) {
    values.clear();
    os << "entry " << func.getSymName() << "\n";
    // With arg_attrs and res_attrs (names, roles); the argument types are
    // the entry block's, the result types follow.
    writeAttributes(func->getAttrDictionary(), {"sym_name", "function_type"});
    for (Type result : func.getResultTypes()) {
      os << " result ";
      writeType(result);
    }
    writeRegion(func.getBody());
  }

private:
  void writeRegion(Region &region) {
    os << "{\n";
    for (Block &block : region) {
      os << "block";
      for (BlockArgument arg : block.getArguments()) {
        os << " " << number(arg) << ":";
        writeType(arg.getType());
      }
      os << "\n";
      for (Operation &op : block)
        writeOp(op);
    }
    os << "}\n";
  }

  void writeOp(Operation &op) {
    os << op.getName().getStringRef() << "(";
    for (Value operand : op.getOperands()) {
      // Defined before their uses; anything else (a value from outside
      // the entry) is "?".
      auto it = values.find(operand);
      if (it == values.end())
        os << "?,";
      else
        os << it->second << ",";
    }
    os << ")";
    for (OpResult result : op.getResults()) {
      os << " " << number(result) << ":";
      writeType(result.getType());
    }
    for (Block *successor : op.getSuccessors())
      os << " ^" << blockNumber(successor);
    writeAttributes(op.getAttrDictionary(), {});
    os << "\n";
    for (Region &region : op.getRegions())
      writeRegion(region);
  }

  /// `#tx.dims<B: 16, T: 64>` without its bounds: the symbols, in order.
  /// Types and attributes are uniqued: each is printed once (a 96-layer
  /// model has thousands of ops of a few dozen types).
  void writeType(Type type) {
    auto [it, inserted] = typeTexts.try_emplace(type.getAsOpaquePointer());
    if (inserted) {
      llvm::raw_string_ostream text(it->second);
      auto tensor = dyn_cast<RankedTensorType>(type);
      auto dims = tensor ? dyn_cast_or_null<DimsAttr>(tensor.getEncoding())
                         : DimsAttr();
      if (!dims) {
        type.print(text);
      } else {
        text << "tensor<";
        for (int64_t size : tensor.getShape())
          text << (ShapedType::isDynamic(size) ? std::string("?")
                                               : std::to_string(size))
               << "x";
        text << tensor.getElementType() << ", [";
        for (StringAttr symbol : dims.getSymbols())
          text << symbol.getValue() << " ";
        text << "]>";
      }
    }
    os << it->second;
  }

  void writeAttributes(DictionaryAttr dict,
                       std::initializer_list<StringRef> skipped) {
    if (!dict)
      return;
    for (NamedAttribute attr : dict) {
      if (llvm::is_contained(skipped, attr.getName().getValue()))
        continue;
      os << " " << attr.getName().getValue() << "=";
      if (auto type = dyn_cast<TypeAttr>(attr.getValue())) {
        writeType(type.getValue());
        continue;
      }
      auto [it, inserted] =
          attrTexts.try_emplace(attr.getValue().getAsOpaquePointer());
      if (inserted) {
        llvm::raw_string_ostream text(it->second);
        attr.getValue().print(text);
      }
      os << it->second;
    }
  }

  unsigned number(Value value) {
    return values.try_emplace(value, values.size()).first->second;
  }

  unsigned blockNumber(Block *block) {
    return blocks.try_emplace(block, blocks.size()).first->second;
  }

  llvm::raw_ostream &os;
  llvm::DenseMap<Value, unsigned> values;
  llvm::DenseMap<Block *, unsigned> blocks;
  llvm::DenseMap<const void *, std::string> typeTexts, attrTexts;
};

struct InferenceFingerprintPass
    : mlir::tx::impl::InferenceFingerprintPassBase<InferenceFingerprintPass> {
  using InferenceFingerprintPassBase::InferenceFingerprintPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // In name order: the order entries are declared in changes nothing
    // they compute.
    std::vector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>("tx.entry");
      if (!kind || kind.getValue() != "train")
        entries.push_back(func);
    }
    llvm::sort(entries, [](func::FuncOp a, func::FuncOp b) {
      return a.getSymName() < b.getSymName();
    });
    std::string text;
    llvm::raw_string_ostream os(text);
    // The parameters they read: another init changes no computation, but
    // another dtype or shape does.
    for (auto param : module.getOps<ParameterOp>())
      os << "param " << param.getSymName() << " " << param.getType() << "\n";
    EntryWriter writer(os);
    for (func::FuncOp func : entries)
      writer.write(func);
    os.flush();
    uint64_t hash = llvm::xxh3_64bits(llvm::StringRef(text));
    std::string hex;
    llvm::raw_string_ostream(hex) << llvm::format_hex_no_prefix(hash, 16);
    module->setAttr("tx.inference_fingerprint",
                    StringAttr::get(module.getContext(), hex));
  }
};

} // namespace
