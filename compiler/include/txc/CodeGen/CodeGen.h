//===- CodeGen.h - from planned tx IR to objects and executables -*- C++ -*-===//
//
// The back half of txc: model metadata (JSON embedded in the object, and a C
// header for embedding), the pass pipeline from lowered entries to the LLVM
// dialect, translation to LLVM IR (the glue kernels optimized at O3 for the
// host CPU, the entries split off and compiled fast), object emission
// through in-process TargetMachines, and linking with libtxrt and the driver
// into an executable.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_CODEGEN_CODEGEN_H
#define TXC_CODEGEN_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tx {

/// The model metadata of a planned module (before tx-lower-entries) as JSON:
/// config, dims, parameters with offsets, entries with their inputs,
/// outputs and arena sizes. `source` and `flags` describe the compilation;
/// `symbolPrefix` names the entry symbols (`PREFIX_entry_NAME`).
std::string buildModelMetadata(ModuleOp planned, llvm::StringRef source,
                               llvm::StringRef flags,
                               llvm::StringRef symbolPrefix = "txc");

/// A C header declaring what an object file made by txc exports (the
/// metadata, the entry functions and their buffer layout) for `planned`,
/// every name starting with `symbolPrefix` (`txc_model_json`,
/// `TXC_PARAM_ARENA_BYTES`; renameExportedSymbols for the object).
///
/// The header references a symbol named by a hash of its contents
/// (`txc_header_<16 hex digits>`, set in `checkSymbol`), which the object
/// defines (addModelGlobals): a program compiled with one build's header
/// does not link with another build's object.
std::string buildCHeader(ModuleOp planned, llvm::StringRef guardName,
                         llvm::StringRef symbolPrefix = "txc",
                         std::string *checkSymbol = nullptr);

/// Why buildCHeader's names would clash (two entries whose names upper-case
/// alike, `fwd` and `FWD`, or an entry `param`), or "" when they do not.
std::string cHeaderNameClash(ModuleOp planned,
                             llvm::StringRef symbolPrefix = "txc");

/// Whether `prefix` can start the object's symbols (--symbol-prefix): a C
/// identifier of at most 64 characters, not starting with '_'. Returns ""
/// or what is wrong with it.
std::string checkSymbolPrefix(llvm::StringRef prefix);

/// The metadata `json` with the module's call-site table (the "tx.sites"
/// attribute LowerEntries leaves, removed here) added as "sites": which
/// entry, op, spec location and scope each runtime call site is
/// (SiteTable.cpp).
std::string addSiteTable(llvm::StringRef json, ModuleOp lowered);

/// Adds to `module` (tx-lower-entries already run) the passes that bring it
/// to the LLVM dialect: linalg to loops, SCF to CF, memref/arith/math/func/cf
/// to LLVM. With `gpuLaunches` (--target=cuda, after lowerEntriesForCuda),
/// also gpu.launch_func to the mgpu* calls of runtime/cuda.
void buildLowerToLLVMPipeline(OpPassManager &pm, bool gpuLaunches = false);

/// Adds the exported globals `txc_model_json`, `txc_entry_table` and the
/// header's check symbol (buildCHeader; none when empty) to a module in the
/// LLVM dialect.
LogicalResult addModelGlobals(ModuleOp llvmModule, llvm::StringRef json,
                              llvm::ArrayRef<std::string> entrySymbols,
                              llvm::StringRef headerSymbol = "");

/// The CPU that native code is generated for, as llc's -mcpu / -mattr: an
/// empty `cpu` (or "native") is the host with its features; `attributes`
/// ("+avx2", "-avx512f") are added after the CPU's own.
struct CpuTarget {
  std::string cpu;
  std::vector<std::string> attributes;
};

/// Checks `target` against LLVM's lists for the host triple: the CPU must be
/// one LLVM knows, each attribute "+name" or "-name" of a known feature.
/// Returns failure with a message in `error` (naming the valid choices).
LogicalResult verifyCpuTarget(const CpuTarget &target, std::string &error);

/// The x86 instruction-set extensions (LLVM's names: "avx2", "avx512f", ...)
/// that code generated for `target` may use (those LLVM's code generator
/// emits on its own, not intrinsic-only ones), which the runtime checks
/// with cpuid: the metadata's "cpu_features", which the executable checks
/// before any work (a CPU without one died of SIGILL in the first kernel).
std::vector<std::string> cpuFeaturesUsed(const CpuTarget &target);

/// A model's native code in two LLVM modules, compiled differently: the
/// glue kernels and the exported globals (O3, the full code generator), and
/// the entries `txc_entry_*` (no IR passes, the fast code generator: their
/// compile time is linear in their length; docs/codegen.md).
struct NativeModules {
  std::unique_ptr<llvm::Module> kernels;
  std::unique_ptr<llvm::Module> entries;
  explicit operator bool() const { return kernels && entries; }
};

/// Translates an LLVM-dialect module to LLVM IR, splits off the entries and
/// optimizes the kernels at O3 for `cpu` (default: the host). Returns empty
/// modules and sets `error` on failure.
NativeModules translateAndOptimize(ModuleOp llvmModule,
                                   llvm::LLVMContext &context,
                                   std::string &error,
                                   const CpuTarget &cpu = {});

/// Links the two halves back into one module (for --emit=llvm; the entries
/// keep `optnone`, so llc compiles them as txc does).
std::unique_ptr<llvm::Module> joinModules(NativeModules modules,
                                          std::string &error);

/// Writes `modules` as two object files for `cpu` (default: the host): the
/// kernels at CodeGenOptLevel::Default, the entries at None.
LogicalResult writeObjectFiles(NativeModules &modules,
                               llvm::StringRef kernelsPath,
                               llvm::StringRef entriesPath, std::string &error,
                               const CpuTarget &cpu = {});

/// Renames what `module` defines or declares under txc's fixed names,
/// `txc_*` to `PREFIX_*` and `__txc_*` to `__PREFIX_*` (the metadata, the
/// entry table, the entries, the glue kernels and the constants the two
/// halves share), so that objects compiled with different prefixes link
/// into one program. Run on both halves of NativeModules alike.
void renameExportedSymbols(llvm::Module &module, llvm::StringRef prefix);

/// Links `objects` into one relocatable object `output` (`c++ -r`), the
/// object file of --emit=obj.
LogicalResult linkRelocatable(llvm::ArrayRef<std::string> objects,
                              llvm::StringRef output, std::string &error);

/// Links `objects` with libtxrt, the executable driver and oneDNN into
/// `output` with the system C++ compiler. `libDir` holds libtxrt.a and
/// libtxrt_driver.a. With `cuda`, also the CUDA backend (libtxrt_cuda.a),
/// the driver's CUDA device (libtxrt_driver_cuda.a) and the static CUDA
/// runtime.
LogicalResult linkExecutable(llvm::ArrayRef<std::string> objects,
                             llvm::StringRef output, llvm::StringRef libDir,
                             std::string &error, bool cuda = false);

} // namespace mlir::tx

#endif // TXC_CODEGEN_CODEGEN_H
