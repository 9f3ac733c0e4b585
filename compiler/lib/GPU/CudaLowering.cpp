//===- CudaLowering.cpp - entries for the CUDA target ---------------------===//
//
// tx-lower-entries writes entries that call libtxrt and `__txc_kernel_*`
// glue functions (one linalg.generic each) on buffers in the arenas. For
// --target=cuda the arenas and the entry's inputs and outputs are device
// memory (the driver allocates and copies them), so everything that touches
// them must run on the device: the runtime calls are renamed to the CUDA
// backend's (RuntimeAPI's registry), the glue and the buffer copies become
// gpu.func kernels, and the few host scalars a kernel reads (a rank-0
// alloca holding a position offset) are loaded on the host and passed by
// value. The spec's constants (memref.global, host memory) reach the device
// through txrt_cuda_constant: a device copy made at first use, kept by the
// context. The kernels go through NVVM to PTX in a gpu.binary; the host side's
// gpu.launch_func becomes mgpu* calls in gpu-to-llvm.
//
//===----------------------------------------------------------------------===//
#include "txc/GPU/CudaLowering.h"
#include "txc/Conversion/RuntimeAPI.h"
#include "txc/GPU/GluePipeline.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace {

bool isGlueKernel(func::FuncOp func) {
  return func.getSymName().starts_with("__txc_kernel_");
}

/// For each glue kernel, its rank-0 memref arguments that every call passes
/// a memref.alloca for: host memory the device cannot read. Each is loaded
/// once on the host and the generic's block argument replaced by the value,
/// which outlining then passes to the kernel by value.
void passHostScalarsByValue(ModuleOp module) {
  llvm::DenseMap<Operation *, llvm::SmallVector<bool>> hostScalars;
  module.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || !isGlueKernel(callee))
      return;
    auto &flags = hostScalars[callee];
    if (flags.empty())
      flags.assign(call.getNumOperands(), true);
    for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      flags[i] = flags[i] && type && type.getRank() == 0 &&
                 operand.getDefiningOp<memref::AllocaOp>();
    }
  });
  for (auto &[op, flags] : hostScalars) {
    auto callee = cast<func::FuncOp>(op);
    callee.walk([&](linalg::GenericOp generic) {
      for (OpOperand *input : generic.getDpsInputOperands()) {
        auto arg = dyn_cast<BlockArgument>(input->get());
        if (!arg || arg.getOwner() != &callee.getBody().front() ||
            !flags[arg.getArgNumber()])
          continue;
        OpBuilder builder(generic);
        Value value = builder.create<memref::LoadOp>(generic.getLoc(), arg);
        generic.getMatchingBlockArgument(input).replaceAllUsesWith(value);
      }
    });
  }
}

/// The spec's constants are memref.globals: host memory, which neither the
/// glue kernels nor the CUDA backend's calls can read. Every address taken
/// of one in an entry (memref.extract_aligned_pointer_as_index of its
/// memref.get_global; tx-lower-entries takes no other) becomes the address
/// of its device copy, `txrt_cuda_constant(ctx, host, bytes)`, with the
/// context the entry's first argument. Any other use of a constant on the
/// host is an error naming the function, never a host pointer on the GPU.
LogicalResult constantsToDevice(ModuleOp module) {
  MLIRContext *context = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64Type = IntegerType::get(context, 64);
  SmallVector<memref::GetGlobalOp> globals;
  module.walk([&](memref::GetGlobalOp op) {
    if (!op->getParentOfType<gpu::GPUModuleOp>())
      globals.push_back(op);
  });
  if (globals.empty())
    return success();
  func::FuncOp declaration =
      module.lookupSymbol<func::FuncOp>("txrt_cuda_constant");
  if (!declaration) {
    OpBuilder builder(context);
    builder.setInsertionPointToEnd(module.getBody());
    declaration = builder.create<func::FuncOp>(
        module.getLoc(), "txrt_cuda_constant",
        builder.getFunctionType({ptrType, ptrType, i64Type}, {ptrType}));
    declaration.setPrivate();
  }
  for (memref::GetGlobalOp get : globals) {
    auto func = get->getParentOfType<func::FuncOp>();
    auto global =
        module.lookupSymbol<memref::GlobalOp>(get.getNameAttr());
    auto type = get.getType();
    bool entryArgument = func && func.getNumArguments() > 0 &&
                         isa<LLVM::LLVMPointerType>(
                             func.getArgument(0).getType());
    bool onlyAddresses = llvm::all_of(get->getUsers(), [](Operation *user) {
      return isa<memref::ExtractAlignedPointerAsIndexOp>(user);
    });
    if (!global || !global.getConstant() || !type.hasStaticShape() ||
        !entryArgument || !onlyAddresses)
      return get.emitError("--target=cuda: constant @")
             << get.getName() << " in @"
             << (func ? func.getSymName() : StringRef("?"))
             << " is read on the host in a way the CUDA lowering cannot "
                "move to the device (docs/cuda.md)";
    int64_t elementBytes =
        (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
    int64_t bytes = std::max<int64_t>(type.getNumElements() * elementBytes, 1);
    for (Operation *user : llvm::to_vector(get->getUsers())) {
      auto extract = cast<memref::ExtractAlignedPointerAsIndexOp>(user);
      OpBuilder builder(extract->getContext());
      builder.setInsertionPointAfter(extract);
      Location loc = extract.getLoc();
      Value hostIndex = builder.create<arith::IndexCastOp>(
          loc, i64Type, extract.getResult());
      Value host = builder.create<LLVM::IntToPtrOp>(loc, ptrType, hostIndex);
      Value size = builder.create<arith::ConstantIntOp>(loc, bytes, 64);
      Value device = builder
                         .create<func::CallOp>(loc, declaration,
                                               ValueRange{func.getArgument(0),
                                                          host, size})
                         .getResult(0);
      Value deviceInt = builder.create<LLVM::PtrToIntOp>(loc, i64Type, device);
      Value deviceIndex = builder.create<arith::IndexCastOp>(
          loc, builder.getIndexType(), deviceInt);
      extract.getResult().replaceAllUsesExcept(deviceIndex,
                                               hostIndex.getDefiningOp());
    }
  }
  return success();
}

/// memref.copy between buffers (device memory) as linalg.copy, which the
/// glue pipeline turns into a kernel like any other.
void copiesToLinalg(ModuleOp module) {
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    OpBuilder builder(copy);
    builder.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(),
                                   copy.getTarget());
    copy.erase();
  }
}

/// After outlining, host code may load or store only host memory: a
/// memref.alloca (a host scalar) or, in a glue function, the rank-0
/// arguments passHostScalarsByValue loads (every call passes an alloca).
/// Anything else is a buffer in an arena or an entry's input or output,
/// device memory, which the host would read or write at run time (a
/// segfault, or a wrong value): a loop left on the host over buffers is glue
/// the GPU mapping did not take (a reduction to a scalar), a load or store
/// outside loops code that computes on a buffer on the host (gradient
/// clipping's norm did, until 2026-11-30). An error names the function.
LogicalResult checkNoHostBufferAccess(ModuleOp module) {
  WalkResult result = module.walk([&](Operation *op) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef();
    else
      return WalkResult::advance();
    if (op->getParentOfType<gpu::GPUModuleOp>())
      return WalkResult::advance();
    auto func = op->getParentOfType<func::FuncOp>();
    bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
    bool hostScalar = false;
    if (!inLoop) {
      if (memref.getDefiningOp<memref::AllocaOp>())
        hostScalar = true;
      else if (auto arg = dyn_cast<BlockArgument>(memref))
        hostScalar = func && isGlueKernel(func) &&
                     arg.getOwner() == &func.getBody().front() &&
                     isa<memref::LoadOp>(op);
    }
    if (hostScalar)
      return WalkResult::advance();
    if (inLoop)
      op->emitError("--target=cuda: glue in @")
          << (func ? func.getSymName() : StringRef("?"))
          << " stays a loop on the host (a reduction the GPU mapping does "
             "not take yet; docs/cuda.md)";
    else
      op->emitError("--target=cuda: @")
          << (func ? func.getSymName() : StringRef("?"))
          << (isa<memref::LoadOp>(op) ? " reads" : " writes")
          << " a device buffer on the host (docs/cuda.md)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

void registerGpuTranslations(MLIRContext *context) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  context->appendDialectRegistry(registry);
}

} // namespace

LogicalResult mlir::tx::prepareEntriesForCuda(ModuleOp module) {
  module.getContext()->loadDialect<linalg::LinalgDialect, NVVM::NVVMDialect,
                                   LLVM::LLVMDialect, arith::ArithDialect>();
  if (failed(retargetRuntimeCalls(module, RuntimeTarget::Cuda)))
    return failure();
  passHostScalarsByValue(module);
  if (failed(constantsToDevice(module)))
    return failure();
  copiesToLinalg(module);
  return failure(failed(outlineGlueToGpu(module)) ||
                 failed(checkNoHostBufferAccess(module)));
}

LogicalResult mlir::tx::lowerEntriesForCuda(ModuleOp module,
                                            llvm::StringRef toolkitPath) {
  MLIRContext *context = module.getContext();
  registerGpuTranslations(context);
  if (failed(prepareEntriesForCuda(module)))
    return failure();

  PassManager pm(context);
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = kCudaPtxChip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkitPath.str();
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  return pm.run(module);
}
