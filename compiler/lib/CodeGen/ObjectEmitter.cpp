//===- ObjectEmitter.cpp - LLVM dialect to an object file and an exe ------===//
//
// Lowers entries to the LLVM dialect, adds the exported model globals,
// translates to LLVM IR and splits it in two modules: the glue kernels and
// globals, optimized at O3 for the host CPU (its name and features, so loops
// vectorize to its widest units) or the CPU and attributes of txc's --mcpu /
// --mattr and compiled by the full code generator; and the entries
// (straight-line runtime calls), compiled as they are by the fast code
// generator (CodeGenOptLevel::None), whose time is linear in their length.
// Each becomes an object file through an in-process TargetMachine; the two
// are linked with libtxrt and the driver, or into one relocatable object,
// using the system C++ compiler.
//
//===----------------------------------------------------------------------===//
#include "txc/CodeGen/CodeGen.h"
#include "txc/CodeGen/LinkConfig.h"
#include "txc/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace mlir;
using namespace mlir::tx;

void mlir::tx::buildLowerToLLVMPipeline(OpPassManager &pm, bool gpuLaunches) {
  // Lowering builds each operand's sizes and memref view where it is used;
  // CSE shares them across the entry (the entry is straight-line code, so an
  // earlier value dominates every later use).
  pm.addPass(createCSEPass());
  // MLIR's convert-linalg-to-loops and expand-strided-metadata, applied
  // per function without region simplification (theirs simplify the whole
  // module's regions and grew faster than the model's depth).
  pm.addPass(tx::createLinalgToLoopsPass());
  pm.addPass(tx::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(tx::createApproximateMathPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (gpuLaunches) // --target=cuda: gpu.launch_func to mgpu* calls
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Folding only: region simplification (block merging, liveness over the
  // entries' thousands of blocks) grew faster than the entries and changed
  // nothing in txc's output (same LLVM IR for base.tx, translate and copy
  // at 96 layers).
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  pm.addPass(createCanonicalizerPass(config));
}

LogicalResult mlir::tx::addModelGlobals(ModuleOp module, llvm::StringRef json,
                                        llvm::ArrayRef<std::string> symbols,
                                        llvm::StringRef headerSymbol) {
  MLIRContext *context = module.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  std::string text = json.str();
  text.push_back('\0');
  auto textType = LLVM::LLVMArrayType::get(builder.getI8Type(), text.size());
  builder.create<LLVM::GlobalOp>(loc, textType, /*isConstant=*/true,
                                 LLVM::Linkage::External, "txc_model_json",
                                 builder.getStringAttr(text));
  if (!headerSymbol.empty())
    builder.create<LLVM::GlobalOp>(
        loc, builder.getI8Type(), /*isConstant=*/true, LLVM::Linkage::External,
        headerSymbol, builder.getI8IntegerAttr(0));

  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto tableType = LLVM::LLVMArrayType::get(ptrType, symbols.size());
  auto table = builder.create<LLVM::GlobalOp>(
      loc, tableType, /*isConstant=*/true, LLVM::Linkage::External,
      "txc_entry_table", Attribute());
  Block *init = builder.createBlock(&table.getInitializerRegion());
  builder.setInsertionPointToStart(init);
  Value array = builder.create<LLVM::UndefOp>(loc, tableType);
  for (auto [i, symbol] : llvm::enumerate(symbols)) {
    if (!module.lookupSymbol<LLVM::LLVMFuncOp>(symbol))
      return module.emitError("no entry function ") << symbol;
    Value address = builder.create<LLVM::AddressOfOp>(loc, ptrType, symbol);
    array = builder.create<LLVM::InsertValueOp>(loc, array, address,
                                                ArrayRef<int64_t>{int64_t(i)});
  }
  builder.create<LLVM::ReturnOp>(loc, array);
  return success();
}

namespace {

bool isHostCpu(const CpuTarget &target) {
  return target.cpu.empty() || target.cpu == "native";
}

/// The target of the host triple, its registry entry initialised once.
const llvm::Target *lookupHostTarget(std::string &triple, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::sys::getProcessTriple();
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

/// The CPU name and feature string LLVM builds `cpu`'s code for: the host
/// CPU and its features by default, then the attributes.
std::pair<std::string, std::string> cpuAndFeatures(const CpuTarget &cpu) {
  llvm::SubtargetFeatures features;
  std::string cpuName = cpu.cpu;
  if (isHostCpu(cpu)) {
    cpuName = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
  }
  bool avx512 = false, evex512Given = false;
  for (const std::string &attribute : cpu.attributes) {
    features.AddFeature(attribute);
    llvm::StringRef name = llvm::StringRef(attribute).drop_front();
    avx512 = avx512 || (attribute[0] == '+' && name.starts_with("avx512"));
    evex512Given = evex512Given || name == "evex512";
  }
  // LLVM 19 splits 512-bit registers off AVX-512 (evex512, for AVX10/256):
  // `--mcpu=x86-64-v3 --mattr=+avx512f` enabled the instructions without
  // the registers, and instruction selection crashed on 512-bit vectors.
  // clang adds +evex512 with an AVX-512 feature unless told otherwise; so
  // does txc.
  if (avx512 && !evex512Given)
    features.AddFeature("+evex512");
  return {cpuName, features.getString()};
}

/// A TargetMachine for `cpu` (the host CPU and its features by default),
/// generating code at `level`.
std::unique_ptr<llvm::TargetMachine>
createCpuTargetMachine(const CpuTarget &cpu, std::string &error,
                       llvm::CodeGenOptLevel level) {
  std::string triple;
  const llvm::Target *target = lookupHostTarget(triple, error);
  if (!target)
    return nullptr;
  auto [cpuName, features] = cpuAndFeatures(cpu);
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, cpuName, features, options,
                                  llvm::Reloc::PIC_, std::nullopt, level));
}

/// The name prefix of a local symbol the entries share with the kernels.
std::string localPrefix(llvm::GlobalValue::LinkageTypes linkage) {
  return linkage == llvm::GlobalValue::PrivateLinkage ? "__txc_private."
                                                      : "__txc_internal.";
}

bool isEntry(const llvm::GlobalValue &value) {
  return llvm::isa<llvm::Function>(value) &&
         value.getName().starts_with("txc_entry_");
}

/// Moves the entries (`txc_entry_*`) of `module` into a module of their
/// own and leaves declarations of them behind. An entry is straight-line
/// code: thousands of calls into libtxrt and the glue kernels, each
/// followed by a status check, with no loops of its own; the calls take
/// milliseconds each at run time. LLVM's optimizer and full code generator
/// grow faster than linearly over such a function (the greedy register
/// allocator and live intervals over values live across thousands of
/// blocks: docs/benchmarks.md, "Compile time"), while the fast code
/// generator is linear. What the entries use of the rest (the private
/// constants, the CUDA target's kernel images) becomes hidden external
/// symbols named `__txc_private.*` or `__txc_internal.*` after their
/// linkage, so the two objects link (joinModules makes them local again).
std::unique_ptr<llvm::Module> splitEntries(llvm::Module &module) {
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> entries =
      llvm::CloneModule(module, map, [](const llvm::GlobalValue *value) {
        return isEntry(*value);
      });
  entries->setModuleIdentifier("txc_entries");
  // What the clone only declares and the entries use: a local symbol of
  // the original becomes a hidden external one, defined there.
  unsigned unnamed = 0;
  for (llvm::GlobalValue &original : module.global_values()) {
    auto *copy = llvm::cast_or_null<llvm::GlobalValue>(map.lookup(&original));
    if (!copy || isEntry(original))
      continue;
    if (copy->use_empty()) {
      copy->eraseFromParent();
      continue;
    }
    if (!original.hasLocalLinkage())
      continue;
    std::string name =
        localPrefix(original.getLinkage()) +
        (original.hasName() ? original.getName().str()
                            : std::to_string(unnamed++));
    original.setName(name);
    original.setLinkage(llvm::GlobalValue::ExternalLinkage);
    original.setVisibility(llvm::GlobalValue::HiddenVisibility);
    original.setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::None);
    copy->setName(original.getName());
    copy->setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  for (llvm::Function &function : module)
    if (isEntry(function))
      function.deleteBody();
  for (llvm::Function &function : *entries)
    if (isEntry(function)) {
      // As they are compiled; also what llc sees in --emit=llvm.
      function.addFnAttr(llvm::Attribute::NoInline);
      function.addFnAttr(llvm::Attribute::OptimizeNone);
    }
  return entries;
}

LogicalResult emitObject(llvm::Module &module, llvm::StringRef path,
                         std::string &error, const CpuTarget &cpu,
                         llvm::CodeGenOptLevel level) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createCpuTargetMachine(cpu, error, level);
  if (!machine)
    return failure();
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  passes.run(module);
  os.flush();
  // A full TMPDIR: one error naming the file (the stream's error, left
  // for its destructor, ended txc with "LLVM ERROR: IO failure on output
  // stream").
  if (os.has_error()) {
    error = "cannot write '" + path.str() + "' (TMPDIR): " +
            os.error().message();
    os.clear_error();
    return failure();
  }
  return success();
}

/// Runs the link compiler (TXC_LINK_COMPILER) with `args` after its name.
LogicalResult runLinkCompiler(std::vector<std::string> args,
                              std::string &error) {
  llvm::ErrorOr<std::string> compiler =
      llvm::sys::findProgramByName(TXC_LINK_COMPILER);
  if (!compiler) {
    error = "no C++ compiler ('" TXC_LINK_COMPILER "') to link with";
    return failure();
  }
  args.insert(args.begin(), *compiler);
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*compiler, argRefs, std::nullopt, {},
                                         0, 0, &message);
  if (status != 0) {
    error = "linking failed (" +
            (message.empty() ? "exit status " + std::to_string(status)
                             : message) +
            "; the linker's messages are above); the command: " +
            llvm::join(argRefs, " ");
    return failure();
  }
  return success();
}

} // namespace

LogicalResult mlir::tx::verifyCpuTarget(const CpuTarget &cpu,
                                        std::string &error) {
  std::string triple;
  const llvm::Target *target = lookupHostTarget(triple, error);
  if (!target)
    return failure();
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!isHostCpu(cpu) && !info->isCPUStringValid(cpu.cpu)) {
    error = "--mcpu=" + cpu.cpu + ": unknown CPU for " + triple +
            " (LLVM's names, e.g. x86-64, x86-64-v2, x86-64-v3, x86-64-v4, "
            "skylake-avx512, znver4; 'native' is the host)";
    return failure();
  }
  for (const std::string &attribute : cpu.attributes) {
    llvm::StringRef name(attribute);
    if (name.empty()) {
      error = "--mattr: an empty item (two commas, or one at the end?); "
              "attributes are '+name' or '-name', separated by commas";
      return failure();
    }
    if (!name.consume_front("+") && !name.consume_front("-")) {
      error = "--mattr=" + attribute +
              ": an attribute is '+name' (enable) or '-name' (disable)";
      return failure();
    }
    // AVX-512 without 512-bit registers (AVX10/256): LLVM 19's instruction
    // selection crashes on txc's kernels there (a padding mask's compare,
    // even vectorized at 256 bits).
    if (attribute == "-evex512") {
      error = "--mattr=-evex512: AVX-512 without 512-bit registers is not "
              "supported (LLVM 19's code generator crashes on txc's kernels "
              "there); for code without 512-bit registers use "
              "--mattr=-avx512f, or --mcpu=x86-64-v3";
      return failure();
    }
    bool known = llvm::any_of(info->getAllProcessorFeatures(),
                              [&](const llvm::SubtargetFeatureKV &feature) {
                                return name == feature.Key;
                              });
    if (!known) {
      error = "--mattr=" + attribute + ": unknown feature '" + name.str() +
              "' for " + triple + " (e.g. avx2, fma, avx512f)";
      return failure();
    }
    // Modes and float ABIs LLVM knows but cannot build x86-64 code with:
    // they aborted txc ("Do not know how to expand...") or failed the link
    // (soft-float's __mulsf3).
    if (name.ends_with("bit-mode") || name == "soft-float" ||
        (attribute[0] == '-' && (name == "64bit" || name == "sse"))) {
      error = "--mattr=" + attribute + ": txc builds x86-64 code, which " +
              (name == "soft-float" || name == "sse"
                   ? "passes floats in SSE registers"
                   : "needs the 64-bit mode") +
              "; leave '" + name.str() + "' as the CPU has it";
      return failure();
    }
  }
  // A 32-bit CPU (i386, i686, pentium4, lakemont): LLVM aborted with "64-bit
  // code requested on a subtarget that doesn't support it!".
  auto [cpuName, features] = cpuAndFeatures(cpu);
  std::unique_ptr<llvm::MCSubtargetInfo> chosen(
      target->createMCSubtargetInfo(triple, cpuName, features));
  if (!chosen->checkFeatures("+64bit")) {
    error = "--mcpu=" + cpu.cpu +
            ": a 32-bit CPU; txc builds x86-64 code (e.g. --mcpu=x86-64 for "
            "any x86-64 CPU, x86-64-v3 for AVX2 ones)";
    return failure();
  }
  return success();
}

/// The x86 extensions LLVM's code generator may use on its own (vectorized
/// and scalar code, shuffles, bit tricks), of those txrt_cpu_has_feature
/// checks at run time (runtime/lib/CpuFeatures.cpp keeps the same names).
/// Left out: what only intrinsics reach (aes, sha, rdrnd, rdseed, adx,
/// pclmul, vaes, vpclmulqdq, amx-*, cx16, prfchw), which a native build on
/// one CPU would otherwise require of the machine it moves to.
static const char *const kCheckableCpuFeatures[] = {
    "sse3",         "ssse3",
    "sse4.1",       "sse4.2",
    "popcnt",       "movbe",
    "avx",          "f16c",
    "fma",          "bmi",
    "avx2",         "bmi2",
    "lzcnt",        "avxvnni",
    "gfni",         "avx512f",
    "avx512dq",     "avx512cd",
    "avx512bw",     "avx512vl",
    "avx512ifma",   "avx512vbmi",
    "avx512vbmi2",  "avx512vnni",
    "avx512bitalg", "avx512vpopcntdq",
    "avx512bf16",   "avx512fp16",
    "sse4a",        "xop",
    "fma4",         "tbm"};

std::vector<std::string> mlir::tx::cpuFeaturesUsed(const CpuTarget &cpu) {
  std::string triple, error;
  const llvm::Target *target = lookupHostTarget(triple, error);
  if (!target)
    return {};
  auto [cpuName, features] = cpuAndFeatures(cpu);
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, cpuName, features));
  std::vector<std::string> used;
  for (const char *name : kCheckableCpuFeatures)
    if (info->checkFeatures(std::string("+") + name))
      used.push_back(name);
  return used;
}

NativeModules mlir::tx::translateAndOptimize(ModuleOp module,
                                             llvm::LLVMContext &context,
                                             std::string &error,
                                             const CpuTarget &cpu) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "txc_model");
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return {};
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      createCpuTargetMachine(cpu, error, llvm::CodeGenOptLevel::Default);
  if (!machine)
    return {};
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple().str());
  std::string cpuName = machine->getTargetCPU().str();
  std::string featureString = machine->getTargetFeatureString().str();
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", cpuName);
    function.addFnAttr("target-features", featureString);
    function.addFnAttr("prefer-vector-width", "512");
  }
  NativeModules modules;
  modules.entries = splitEntries(*llvmModule);
  modules.kernels = std::move(llvmModule);

  llvm::LoopAnalysisManager loopAnalyses;
  llvm::FunctionAnalysisManager functionAnalyses;
  llvm::CGSCCAnalysisManager cgsccAnalyses;
  llvm::ModuleAnalysisManager moduleAnalyses;
  llvm::PassBuilder passBuilder(machine.get());
  passBuilder.registerModuleAnalyses(moduleAnalyses);
  passBuilder.registerCGSCCAnalyses(cgsccAnalyses);
  passBuilder.registerFunctionAnalyses(functionAnalyses);
  passBuilder.registerLoopAnalyses(loopAnalyses);
  passBuilder.crossRegisterProxies(loopAnalyses, functionAnalyses,
                                   cgsccAnalyses, moduleAnalyses);
  llvm::ModulePassManager passes =
      passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(*modules.kernels, moduleAnalyses);
  return modules;
}

std::unique_ptr<llvm::Module> mlir::tx::joinModules(NativeModules modules,
                                                    std::string &error) {
  if (llvm::Linker::linkModules(*modules.kernels,
                                std::move(modules.entries))) {
    error = "cannot join the entries' and the kernels' LLVM IR";
    return nullptr;
  }
  // The symbols splitEntries exported local again, the entries first: as
  // MLIR's module has them.
  llvm::Module &joined = *modules.kernels;
  for (llvm::GlobalValue &value : joined.global_values())
    for (auto linkage : {llvm::GlobalValue::PrivateLinkage,
                         llvm::GlobalValue::InternalLinkage}) {
      llvm::StringRef name = value.getName();
      if (!name.consume_front(localPrefix(linkage)))
        continue;
      value.setName(name.str());
      value.setVisibility(llvm::GlobalValue::DefaultVisibility);
      value.setLinkage(linkage);
    }
  llvm::SmallVector<llvm::Function *> entries;
  for (llvm::Function &function : joined)
    if (isEntry(function) && !function.isDeclaration())
      entries.push_back(&function);
  auto &functions = joined.getFunctionList();
  for (llvm::Function *entry : llvm::reverse(entries))
    functions.splice(functions.begin(), functions, entry->getIterator());
  return std::move(modules.kernels);
}

LogicalResult mlir::tx::writeObjectFiles(NativeModules &modules,
                                         llvm::StringRef kernelsPath,
                                         llvm::StringRef entriesPath,
                                         std::string &error,
                                         const CpuTarget &cpu) {
  if (failed(emitObject(*modules.kernels, kernelsPath, error, cpu,
                        llvm::CodeGenOptLevel::Default)))
    return failure();
  return emitObject(*modules.entries, entriesPath, error, cpu,
                    llvm::CodeGenOptLevel::None);
}

void mlir::tx::renameExportedSymbols(llvm::Module &module,
                                     llvm::StringRef prefix) {
  for (llvm::GlobalValue &value : module.global_values()) {
    llvm::StringRef name = value.getName();
    // The glue kernels and constants are the object's own: hidden, a
    // shared library that links the object does not export them (two
    // models' libraries loaded with RTLD_GLOBAL bound each other's).
    if (name.starts_with("__txc_") && !value.hasLocalLinkage())
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    if (prefix == "txc")
      continue;
    if (name.starts_with("txc_"))
      value.setName((prefix + name.drop_front(3)).str());
    else if (name.starts_with("__txc_"))
      value.setName(("__" + prefix + name.drop_front(5)).str());
  }
}

LogicalResult mlir::tx::linkRelocatable(llvm::ArrayRef<std::string> objects,
                                        llvm::StringRef output,
                                        std::string &error) {
  std::vector<std::string> args = {"-r", "-nostdlib", "-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  return runLinkCompiler(std::move(args), error);
}

LogicalResult mlir::tx::linkExecutable(llvm::ArrayRef<std::string> objects,
                                       llvm::StringRef output,
                                       llvm::StringRef libDir,
                                       std::string &error, bool cuda) {
  // The driver (with main), its core, the kernels: in link order.
  std::vector<std::string> args = {"-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  std::vector<const char *> libraries = {"libtxrt_driver.a",
                                         "libtxrt_driver_core.a", "libtxrt.a"};
  if (cuda) // the CUDA driver backend uses the core; the kernels use libtxrt
    libraries = {"libtxrt_driver.a", "libtxrt_driver_cuda.a",
                 "libtxrt_driver_core.a", "libtxrt_cuda.a", "libtxrt.a"};
  for (const char *name : libraries) {
    std::string library = (libDir + "/" + name).str();
    if (!llvm::sys::fs::exists(library)) {
      error = "runtime library '" + library +
              "' not found (build the txrt and txrt_driver targets)";
      return failure();
    }
    args.push_back(library);
  }
  if (cuda)
    for (llvm::StringRef flag : llvm::split(TXC_CUDA_LINK_FLAGS, ';'))
      if (!flag.empty())
        args.push_back(flag.str());
  for (llvm::StringRef flag : llvm::split(TXC_RUNTIME_LINK_FLAGS, ';'))
    if (!flag.empty())
      args.push_back(flag.str());
  return runLinkCompiler(std::move(args), error);
}
