//===- Attention.cu - scaled dot-product attention, forward and backward --===//
//
// The function of txrt_attention_{fwd,bwd} (txrt.h) computed exactly: masks
// by pointer and strides or causal, a -inf fill dropping masked keys (a row
// with none gives O = 0, lse = -inf) or a finite fill counted in the
// softmax, grouped-query heads, dropout on P from the CPU's Philox stream at
// counter ((b*heads + h)*tq + i)*tk + j. Three forms, launched here:
// where head_dim <= 128 the tensor-core kernels (AttentionTensorCoreKernels
// .cuh: flash-attention style, online softmax, no atomics, products in
// 3xTF32, or 1xTF32 where the context allows TF32), or with
// TXRT_CUDA_ATTENTION=simt the same tiling on CUDA cores
// (AttentionKernels.cuh, the first tiled kernels); the per-row kernels (a
// block per query row with the row's scores in shared memory, tk <= 8192;
// dk and dv by atomicAdd) for wider heads and as the reference
// (TXRT_CUDA_ATTENTION=rows). Backward recomputes P from the saved lse in
// all three, each row's divided by its sum where |lse| >= 16 (the lse's
// rounding would otherwise put a common factor on the row's P and dV).
//
//===----------------------------------------------------------------------===//
#include "AttentionTensorCoreKernels.cuh"
#include "CudaContext.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace txrt::cuda;
using namespace txrt::cuda::attention;

namespace {

/// Whether CUDA can launch this grid (x < 2^31, y < 2^16).
bool fits(const Launch &launch) {
  return launch.gridX <= 0x7FFFFFFF && launch.gridY <= 65535;
}

dim3 gridOf(const Launch &launch) {
  return dim3(unsigned(launch.gridX), unsigned(launch.gridY));
}

/// Lets `kernel` use `bytes` of dynamic shared memory (over the default
/// 48 KiB needs the opt-in); false when the device has less.
template <typename Kernel>
bool allowShared(const txrt_cuda_context &c, Kernel kernel, size_t bytes) {
  int optIn = 0;
  check(cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               c.device),
        "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  if (bytes > size_t(optIn))
    return false;
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(
              kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  return true;
}

/// The kernels that run (a form whose launch does not fit the device falls
/// back to the next): TXRT_CUDA_ATTENTION unset or `tensor-cores`, the
/// tensor-core kernels; `simt`, the tiled CUDA-core kernels; `rows`, the
/// per-row reference kernels, which head dimensions over 128 always use.
enum class Form { TensorCores, Simt, Rows };

Form formFor(int64_t headDim) {
  const char *choice = std::getenv("TXRT_CUDA_ATTENTION");
  const std::string name = choice ? choice : "";
  if (!name.empty() && name != "tensor-cores" && name != "simt" &&
      name != "rows")
    throw CudaError(TXRT_ERROR_INVALID_ARGUMENT,
                    "invalid argument: TXRT_CUDA_ATTENTION must be "
                    "tensor-cores, simt or rows, not '" +
                        name + "'");
  if (name == "rows" || headDim > kMaxTiledHeadDim)
    return Form::Rows;
  return name == "simt" ? Form::Simt : Form::TensorCores;
}

/// Whether Pick's instance for headDim can have `launch`'s grid and shared
/// memory on this device.
template <template <int> class Pick>
bool launchFits(const txrt_cuda_context &c, const Launch &launch,
                int64_t headDim) {
  bool fit = false;
  if (fits(launch))
    withDims<Pick>(headDim, [&](auto kernel) {
      fit = allowShared(c, kernel, launch.sharedBytes);
    });
  return fit;
}

/// Launches Pick's instance for headDim with `launch`'s geometry and
/// `args`; false (nothing launched) when the grid or its shared memory does
/// not fit this device.
template <template <int> class Pick, typename... Args>
bool launchTiled(const txrt_cuda_context &c, const Launch &launch,
                 int64_t headDim, const char *name, Args... args) {
  bool launched = false;
  withDims<Pick>(headDim, [&](auto kernel) {
    if (!fits(launch) || !allowShared(c, kernel, launch.sharedBytes))
      return;
    kernel<<<gridOf(launch), launch.threads, launch.sharedBytes, c.stream>>>(
        args...);
    checkLaunch(name);
    launched = true;
  });
  return launched;
}

/// launchTiled of the tensor-core kernels in the precision the context
/// asks for: Strict's 3xTF32, or Tf32's 1xTF32 where it allows TF32
/// (txrt_cuda_context_set_option, `--allow-tf32`, as for the GEMMs).
template <template <int> class Strict, template <int> class Tf32,
          typename... Args>
bool launchMma(const txrt_cuda_context &c, const Launch &launch,
               int64_t headDim, const char *name, Args... args) {
  return c.allowTf32 ? launchTiled<Tf32>(c, launch, headDim, name, args...)
                     : launchTiled<Strict>(c, launch, headDim, name, args...);
}

Attention describe(int64_t heads, int64_t kvHeads, int64_t tq, int64_t tk,
                   int64_t headDim, int64_t ldq, int64_t ldk, int64_t ldv,
                   const uint8_t *mask, int64_t msb, int64_t msh, int64_t msq,
                   int64_t msk, int32_t causal, float scale, float fill,
                   float dropoutP, uint64_t seed, int64_t step, int64_t site) {
  require(heads > 0 && kvHeads > 0 && heads % kvHeads == 0,
          "kv_heads must divide heads");
  require(tq >= 0 && tk >= 0 && headDim > 0,
          "tq and tk must be non-negative, head_dim positive");
  require(ldq >= heads * headDim, "ldq must be >= heads * head_dim");
  require(ldk >= kvHeads * headDim && ldv >= kvHeads * headDim,
          "ldk and ldv must be >= kv_heads * head_dim");
  require(dropoutP >= 0.0f && dropoutP < 1.0f, "dropout_p must be in [0, 1)");
  require(!std::isnan(fill) && fill != INFINITY, "fill must be finite or -inf");
  return makeAttention(heads, kvHeads, tq, tk, headDim, mask, msb, msh, msq,
                       msk, causal, scale, fill, dropoutP, seed, step, site);
}

} // namespace

extern "C" {

txrt_status txrt_cuda_attention_fwd(
    txrt_cuda_context *ctx, int64_t site, int64_t batch, int64_t heads,
    int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim, const float *q,
    int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv,
    float *o, int64_t ldo, float *lse, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return runCuda(ctx, "txrt_cuda_attention_fwd", [&](txrt_cuda_context &c) {
    require(batch >= 0, "batch must be non-negative");
    Attention a = describe(heads, kv_heads, tq, tk, head_dim, ldq, ldk, ldv,
                           mask, mask_stride_batch, mask_stride_head,
                           mask_stride_query, mask_stride_key, causal, scale,
                           fill, dropout_p, seed, step, site);
    a.offset = c.dropoutOffset(batch * heads * tq * tk);
    if (a.dropout)
      a.state = capturedTrainState(c, seed, step);
    require(ldo >= heads * head_dim, "ldo must be >= heads * head_dim");
    const int64_t rows = batch * heads * tq;
    if (rows == 0)
      return;
    require(q && o && (tk == 0 || (k && v)), "q, k, v and o must not be NULL");
    const Form form = formFor(head_dim);
    if (form == Form::TensorCores &&
        launchMma<Mma<3>::Forward, Mma<1>::Forward>(
            c, mmaForwardLaunch(batch, a), head_dim, "attentionForwardMma", a,
            q, ldq, k, ldk, v, ldv, o, ldo, lse))
      return;
    if (form != Form::Rows &&
        launchTiled<ForwardTiled>(c, tiledForwardLaunch(batch, a), head_dim,
                                  "attentionForwardTiled", a, q, ldq, k, ldk, v,
                                  ldv, o, ldo, lse))
      return;
    const Launch perRow = rowForwardLaunch(batch, a);
    require(fits(perRow), "more than 2^31 - 1 query rows");
    require(tk <= kMaxKeys, "more than 8192 keys with a head_dim over 128 "
                            "(the per-row kernel keeps a row's scores in "
                            "shared memory)");
    require(perRow.sharedBytes <= 48 * 1024,
            "head_dim + tk over 12288 floats of shared memory");
    attentionForward<<<gridOf(perRow), perRow.threads, perRow.sharedBytes,
                       c.stream>>>(a, q, ldq, k, ldk, v, ldv, o, ldo, lse);
    checkLaunch("attentionForward");
  });
}

txrt_status txrt_cuda_attention_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t fwd_site, int64_t batch,
    int64_t heads, int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim,
    const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
    int64_t ldv, const float *o, int64_t ldo, const float *lse,
    const float *d_o, int64_t lddo, float *dq, int64_t lddq, float *dk,
    int64_t lddk, float *dv, int64_t lddv, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return runCuda(ctx, "txrt_cuda_attention_bwd", [&](txrt_cuda_context &c) {
    require(batch >= 0, "batch must be non-negative");
    Attention a = describe(heads, kv_heads, tq, tk, head_dim, ldq, ldk, ldv,
                           mask, mask_stride_batch, mask_stride_head,
                           mask_stride_query, mask_stride_key, causal, scale,
                           fill, dropout_p, seed, step, fwd_site);
    a.offset = c.dropoutOffset(batch * heads * tq * tk);
    if (a.dropout)
      a.state = capturedTrainState(c, seed, step);
    require(ldo >= heads * head_dim && lddo >= heads * head_dim &&
                lddq >= heads * head_dim,
            "ldo, lddo and lddq must be >= heads * head_dim");
    require(lddk >= kv_heads * head_dim && lddv >= kv_heads * head_dim,
            "lddk and lddv must be >= kv_heads * head_dim");
    const int64_t width = kv_heads * head_dim;
    if (batch * tk > 0) {
      require(dk && dv, "dk and dv must not be NULL");
      check(cudaMemset2DAsync(dk, size_t(lddk) * sizeof(float), 0,
                              size_t(width) * sizeof(float), size_t(batch * tk),
                              c.stream),
            "cudaMemset2DAsync(dk)");
      check(cudaMemset2DAsync(dv, size_t(lddv) * sizeof(float), 0,
                              size_t(width) * sizeof(float), size_t(batch * tk),
                              c.stream),
            "cudaMemset2DAsync(dv)");
    }
    const int64_t rows = batch * heads * tq;
    if (rows == 0)
      return;
    require(q && o && lse && d_o && dq && (tk == 0 || (k && v)),
            "q, k, v, o, lse, d_o and dq must not be NULL");
    const Form form = formFor(head_dim);
    const Launch mmaKeys = mmaKeysLaunch(batch, a),
                 mmaQuery = mmaQueryLaunch(batch, a);
    const Launch mmaScales = mmaRowScalesLaunch(batch, a);
    const bool tensorCores = form == Form::TensorCores &&
                             launchFits<KeysMma>(c, mmaKeys, head_dim) &&
                             launchFits<QueryMma>(c, mmaQuery, head_dim) &&
                             launchFits<RowScalesMma>(c, mmaScales, head_dim);
    // The per-row values first (attentionBackwardRows): D = dO . O for the
    // tensor-core kernels; with a finite fill, the exact probability of a
    // masked key in the rows where masked keys count (every key masked: lse
    // is not precise enough there); each row's factor on its recomputed P
    // (rowScale: 1 / rowsum(exp(S - lse)) where |lse| >= 16, else 1), for
    // the tensor-core kernels from attentionBackwardRowScalesMma, whose
    // products are theirs. In the workspace, or memory of their own past
    // its 32 MiB.
    const bool finiteFill = a.fill != -INFINITY && tk > 0;
    float *perRowValues = nullptr;
    bool ownPerRowValues = false;
    const size_t bytes = 3 * size_t(rows) * sizeof(float);
    if (bytes <= c.workspaceBytes) {
      perRowValues = static_cast<float *>(c.workspace);
    } else {
      check(cudaMallocAsync(reinterpret_cast<void **>(&perRowValues), bytes,
                            c.stream),
            "cudaMallocAsync(attention's per-row values)");
      ownPerRowValues = true;
    }
    struct FreePerRow {
      txrt_cuda_context &c;
      float *p;
      bool own;
      ~FreePerRow() {
        if (own)
          cudaFreeAsync(p, c.stream);
      }
    } freePerRowValues{c, perRowValues, ownPerRowValues};
    float *rowD = tensorCores ? perRowValues : nullptr;
    float *maskedP = finiteFill ? perRowValues + rows : nullptr;
    float *rowScale = perRowValues + 2 * rows;
    a.rowD = rowD;
    a.maskedP = maskedP;
    const KernelLaunch pre = backwardRowsLaunch(rows);
    attentionBackwardRows<<<pre.blocks, pre.threads, 0, c.stream>>>(
        a, q, ldq, k, ldk, o, ldo, d_o, lddo, lse, rowD, maskedP,
        tensorCores ? nullptr : rowScale, rows);
    checkLaunch("attentionBackwardRows");
    if (tensorCores)
      launchMma<Mma<3>::RowScales, Mma<1>::RowScales>(
          c, mmaScales, head_dim, "attentionBackwardRowScalesMma", a, q, ldq, k,
          ldk, lse, rowScale);
    a.rowScale = rowScale;
    if (tensorCores) {
      launchMma<Mma<3>::Query, Mma<1>::Query>(
          c, mmaQuery, head_dim, "attentionBackwardQueryMma", a, q, ldq, k, ldk,
          v, ldv, lse, d_o, lddo, dq, lddq);
      if (mmaKeys.gridY > 0)
        launchMma<Mma<3>::Keys, Mma<1>::Keys>(
            c, mmaKeys, head_dim, "attentionBackwardKeysMma", a, q, ldq, k, ldk,
            v, ldv, lse, d_o, lddo, dk, lddk, dv, lddv);
      return;
    }
    const Launch keys = tiledKeysLaunch(batch, a);
    if (form != Form::Rows && launchFits<KeysTiled>(c, keys, head_dim) &&
        launchTiled<QueryTiled>(c, tiledQueryLaunch(batch, a), head_dim,
                                "attentionBackwardQueryTiled", a, q, ldq, k,
                                ldk, v, ldv, o, ldo, lse, d_o, lddo, dq,
                                lddq)) {
      if (keys.gridY > 0)
        launchTiled<KeysTiled>(c, keys, head_dim, "attentionBackwardKeysTiled",
                               a, q, ldq, k, ldk, v, ldv, o, ldo, lse, d_o,
                               lddo, dk, lddk, dv, lddv);
      return;
    }
    const Launch perRow = rowBackwardLaunch(batch, a);
    require(fits(perRow), "more than 2^31 - 1 query rows");
    require(tk <= kMaxKeys, "more than 8192 keys with a head_dim over 128 "
                            "(the per-row kernel keeps a row's scores in "
                            "shared memory)");
    require(perRow.sharedBytes <= 48 * 1024,
            "2 * (head_dim + tk) over 12288 floats of shared memory");
    attentionBackward<<<gridOf(perRow), perRow.threads, perRow.sharedBytes,
                        c.stream>>>(a, q, ldq, k, ldk, v, ldv, o, ldo, lse, d_o,
                                    lddo, dq, lddq, dk, lddk, dv, lddv);
    checkLaunch("attentionBackward");
  });
}

} // extern "C"
