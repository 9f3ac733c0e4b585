//===- ModelMetadata.cpp - what a compiled model exports, as JSON and C ---===//
//
// The executable's driver reads the JSON to know the model (config, dims,
// parameters and their offsets in the parameter arena, entries with their
// inputs, outputs and arena sizes, the id ranges of i32 inputs and the rows
// an entry writes into a cache input); --emit=obj users read the C header.
//
//===----------------------------------------------------------------------===//
#include "txc/CodeGen/CodeGen.h"
#include "txc/CodeGen/InputIdRanges.h"
#include "txc/Transforms/MemoryPlan.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxRoles.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tx;

namespace {

const char *dtypeName(Type element) {
  if (element.isF32())
    return "f32";
  if (element.isInteger(32))
    return "i32";
  return "bool";
}

llvm::json::Array shapeJson(RankedTensorType type) {
  llvm::json::Array shape;
  for (const Dim &dim : getShape(type)) {
    if (dim.isSymbolic())
      shape.push_back(dim.symbol.getValue().str());
    else
      shape.push_back(dim.size);
  }
  return shape;
}

llvm::json::Value attrJson(Attribute attr) {
  // A BoolAttr is an i1 IntegerAttr: tested first, or true reads as -1.
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute entry : d)
      object[entry.getName().getValue()] = attrJson(entry.getValue());
    return object;
  }
  return nullptr;
}

llvm::json::Array tensorsJson(func::FuncOp func, TypeRange types,
                              bool results) {
  llvm::json::Array tensors;
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = cast<RankedTensorType>(type);
    StringAttr name = results ? func.getResultAttrOfType<StringAttr>(i, "tx.name")
                              : func.getArgAttrOfType<StringAttr>(i, "tx.name");
    StringAttr role = results
                          ? func.getResultAttrOfType<StringAttr>(i, kRoleAttr)
                          : func.getArgAttrOfType<StringAttr>(i, kRoleAttr);
    llvm::json::Object object{
        {"name", name ? name.getValue().str() : "t" + std::to_string(i)},
        {"dtype", dtypeName(tensor.getElementType())},
        {"shape", shapeJson(tensor)},
        {"role", role ? role.getValue().str() : ""}};
    if (!results)
      if (std::optional<IdRange> ids = inputIdRange(func.getArgument(i))) {
        llvm::json::Array also;
        for (int64_t v : ids->also)
          also.push_back(v);
        llvm::json::Object range{{"begin", ids->begin},
                                 {"end", ids->end},
                                 {"also", std::move(also)},
                                 {"what", ids->what}};
        if (ids->ignored)
          range["ignored"] = *ids->ignored;
        if (ids->scored)
          range["scored"] = true;
        if (!ids->tables.empty()) {
          llvm::json::Array tables;
          for (const std::string &table : ids->tables)
            tables.push_back(table);
          range["tables"] = std::move(tables);
        }
        object["ids"] = std::move(range);
      }
    if (!results) {
      llvm::json::Array dimIds;
      for (const DimIdRange &range : inputDimIdRanges(func.getArgument(i))) {
        llvm::json::Array also;
        for (int64_t v : range.also)
          also.push_back(v);
        dimIds.push_back(llvm::json::Object{{"size", range.dim},
                                            {"negative", range.negative},
                                            {"also", std::move(also)},
                                            {"what", range.what}});
      }
      if (!dimIds.empty())
        object["dim_ids"] = std::move(dimIds);
    }
    // A cache the entry writes in place: its last rows (as many as the
    // update's axis 1) take the new positions, so the driver checks that
    // the cache holds at least that many.
    if (!results)
      for (Operation *user : func.getArgument(i).getUsers())
        if (auto write = dyn_cast<CacheWriteOp>(user);
            write && write.getCache() == func.getArgument(i)) {
          Dim rows =
              getShape(cast<RankedTensorType>(write.getUpdate().getType()))[1];
          object["writes_last_rows"] =
              rows.isSymbolic() ? llvm::json::Value(rows.symbol.getValue().str())
                                : llvm::json::Value(rows.size);
          break;
        }
    tensors.push_back(std::move(object));
  }
  return tensors;
}

} // namespace

/// Whether `value` is a tx.constant of one element (a scalar factor).
static bool isScalarConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && constant.getValue().getNumElements() == 1;
}

/// `loss` without the constant factors around it: `c * x`, `x * c` and
/// `x / c` give x. Such a loss splits as exactly as x does (the driver's
/// weighted sum of c * x over the pieces is c times x's).
static Value withoutConstantFactors(Value loss) {
  while (Operation *def = loss.getDefiningOp()) {
    if (auto mul = dyn_cast<MulOp>(def)) {
      if (isScalarConstant(mul.getRhs()))
        loss = mul.getLhs();
      else if (isScalarConstant(mul.getLhs()))
        loss = mul.getRhs();
      else
        break;
    } else if (auto div = dyn_cast<DivOp>(def);
               div && isScalarConstant(div.getRhs())) {
      loss = div.getLhs();
    } else {
      break;
    }
  }
  return loss;
}

/// What a train entry's loss (its first result) is: {"form":
/// "cross_entropy", "targets": INPUT, "ignore_index": N} when it is one
/// cross-entropy of an input's ids (times constants), the mean over the
/// positions whose target is not N, so that the driver can weight the
/// pieces of a batch (--update-freq, ranks) by how many positions each
/// counts and sum to exactly the whole batch's loss; else {"form": "other"}.
static llvm::json::Object lossJson(func::FuncOp func) {
  llvm::json::Object other{{"form", "other"}};
  if (func.getBody().empty() || func.getNumResults() == 0)
    return other;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (!ret || ret.getNumOperands() == 0)
    return other;
  Value loss = withoutConstantFactors(ret.getOperand(0));
  Operation *def = loss.getDefiningOp();
  Value targets;
  int64_t ignore = 0;
  if (auto ce = dyn_cast_or_null<CrossEntropyTrainOp>(def)) {
    if (loss != ce.getResult())
      return other;
    targets = ce.getTargets();
    ignore = ce.getIgnoreIndex();
  } else if (auto ce = dyn_cast_or_null<CrossEntropyOp>(def)) {
    targets = ce.getTargets();
    ignore = ce.getIgnoreIndex();
  } else {
    return other;
  }
  auto arg = dyn_cast<BlockArgument>(targets);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return other;
  auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tx.name");
  if (!name)
    return other;
  return llvm::json::Object{{"form", "cross_entropy"},
                            {"targets", name.getValue().str()},
                            {"ignore_index", ignore}};
}

std::string mlir::tx::buildModelMetadata(ModuleOp planned,
                                         llvm::StringRef source,
                                         llvm::StringRef flags,
                                         llvm::StringRef symbolPrefix) {
  llvm::json::Object root;
  root["version"] = 2;
  root["model"] = planned.getSymName().value_or("model").str();
  root["source"] = source.str();
  root["compile_flags"] = flags.str();
  // Only a CUDA build says: a model without "target" runs on the CPU.
  if (auto target = planned->getAttrOfType<StringAttr>("tx.target"))
    root["target"] = target.getValue();
  // The x86 extensions the native code may use (txc's --mcpu / --mattr, or
  // the host's): the executable refuses to run on a CPU without one.
  if (auto features = planned->getAttrOfType<ArrayAttr>("tx.cpu_features")) {
    llvm::json::Array names;
    for (auto name : features.getAsValueRange<StringAttr>())
      names.push_back(name.str());
    root["cpu_features"] = std::move(names);
  }
  auto kind = planned->getAttrOfType<StringAttr>(kKindAttr);
  root["kind"] = kind ? kind.getValue().str() : "none";
  if (auto why = planned->getAttrOfType<StringAttr>(kNoKvCacheAttr))
    root["no_kv_cache"] = why.getValue().str();
  root["kind_inferred"] = planned->hasAttr(kKindInferredAttr);
  // tx-precision's choice; the executable refuses bf16 on CPUs without it.
  auto precision = planned->getAttrOfType<StringAttr>("tx.precision");
  root["precision"] = precision ? precision.getValue().str() : "fp32";
  if (auto config = planned->getAttrOfType<DictionaryAttr>("tx.config")) {
    root["config"] = attrJson(config);
    // JSON writes 1.0 as 1: the names of the float items say which numbers
    // are floats (`config eps = 1.0`), so the driver shows them as written.
    llvm::json::Array floats;
    for (NamedAttribute entry : config)
      if (isa<FloatAttr>(entry.getValue()))
        floats.push_back(entry.getName().getValue().str());
    if (!floats.empty())
      root["float_configs"] = std::move(floats);
  }
  if (auto aliases =
          planned->getAttrOfType<DictionaryAttr>("tx.config_aliases"))
    root["config_aliases"] = attrJson(aliases);
  // tx-inference-fingerprint's hash of the entries that do not train.
  if (auto fingerprint =
          planned->getAttrOfType<StringAttr>("tx.inference_fingerprint"))
    root["inference_fingerprint"] = fingerprint.getValue().str();
  if (auto optimizer = planned->getAttrOfType<DictionaryAttr>("tx.optimizer")) {
    // As ModelAbi.h documents it: lr always an object, defaults filled in.
    llvm::json::Object object = *attrJson(optimizer).getAsObject();
    if (auto lr = optimizer.getAs<FloatAttr>("lr"))
      object["lr"] = llvm::json::Object{{"schedule", "constant"},
                                        {"value", lr.getValueAsDouble()}};
    for (const char *key : {"weight_decay", "clip"})
      if (!object.get(key))
        object[key] = 0.0;
    root["optimizer"] = std::move(object);
  }
  // Config items that size entry inputs (`ids: i32[B, T]`, `config B = 8`):
  // the executable compares them as it compares dim bounds.
  if (auto sizes = planned->getAttrOfType<ArrayAttr>("tx.size_configs")) {
    llvm::json::Array names;
    for (auto name : sizes.getAsValueRange<StringAttr>())
      names.push_back(name.str());
    root["size_configs"] = std::move(names);
  }
  llvm::json::Array dims;
  auto boundConfigs = planned->getAttrOfType<DictionaryAttr>("tx.dim_configs");
  if (auto order = planned->getAttrOfType<DictionaryAttr>("tx.dims"))
    for (NamedAttribute dim : order) {
      llvm::json::Object object{
          {"name", dim.getName().getValue().str()},
          {"bound", cast<IntegerAttr>(dim.getValue()).getInt()}};
      // The config item the bound is ("" for a literal or an expression).
      if (boundConfigs)
        if (auto key = boundConfigs.getAs<StringAttr>(dim.getName()))
          object["config"] = key.getValue().str();
      dims.push_back(std::move(object));
    }
  root["dims"] = std::move(dims);
  if (auto bytes = planned->getAttrOfType<IntegerAttr>("tx.param_arena_bytes"))
    root["param_arena_bytes"] = bytes.getInt();
  llvm::json::Array params;
  for (auto param : planned.getOps<ParameterOp>()) {
    auto offset = param->getAttrOfType<IntegerAttr>("offset");
    llvm::json::Object object{
        {"name", param.getSymName().str()},
        {"dtype", "f32"},
        {"shape", shapeJson(param.getTensorType())},
        {"init", stringifyInit(param.getInit()).str()},
        {"offset", offset ? offset.getInt() : -1}};
    if (std::optional<APFloat> std = param.getStd())
      object["init_std"] = std->convertToDouble();
    for (const char *key : {"grad_offset", "exp_avg_offset", "exp_avg_sq_offset",
                            "bf16_offset"})
      if (auto at = param->getAttrOfType<IntegerAttr>(key))
        object[key] = at.getInt();
    params.push_back(std::move(object));
  }
  root["params"] = std::move(params);
  llvm::json::Array entries;
  for (auto func : planned.getOps<func::FuncOp>()) {
    if (!func->hasAttr("tx.entry"))
      continue;
    auto arena = func->getAttrOfType<IntegerAttr>("tx.arena_bytes");
    auto tensors = func->getAttrOfType<IntegerAttr>("tx.tensor_bytes");
    auto trainKind = func->getAttrOfType<StringAttr>("tx.train_kind");
    auto role = func->getAttrOfType<StringAttr>(kRoleAttr);
    std::string kind = !trainKind ? "forward"
                       : trainKind.getValue() == "step" ? "train_step"
                                                        : "train_grad";
    llvm::json::Object entry{
        {"name", func.getSymName().str()},
        {"kind", kind},
        {"role", role ? role.getValue().str() : ""},
        {"symbol", (symbolPrefix + "_entry_" + func.getSymName()).str()},
        {"arena_bytes", arena ? arena.getInt() : 0},
        {"tensor_bytes", tensors ? tensors.getInt() : 0},
        {"inputs", tensorsJson(func, func.getArgumentTypes(), false)},
        {"outputs", tensorsJson(func, func.getResultTypes(), true)}};
    if (trainKind)
      entry["loss"] = lossJson(func);
    entries.push_back(std::move(entry));
  }
  root["entries"] = std::move(entries);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return text;
}

/// The header's name of an entry's arena size.
static std::string arenaMacro(llvm::StringRef prefix, func::FuncOp func) {
  return prefix.upper() + "_" + func.getSymName().upper() + "_ARENA_BYTES";
}

std::string mlir::tx::checkSymbolPrefix(llvm::StringRef prefix) {
  if (prefix.empty())
    return "is empty";
  if (prefix.size() > 64)
    return "is longer than 64 characters";
  if (prefix.front() == '_')
    return "starts with '_' (names that start so are reserved in C)";
  if (!isalpha(static_cast<unsigned char>(prefix.front())))
    return "does not start with a letter";
  for (char c : prefix)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_')
      return std::string("has '") + c +
             "'; a C identifier has letters, digits and '_'";
  return "";
}

std::string mlir::tx::cHeaderNameClash(ModuleOp planned,
                                       llvm::StringRef symbolPrefix) {
  llvm::StringMap<std::string> owners;
  owners[symbolPrefix.upper() + "_PARAM_ARENA_BYTES"] = "the parameter arena";
  for (auto func : planned.getOps<func::FuncOp>()) {
    if (!func->hasAttr("tx.entry"))
      continue;
    std::string what = "entry '" + func.getSymName().str() + "'";
    auto [it, inserted] =
        owners.try_emplace(arenaMacro(symbolPrefix, func), what);
    if (!inserted)
      return what + " and " + it->second + " would both be " +
             it->first().str() +
             " in the C header (names are upper-cased); rename the entry";
  }
  return "";
}

std::string mlir::tx::buildCHeader(ModuleOp planned, llvm::StringRef guardName,
                                   llvm::StringRef symbolPrefix,
                                   std::string *checkSymbol) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto target = planned->getAttrOfType<StringAttr>("tx.target");
  const bool cuda = target && target.getValue() == "cuda";
  std::string guard = guardName.upper();
  for (char &c : guard)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  // The guard starts with the prefix as written (txc_ is renamed below):
  // prefixes `k` and `K` made one guard, and the second header was skipped.
  if (llvm::StringRef(guard).starts_with("TXC_"))
    guard.replace(0, 4, "txc_");
  os << kCHeaderBanner << " from " << planned.getSymName().value_or("model")
     << ": what the object file exports. */\n"
     << "#ifndef " << guard << "_H\n#define " << guard << "_H\n\n"
     << "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* Model metadata (JSON): config, dims, parameters with their "
        "offsets\n"
     << " * in the parameter arena, entries with inputs, outputs, arena sizes. "
        "*/\n"
     << "extern const char txc_model_json[];\n\n"
     << (cuda
             ? "/* Compiled with --target=cuda: every entry runs on a GPU. ctx "
               "is\n"
               " * a txrt_cuda_context* (runtime/include/txrt/txrt_cuda.h,\n"
               " * txrt_cuda_context_create), not a txrt_context*; params, "
               "arena,\n"
               " * inputs and outputs are DEVICE memory (cudaMalloc), dims "
               "host\n"
               " * memory. Link with libtxrt_cuda.a, libtxrt.a and the static\n"
               " * CUDA runtime (cudart_static, -ldl -lrt -lpthread), as txc "
               "links a\n"
               " * --target=cuda executable; cuBLASLt and NCCL are loaded at "
               "run time\n"
               " * (dlopen). Calling an entry as a CPU one crashes.\n"
               " * params the parameter arena; arena the entry's activation "
               "arena;\n"
               " * dims the runtime value of each dim below; inputs and "
               "outputs\n"
               " * dense row-major buffers (f32: float, i32: int32_t, bool:\n"
               " * uint8_t holding 0 or 1). Returns 0, or a txrt status (see\n"
               " * txrt_cuda_last_error): dims outside their range and NULL\n"
               " * pointers are refused before any work.\n"
             : "/* Every entry: ctx is a txrt_context* "
               "(runtime/include/txrt/txrt.h);\n"
               " * params the parameter arena; arena the entry's activation "
               "arena (both\n"
               " * 64-byte aligned); dims the runtime value of each dim below; "
               "inputs and\n"
               " * outputs dense row-major buffers (f32: float, i32: int32_t, "
               "bool:\n"
               " * uint8_t holding 0 or 1). Returns 0, or a txrt status (see\n"
               " * txrt_last_error): dims\n"
               " * outside their range and NULL pointers are refused before "
               "any work.\n")
     << " * A context runs one entry at a time: threads calling entries at "
        "once\n"
     << " * need a context and an activation arena each (they may share the\n"
     << " * parameters of a forward entry). */\n"
     << "typedef int32_t (*txc_entry_fn)(void *ctx, void *params, void "
        "*arena,\n"
     << "                                const int64_t *dims, void *const "
        "*inputs,\n"
     << "                                void *const *outputs);\n"
     << "extern const txc_entry_fn txc_entry_table[];\n\n";
  int64_t paramBytes = 0;
  if (auto bytes = planned->getAttrOfType<IntegerAttr>("tx.param_arena_bytes"))
    paramBytes = bytes.getInt();
  // Sizes as 64-bit constants: an arena may be over 2^31 bytes, which an
  // enum constant cannot hold in ISO C.
  os << "/* The parameter arena: each parameter (f32) at its \"offset\" in\n"
     << " * txc_model_json's \"params\"; a model that trains also keeps each\n"
     << " * one's gradient and Adam moments there (\"grad_offset\",\n"
     << " * \"exp_avg_offset\", \"exp_avg_sq_offset\"): zero them before the\n"
     << " * first train call. Train entries read the step and seed set with\n"
     << (cuda ? " * txrt_cuda_context_set_train_state"
              : " * txrt_context_set_train_state")
     << " (step >= 1, once per update). */\n";
  // The macros are upper-cased: two models whose prefixes differ only in
  // case (`m`, `M`) link together but define the same macros, and the
  // second header's sizes replaced the first's with a warning at most (an
  // arena too small, overwritten). A macro defined already is an error.
  std::vector<std::string> macros = {symbolPrefix.upper() +
                                     "_PARAM_ARENA_BYTES"};
  for (auto func : planned.getOps<func::FuncOp>())
    if (func->hasAttr("tx.entry") && func->hasAttr("tx.arena_bytes"))
      macros.push_back(arenaMacro(symbolPrefix, func));
  for (const std::string &macro : macros)
    os << "#ifdef " << macro << "\n#error \"" << macro
       << " is defined already: another model's header whose "
          "--symbol-prefix differs from '"
       << symbolPrefix
       << "' only in case? (its macros are upper-cased; give the models "
          "prefixes that differ in more than case)\"\n#endif\n";
  os << "#define TXC_PARAM_ARENA_BYTES UINT64_C(" << paramBytes << ")\n\n";
  // --precision=bf16: the linears read a bf16 copy of their weights, which
  // a program that writes the f32 weights had no way to know of (status 0,
  // wrong outputs); the executable's driver refreshes it after loading.
  struct Copy {
    int64_t offset, bf16Offset, count;
  };
  llvm::SmallVector<Copy> copies;
  for (auto param : planned.getOps<ParameterOp>()) {
    auto offset = param->getAttrOfType<IntegerAttr>("offset");
    auto bf16 = param->getAttrOfType<IntegerAttr>("bf16_offset");
    if (offset && bf16)
      copies.push_back({offset.getInt(), bf16.getInt(),
                        param.getTensorType().getNumElements()});
  }
  os << "/* txc_refresh_bf16_copies(params): after writing parameters, before\n"
     << " * the next entry call. --precision=bf16 models keep a bf16 copy of\n"
     << " * each linear's weight (\"bf16_offset\"), which the linears read "
        "and\n"
     << " * only the train entries update: rounds each copy from its f32\n"
     << " * weight (libtxrt's txrt_round_to_bf16). This model has "
     << copies.size() << " such cop" << (copies.size() == 1 ? "y" : "ies")
     << (copies.empty() ? ": a no-op" : "");
  // A bf16 model without copies (no linear) still has bf16 attention
  // products: "(fp32)" said otherwise.
  auto precision = planned->getAttrOfType<StringAttr>("tx.precision");
  if (precision && precision.getValue() == "bf16")
    os << (copies.empty() ? " (its bf16 products are attention's alone)" : "")
       << ". Its products need a CPU with avx512_bf16 or\n"
          " * amx_bf16 (txrt_cpu_has_bf16()) for the executable's driver; "
          "an entry\n * call's linears fail elsewhere with "
          "TXRT_ERROR_BACKEND. */\n";
  else
    os << (copies.empty() ? " (fp32)" : "") << ". */\n";
  if (copies.empty()) {
    os << "static inline void txc_refresh_bf16_copies(void *params) {\n"
       << "  (void)params;\n}\n\n";
  } else {
    os << "void txrt_round_to_bf16(int64_t n, const float *src, uint16_t *dst);\n"
       << "static inline void txc_refresh_bf16_copies(void *params) {\n"
       << "  static const int64_t copies[][3] = {";
    for (auto [i, copy] : llvm::enumerate(copies))
      os << (i ? ",\n      " : "\n      ") << "{" << copy.offset << ", "
         << copy.bf16Offset << ", " << copy.count << "}";
    os << "};\n"
       << "  int64_t i;\n"
       << "  for (i = 0; i < (int64_t)(sizeof copies / sizeof copies[0]); ++i)\n"
       << "    txrt_round_to_bf16(copies[i][2],\n"
       << "                       (const float *)((char *)params + copies[i][0]),\n"
       << "                       (uint16_t *)((char *)params + copies[i][1]));\n"
       << "}\n\n";
  }
  os << "/* dims, in the order of the dims argument:";
  unsigned dimIndex = 0;
  if (auto order = planned->getAttrOfType<DictionaryAttr>("tx.dims"))
    for (NamedAttribute dim : order)
      os << "\n *   dims[" << dimIndex++ << "] = " << dim.getName().getValue()
         << " (0 .. " << cast<IntegerAttr>(dim.getValue()).getInt() << ")";
  os << " */\n\n";
  unsigned index = 0;
  for (auto func : planned.getOps<func::FuncOp>()) {
    if (!func->hasAttr("tx.entry"))
      continue;
    auto arena = func->getAttrOfType<IntegerAttr>("tx.arena_bytes");
    os << "/* Entry " << func.getSymName() << " (txc_entry_table[" << index++
       << "]), activation arena " << (arena ? arena.getInt() : 0)
       << " bytes.\n";
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "tx.name");
      os << " *   inputs[" << i << "]  " << (name ? name.getValue() : "?") << ": "
         << formatType(type) << "\n";
    }
    for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "tx.name");
      os << " *   outputs[" << i << "] " << (name ? name.getValue() : "?") << ": "
         << formatType(type) << "\n";
    }
    os << " */\nint32_t txc_entry_" << func.getSymName()
       << "(void *ctx, void *params, void *arena, const int64_t *dims,\n"
       << "    void *const *inputs, void *const *outputs);\n";
    if (arena)
      os << "#define " << arenaMacro(symbolPrefix, func) << " UINT64_C("
         << arena.getInt() << ")\n";
    os << "\n";
  }
  // A header of another build (its offsets, arenas and entries) compiled
  // into a program that links this build's object gave wrong answers or
  // overflowed an arena: the header references a symbol named by a hash of
  // everything above, which only its own object defines.
  std::string symbol =
      "txc_header_" + llvm::utohexstr(llvm::xxh3_64bits(llvm::StringRef(os.str())), true, 16);
  if (checkSymbol)
    *checkSymbol = symbol;
  os << "/* Links only with the object file txc wrote together with this\n"
     << " * header: with another build's object, the link fails on an\n"
     << " * undefined " << symbol << ". */\n"
     << "extern const char " << symbol << ";\n"
     << "#if defined(__has_attribute)\n"
     << "#if __has_attribute(retain)\n"
     << "__attribute__((used, retain)) /* kept by --gc-sections too */\n"
     << "#else\n__attribute__((used))\n#endif\n"
     << "#elif defined(__GNUC__)\n__attribute__((used))\n#endif\n"
     << "static const char *const txc_header_check = &" << symbol << ";\n\n";
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  if (symbolPrefix == "txc")
    return text;
  // Every name the header defines starts with `txc_` or `TXC_` (the
  // include guard too; libtxrt's are `txrt_`): each becomes the prefix's.
  std::string renamed;
  std::string lower = (symbolPrefix + "_").str();
  std::string upper = (symbolPrefix.upper() + "_");
  for (size_t i = 0; i < text.size();) {
    bool wordStart =
        i == 0 || !(isalnum(static_cast<unsigned char>(text[i - 1])) ||
                    text[i - 1] == '_');
    llvm::StringRef rest = llvm::StringRef(text).substr(i);
    if (wordStart && rest.starts_with("txc_")) {
      renamed += lower;
      i += 4;
    } else if (wordStart && rest.starts_with("TXC_")) {
      renamed += upper;
      i += 4;
    } else {
      renamed += text[i++];
    }
  }
  return renamed;
}
