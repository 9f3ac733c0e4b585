//===- RuntimeAPI.h - the libtxrt functions generated code calls -*- C++ -*-===//
//
// One registry of every runtime function the compiler may call: an enum, its
// symbol and its signature (the C declarations are in
// runtime/include/txrt/txrt.h). Lowering code names functions by enum and
// gets a declared func.func back; no runtime symbol is spelled elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_CONVERSION_RUNTIMEAPI_H
#define TXC_CONVERSION_RUNTIMEAPI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tx {

enum class RuntimeFn {
  Matmul,
  LinearFwd,
  LinearGatedFwd,
  LayerNormFwd,
  AddLayerNormFwd,
  RmsNormFwd,
  Rope,
  RopeAngles,
  RopePartial,
  RopeAnglesPartial,
  SoftmaxFwd,
  ActivationFwd,
  Reduce,
  EmbeddingFwd,
  Gather,
  CrossEntropyFwd,
  DropoutFwd,
  AttentionFwd,
  // Backward and training.
  LinearBwd,
  LayerNormBwd,
  AddLayerNormBwd,
  RmsNormBwd,
  SoftmaxBwd,
  ActivationBwd,
  EmbeddingBwd,
  GatherBwd,
  CrossEntropyBwd,
  DropoutBwd,
  AttentionBwd,
  AdamStep,
  SumSquares,
  TrainState,
  CheckEntry,
  EntryDone,
  CheckCacheRows,
  CheckDimMin,
  // bf16 precision (docs/precision.md).
  CastF32ToBf16,
  CastBf16ToF32,
  AddLayerNormFwdBf16,
  RmsNormFwdBf16,
  LinearFwdBf16,
  LinearGatedFwdBf16,
  LinearBwdBf16,
  AdamStepBf16,
  AttentionFwdBf16,
  AttentionBwdBf16,
};

/// The C symbol of `fn` (e.g. "txrt_linear_fwd").
StringRef getRuntimeSymbol(RuntimeFn fn);

/// The device whose runtime the generated code calls.
enum class RuntimeTarget { Cpu, Cuda };

/// The symbol of `fn` on `target` ("txrt_cuda_linear_fwd" for Cuda), or
/// nullptr where that backend has no such function.
const char *getRuntimeSymbol(RuntimeFn fn, RuntimeTarget target);

/// Renames every runtime function declared in `module` (and its calls) to
/// its `target` symbol; the lowering itself declares the CPU symbols. Fails
/// with an error on the declaration when `target` has no counterpart.
LogicalResult retargetRuntimeCalls(ModuleOp module, RuntimeTarget target);

/// The declaration of `fn` in `module` (created at the module's end on first
/// use), with its C signature in builtin/LLVM types: pointers are !llvm.ptr,
/// int64_t is i64, int32_t and the status are i32, float is f32.
func::FuncOp getOrDeclareRuntimeFn(ModuleOp module, RuntimeFn fn);

} // namespace mlir::tx

#endif // TXC_CONVERSION_RUNTIMEAPI_H
