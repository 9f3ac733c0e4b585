//===- RuntimeAPI.cpp - registry of libtxrt functions ---------------------===//
//
// The signatures below mirror runtime/include/txrt/txrt.h one for one;
// test/Conversion/runtime-api.test checks every symbol against the header.
// Each function also names its CUDA counterpart (runtime/include/txrt/
// txrt_cuda.h: the same arguments, device pointers, a txrt_cuda_context),
// or nullptr where the CUDA backend has none; test/GPU/runtime-api-cuda.test
// checks those against that header.
//
//===----------------------------------------------------------------------===//
#include "txc/Conversion/RuntimeAPI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tx;

namespace {

/// Argument kinds of the registry's signatures.
enum class A { Ptr, I64, I32, F32 };

struct Entry {
  RuntimeFn fn;
  const char *symbol;
  const char *cudaSymbol;
  std::vector<A> args;
};

const std::vector<Entry> &registry() {
  static const std::vector<Entry> entries = {
      // ctx, site, batch0, batch1, m, n, k, a, a_strides, b, b_strides, c,
      // c_strides, bias, activation, residual, alpha, beta
      {RuntimeFn::Matmul,
       "txrt_matmul",
       "txrt_cuda_matmul",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr,
        A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::I32, A::Ptr, A::F32,
        A::F32}},
      // ctx, site, m, n, k, x, w, bias, activation, residual, y
      {RuntimeFn::LinearFwd,
       "txrt_linear_fwd",
       "txrt_cuda_linear_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::Ptr, A::Ptr}},
      // ctx, site, m, n, k, x, w, bias, activation, gate, residual, y
      {RuntimeFn::LinearGatedFwd,
       "txrt_linear_gated_fwd",
       "txrt_cuda_linear_gated_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, rows, cols, x, gamma, beta, eps, y, mean, var
      {RuntimeFn::LayerNormFwd,
       "txrt_layer_norm_fwd",
       "txrt_cuda_layer_norm_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::F32, A::Ptr,
        A::Ptr, A::Ptr}},
      // ctx, site, rows, cols, x, r, gamma, beta, eps, y, out_sum, mean, var
      {RuntimeFn::AddLayerNormFwd,
       "txrt_add_layer_norm_fwd",
       "txrt_cuda_add_layer_norm_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::F32,
        A::Ptr, A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, rows, cols, x, r, gamma, eps, y, out_sum
      {RuntimeFn::RmsNormFwd,
       "txrt_rms_norm_fwd",
       "txrt_cuda_rms_norm_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::F32, A::Ptr,
        A::Ptr}},
      // ctx, site, outer, seq, heads, head_dim, x, y, pos_offset, base,
      // inverse
      {RuntimeFn::Rope,
       "txrt_rope",
       "txrt_cuda_rope",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::I64,
        A::F32, A::I32}},
      // ctx, site, outer, seq, heads, head_dim, x, y, angles, inverse
      {RuntimeFn::RopeAngles,
       "txrt_rope_angles",
       "txrt_cuda_rope_angles",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr,
        A::I32}},
      // ctx, site, outer, seq, heads, head_dim, rotary_dim, x, y,
      // pos_offset, base, inverse
      {RuntimeFn::RopePartial,
       "txrt_rope_partial",
       "txrt_cuda_rope_partial",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr,
        A::I64, A::F32, A::I32}},
      // ctx, site, outer, seq, heads, head_dim, rotary_dim, x, y, angles,
      // inverse
      {RuntimeFn::RopeAnglesPartial,
       "txrt_rope_angles_partial",
       "txrt_cuda_rope_angles_partial",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr,
        A::Ptr, A::I32}},
      // ctx, site, rows, cols, x, y, log_softmax
      {RuntimeFn::SoftmaxFwd,
       "txrt_softmax_fwd",
       "txrt_cuda_softmax_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::I32}},
      // ctx, site, activation, n, x, y
      {RuntimeFn::ActivationFwd,
       "txrt_activation_fwd",
       "txrt_cuda_activation_fwd",
       {A::Ptr, A::I64, A::I32, A::I64, A::Ptr, A::Ptr}},
      // ctx, site, op, rank, x_dims, x, y_dims, y
      {RuntimeFn::Reduce,
       "txrt_reduce",
       "txrt_cuda_reduce",
       {A::Ptr, A::I64, A::I32, A::I32, A::Ptr, A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, n, vocab, dim, ids, table, scale, pos, seq_len, out
      {RuntimeFn::EmbeddingFwd,
       "txrt_embedding_fwd",
       "txrt_cuda_embedding_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::F32, A::Ptr,
        A::I64, A::Ptr}},
      // ctx, site, outer, n, inner, element_bytes, ids, count, src, out
      {RuntimeFn::Gather,
       "txrt_gather",
       "txrt_cuda_gather",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::I64, A::Ptr,
        A::Ptr}},
      // ctx, site, n, classes, logits, targets, ignore_index,
      // label_smoothing, reduction, out_loss, lse, out_row_loss, out_count
      {RuntimeFn::CrossEntropyFwd,
       "txrt_cross_entropy_fwd",
       "txrt_cuda_cross_entropy_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::I32, A::F32, A::I32,
        A::Ptr, A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, n, p, seed, step, x, y
      {RuntimeFn::DropoutFwd,
       "txrt_dropout_fwd",
       "txrt_cuda_dropout_fwd",
       {A::Ptr, A::I64, A::I64, A::F32, A::I64, A::I64, A::Ptr, A::Ptr}},
      // ctx, site, batch, heads, kv_heads, tq, tk, head_dim, q, ldq, k, ldk,
      // v, ldv, o, ldo, lse, mask, mask strides (batch, head, query, key),
      // causal, scale, fill, dropout_p, seed, step
      {RuntimeFn::AttentionFwd,
       "txrt_attention_fwd",
       "txrt_cuda_attention_fwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64,
        A::I64, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64,
        A::Ptr, A::I64, A::Ptr, A::Ptr, A::I64, A::I64, A::I64,
        A::I64, A::I32, A::F32, A::F32, A::F32, A::I64, A::I64}},
      // ctx, n, src, dst
      {RuntimeFn::CastF32ToBf16,
       "txrt_cast_f32_to_bf16",
       nullptr,
       {A::Ptr, A::I64, A::Ptr, A::Ptr}},
      {RuntimeFn::CastBf16ToF32,
       "txrt_cast_bf16_to_f32",
       nullptr,
       {A::Ptr, A::I64, A::Ptr, A::Ptr}},
      // ctx, site, rows, cols, x, r, gamma, beta, eps, y, out_sum, mean, var,
      // y_bf16
      {RuntimeFn::AddLayerNormFwdBf16,
       "txrt_add_layer_norm_fwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::F32,
        A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, rows, cols, x, r, gamma, eps, y, out_sum, y_bf16
      {RuntimeFn::RmsNormFwdBf16,
       "txrt_rms_norm_fwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::F32, A::Ptr,
        A::Ptr, A::Ptr}},
      // ctx, site, m, n, k, x (bf16), w (bf16), bias, activation, residual, y
      {RuntimeFn::LinearFwdBf16,
       "txrt_linear_fwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::Ptr, A::Ptr}},
      // ctx, site, m, n, k, x (bf16), w (bf16), bias, activation, gate,
      // residual, y
      {RuntimeFn::LinearGatedFwdBf16,
       "txrt_linear_gated_fwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, m, n, k, x (bf16), w (bf16), dy, dx, dw, dbias,
      // accumulate_dx, accumulate_params
      {RuntimeFn::LinearBwdBf16,
       "txrt_linear_bwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr,
        A::Ptr, A::Ptr, A::I32, A::I32}},
      // ctx, site, m, n, k, x, w, dy, dx, dw, dbias, accumulate_dx,
      // accumulate_params
      {RuntimeFn::LinearBwd,
       "txrt_linear_bwd",
       "txrt_cuda_linear_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr,
        A::Ptr, A::Ptr, A::I32, A::I32}},
      // ctx, site, rows, cols, x, gamma, mean, var, eps, dy, dx, dgamma,
      // dbeta, accumulate_dx, accumulate_params
      {RuntimeFn::LayerNormBwd,
       "txrt_layer_norm_bwd",
       "txrt_cuda_layer_norm_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::F32,
        A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::I32, A::I32}},
      // ctx, site, rows, cols, x, r, sum, gamma, mean, var, eps, dy, dsum,
      // dx, dgamma, dbeta, accumulate_dx, accumulate_params
      {RuntimeFn::AddLayerNormBwd,
       "txrt_add_layer_norm_bwd",
       "txrt_cuda_add_layer_norm_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::Ptr,
        A::Ptr, A::F32, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::I32}},
      // ctx, site, rows, cols, x, r, gamma, eps, dy, dsum, dx, dgamma,
      // accumulate_dx, accumulate_params
      {RuntimeFn::RmsNormBwd,
       "txrt_rms_norm_bwd",
       "txrt_cuda_rms_norm_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::F32, A::Ptr,
        A::Ptr, A::Ptr, A::Ptr, A::I32, A::I32}},
      // ctx, site, rows, cols, y, dy, dx, log_softmax
      {RuntimeFn::SoftmaxBwd,
       "txrt_softmax_bwd",
       "txrt_cuda_softmax_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::I32}},
      // ctx, site, activation, n, x, dy, dx
      {RuntimeFn::ActivationBwd,
       "txrt_activation_bwd",
       "txrt_cuda_activation_bwd",
       {A::Ptr, A::I64, A::I32, A::I64, A::Ptr, A::Ptr, A::Ptr}},
      // ctx, site, n, vocab, dim, ids, dout, scale, padding_idx, dtable,
      // accumulate
      {RuntimeFn::EmbeddingBwd,
       "txrt_embedding_bwd",
       "txrt_cuda_embedding_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::F32, A::I32,
        A::Ptr, A::I32}},
      // ctx, site, outer, n, inner, ids, count, dout, dsrc
      {RuntimeFn::GatherBwd,
       "txrt_gather_bwd",
       "txrt_cuda_gather_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::Ptr, A::I64, A::Ptr,
        A::Ptr}},
      // ctx, site, n, classes, logits, targets, lse, ignore_index,
      // label_smoothing, reduction, dloss, dlogits
      {RuntimeFn::CrossEntropyBwd,
       "txrt_cross_entropy_bwd",
       "txrt_cuda_cross_entropy_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::I32, A::F32,
        A::I32, A::Ptr, A::Ptr}},
      // ctx, fwd_site, n, p, seed, step, dy, dx
      {RuntimeFn::DropoutBwd,
       "txrt_dropout_bwd",
       "txrt_cuda_dropout_bwd",
       {A::Ptr, A::I64, A::I64, A::F32, A::I64, A::I64, A::Ptr, A::Ptr}},
      // ctx, site, fwd_site, batch, heads, kv_heads, tq, tk, head_dim, q,
      // ldq, k, ldk, v, ldv, o, ldo, lse, d_o, lddo, dq, lddq, dk, lddk, dv,
      // lddv, mask, mask strides, causal, scale, fill, dropout_p, seed, step
      {RuntimeFn::AttentionBwd,
       "txrt_attention_bwd",
       "txrt_cuda_attention_bwd",
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64,
        A::I64, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr,
        A::I64, A::Ptr, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64,
        A::Ptr, A::I64, A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I32,
        A::F32, A::F32, A::F32, A::I64, A::I64}},
      // as txrt_attention_fwd / _bwd (f32 buffers; bf16 block products)
      {RuntimeFn::AttentionFwdBf16,
       "txrt_attention_fwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64,
        A::I64, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64,
        A::Ptr, A::I64, A::Ptr, A::Ptr, A::I64, A::I64, A::I64,
        A::I64, A::I32, A::F32, A::F32, A::F32, A::I64, A::I64}},
      {RuntimeFn::AttentionBwdBf16,
       "txrt_attention_bwd_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64, A::I64,
        A::I64, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr,
        A::I64, A::Ptr, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64,
        A::Ptr, A::I64, A::Ptr, A::I64, A::I64, A::I64, A::I64, A::I32,
        A::F32, A::F32, A::F32, A::I64, A::I64}},
      // ctx, site, n, param, grad, m, v, grad_scale, schedule, lr, d_model,
      // warmup, beta1, beta2, eps, weight_decay
      {RuntimeFn::AdamStep,
       "txrt_adam_step",
       "txrt_cuda_adam_step",
       {A::Ptr, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::F32, A::F32, A::F32, A::F32, A::F32, A::F32, A::F32}},
      // as txrt_adam_step, then param_bf16
      {RuntimeFn::AdamStepBf16,
       "txrt_adam_step_bf16",
       nullptr,
       {A::Ptr, A::I64, A::I64, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::I32,
        A::F32, A::F32, A::F32, A::F32, A::F32, A::F32, A::F32, A::Ptr}},
      // ctx, site, n, x, accumulator
      {RuntimeFn::SumSquares,
       "txrt_sum_squares",
       "txrt_cuda_sum_squares",
       {A::Ptr, A::I64, A::I64, A::Ptr, A::Ptr}},
      // ctx, out_step, out_seed
      {RuntimeFn::TrainState,
       "txrt_train_state",
       "txrt_cuda_train_state",
       {A::Ptr, A::Ptr, A::Ptr}},
      // ctx, dims, dim_index, dim_bound, num_checked, arena, arena_bytes,
      // inputs, num_inputs, outputs, num_outputs, params, params_bytes
      {RuntimeFn::CheckEntry,
       "txrt_check_entry",
       "txrt_cuda_check_entry",
       {A::Ptr, A::Ptr, A::Ptr, A::Ptr, A::I64, A::Ptr, A::I64, A::Ptr, A::I64,
        A::Ptr, A::I64, A::Ptr, A::I64}},
      // ctx, arena
      {RuntimeFn::EntryDone,
       "txrt_entry_done",
       "txrt_cuda_entry_done",
       {A::Ptr, A::Ptr}},
      // ctx, input, written, held
      {RuntimeFn::CheckCacheRows,
       "txrt_check_cache_rows",
       "txrt_cuda_check_cache_rows",
       {A::Ptr, A::I64, A::I64, A::I64}},
      {RuntimeFn::CheckDimMin,
       "txrt_check_dim_min",
       "txrt_cuda_check_dim_min",
       {A::Ptr, A::I64, A::I64, A::I64}},
  };
  return entries;
}

const Entry &lookup(RuntimeFn fn) {
  for (const Entry &entry : registry())
    if (entry.fn == fn)
      return entry;
  llvm_unreachable("runtime function missing from the registry");
}

} // namespace

StringRef mlir::tx::getRuntimeSymbol(RuntimeFn fn) { return lookup(fn).symbol; }

const char *mlir::tx::getRuntimeSymbol(RuntimeFn fn, RuntimeTarget target) {
  const Entry &entry = lookup(fn);
  return target == RuntimeTarget::Cuda ? entry.cudaSymbol : entry.symbol;
}

LogicalResult mlir::tx::retargetRuntimeCalls(ModuleOp module,
                                             RuntimeTarget target) {
  if (target == RuntimeTarget::Cpu)
    return success();
  for (const Entry &entry : registry()) {
    auto declaration = module.lookupSymbol<func::FuncOp>(entry.symbol);
    if (!declaration)
      continue;
    if (!entry.cudaSymbol)
      return declaration.emitError("runtime function ")
             << entry.symbol << " has no CUDA counterpart in txrt_cuda.h";
    auto name = StringAttr::get(module.getContext(), entry.cudaSymbol);
    if (failed(SymbolTable::replaceAllSymbolUses(declaration, name, module)))
      return failure();
    declaration.setSymName(entry.cudaSymbol);
  }
  return success();
}

func::FuncOp mlir::tx::getOrDeclareRuntimeFn(ModuleOp module, RuntimeFn fn) {
  const Entry &entry = lookup(fn);
  if (auto existing = module.lookupSymbol<func::FuncOp>(entry.symbol))
    return existing;
  MLIRContext *context = module.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> args;
  for (A kind : entry.args) {
    switch (kind) {
    case A::Ptr:
      args.push_back(LLVM::LLVMPointerType::get(context));
      break;
    case A::I64:
      args.push_back(builder.getI64Type());
      break;
    case A::I32:
      args.push_back(builder.getI32Type());
      break;
    case A::F32:
      args.push_back(builder.getF32Type());
      break;
    }
  }
  auto func = builder.create<func::FuncOp>(
      module.getLoc(), entry.symbol,
      builder.getFunctionType(args, {builder.getI32Type()}));
  func.setPrivate();
  return func;
}
