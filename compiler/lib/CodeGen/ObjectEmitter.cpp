//===- ObjectEmitter.cpp - LLVM dialect to an object file and an exe ------===//
//
// Lowers entries to the LLVM dialect, adds the exported model globals,
// translates to LLVM IR, optimizes at O3 for the host CPU (its name and
// features, so loops vectorize to its widest units) or the CPU and
// attributes of txc's --mcpu / --mattr, emits an object file
// through an in-process TargetMachine, and links it with libtxrt and the
// driver using the system C++ compiler.
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
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tx;

void mlir::tx::buildLowerToLLVMPipeline(OpPassManager &pm, bool gpuLaunches) {
  // Lowering builds each operand's sizes and memref view where it is used;
  // CSE shares them across the entry (the entry is straight-line code, so an
  // earlier value dominates every later use).
  pm.addPass(createCSEPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
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
  pm.addPass(createCanonicalizerPass());
}

LogicalResult mlir::tx::addModelGlobals(ModuleOp module, llvm::StringRef json,
                                        llvm::ArrayRef<std::string> symbols) {
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

/// A TargetMachine for `cpu` (the host CPU and its features by default).
std::unique_ptr<llvm::TargetMachine>
createCpuTargetMachine(const CpuTarget &cpu, std::string &error) {
  std::string triple;
  const llvm::Target *target = lookupHostTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::SubtargetFeatures features;
  std::string cpuName = cpu.cpu;
  if (isHostCpu(cpu)) {
    cpuName = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
  }
  for (const std::string &attribute : cpu.attributes)
    features.AddFeature(attribute);
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpuName, features.getString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Default));
}

/// Marks the entries (`txc_entry_*`) optnone after O3, so that instruction
/// selection and register allocation take LLVM's fast paths for them. An
/// entry is straight-line code: a few thousand calls into libtxrt and the
/// glue kernels, with a status check after each; the kernels' loops stay
/// in their own functions and are compiled as before. The full code
/// generator spent about 60 % of txc's object-code time on base.tx's train
/// entries (selection DAGs and the greedy allocator over one 4,000-line
/// block chain); the calls they make take milliseconds each at run time.
void compileEntriesFast(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration() ||
        !function.getName().starts_with("txc_entry_"))
      continue;
    function.addFnAttr(llvm::Attribute::NoInline);
    function.addFnAttr(llvm::Attribute::OptimizeNone);
  }
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
    if (!name.consume_front("+") && !name.consume_front("-")) {
      error = "--mattr=" + attribute +
              ": an attribute is '+name' (enable) or '-name' (disable)";
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
  }
  return success();
}

std::unique_ptr<llvm::Module>
mlir::tx::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                               std::string &error, const CpuTarget &cpu) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "txc_model");
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      createCpuTargetMachine(cpu, error);
  if (!machine)
    return nullptr;
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
  passes.run(*llvmModule, moduleAnalyses);
  compileEntriesFast(*llvmModule);
  return llvmModule;
}

LogicalResult mlir::tx::writeObjectFile(llvm::Module &module,
                                        llvm::StringRef path,
                                        std::string &error,
                                        const CpuTarget &cpu) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createCpuTargetMachine(cpu, error);
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
  return success();
}

LogicalResult mlir::tx::linkExecutable(llvm::StringRef object,
                                       llvm::StringRef output,
                                       llvm::StringRef libDir,
                                       std::string &error, bool cuda) {
  llvm::ErrorOr<std::string> compiler =
      llvm::sys::findProgramByName(TXC_LINK_COMPILER);
  if (!compiler) {
    error = "no C++ compiler ('" TXC_LINK_COMPILER "') to link with";
    return failure();
  }
  // The driver (with main), its core, the kernels: in link order.
  std::vector<std::string> args = {*compiler, "-o", output.str(), object.str()};
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
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*compiler, argRefs, std::nullopt, {},
                                         0, 0, &message);
  if (status != 0) {
    error = "linking failed (" + llvm::join(argRefs, " ") + ")" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
