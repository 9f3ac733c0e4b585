//===- LayerNorm.cpp - layer normalisation on oneDNN, fwd and bwd ---------===//
//
// oneDNN layer_normalization over the last dimension of [rows, cols], with
// scale (gamma) and shift (beta) as separate arguments. The forward saves
// mean and variance; the backward reads them. Accumulating gradients go
// through a temporary and an add (oneDNN overwrites its outputs).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "RowStats.h"
#include "Primitive.h"

using namespace txrt;
using dnnl::normalization_flags;
using dnnl::prop_kind;

namespace {

normalization_flags layerNormFlags(bool scale, bool shift) {
  normalization_flags flags = normalization_flags::none;
  if (scale)
    flags = flags | normalization_flags::use_scale;
  if (shift)
    flags = flags | normalization_flags::use_shift;
  return flags;
}

dnnl::layer_normalization_forward::primitive_desc
layerNormForwardDesc(Context &ctx, int64_t rows, int64_t cols, float eps,
                     normalization_flags flags, bool training,
                     const dnnl::primitive_attr &attr) {
  dnnl::layer_normalization_forward::desc desc(
      training ? prop_kind::forward_training : prop_kind::forward_inference,
      denseDesc({rows, cols}), denseDesc({rows}), eps, flags);
  return {desc, attr, ctx.engine()};
}

/// dst[i] += src[i] (parallel for large n).
void addInto(Context &ctx, float *dst, const float *src, int64_t n) {
#pragma omp parallel for simd num_threads(ctx.numThreads()) if (n > 65536)
  for (int64_t i = 0; i < n; ++i)
    dst[i] += src[i];
}

} // namespace

extern "C" {

txrt_status txrt_layer_norm_fwd(txrt_context *ctx, int64_t site, int64_t rows,
                                int64_t cols, const float *x,
                                const float *gamma, const float *beta,
                                float eps, float *y, float *mean, float *var) {
  return runKernel(
      ctx, site, "txrt_layer_norm_fwd",
      [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(x && y, "x and y must not be NULL");
        require((mean == nullptr) == (var == nullptr),
                "mean and var must both be given (training) or both be NULL");
        bool training = mean != nullptr;
        CacheKey key(site, int32_t(Kernel::LayerNormFwd));
        key << rows << cols << gamma << beta << int64_t(training) << eps;
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          auto pd = layerNormForwardDesc(c, rows, cols, eps,
                                         layerNormFlags(gamma, beta), training,
                                         userScratchpadAttr());
          std::vector<int> args = {DNNL_ARG_SRC, DNNL_ARG_DST};
          if (gamma)
            args.push_back(DNNL_ARG_SCALE);
          if (beta)
            args.push_back(DNNL_ARG_SHIFT);
          if (training) {
            args.push_back(DNNL_ARG_MEAN);
            args.push_back(DNNL_ARG_VARIANCE);
          }
          return Primitive(c, pd, args);
        });
        std::vector<const void *> pointers = {x, y};
        if (gamma)
          pointers.push_back(gamma);
        if (beta)
          pointers.push_back(beta);
        if (training) {
          pointers.push_back(mean);
          pointers.push_back(var);
        }
        primitive.execute(c, pointers);
      });
}

txrt_status txrt_layer_norm_bwd(txrt_context *ctx, int64_t site, int64_t rows,
                                int64_t cols, const float *x,
                                const float *gamma, const float *mean,
                                const float *var, float eps, const float *dy,
                                float *dx, float *dgamma, float *dbeta,
                                int32_t accumulate_dx,
                                int32_t accumulate_params) {
  return runKernel(
      ctx, site, "txrt_layer_norm_bwd",
      [&] { return shapes("rows", rows, "cols", cols); },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(x && dy && dx, "x, dy and dx must not be NULL");
        require((mean == nullptr) == (var == nullptr),
                "mean and var must both be given or both be NULL");
        if (!mean) { // recompute the forward's statistics
          float *stats = c.statsWork.as<float>(2 * rows);
          rowMeanVar(c, rows, cols, x, stats, stats + rows);
          mean = stats;
          var = stats + rows;
        }
        require(!dgamma || gamma, "dgamma needs gamma");
        bool scale = gamma != nullptr;
        bool wantScale = dgamma != nullptr;
        bool wantShift = dbeta != nullptr;
        // With a scale, oneDNN's backward_data still expects diff_scale at
        // execution, so the full backward runs (into a temporary if unwanted).
        bool params = scale || wantShift;
        CacheKey key(site, int32_t(Kernel::LayerNormBwd));
        key << rows << cols << int64_t(scale) << int64_t(wantScale)
            << int64_t(wantShift) << eps;
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          normalization_flags flags = layerNormFlags(scale, wantShift);
          auto hint = layerNormForwardDesc(c, rows, cols, eps, flags, true,
                                           dnnl::primitive_attr());
          dnnl::layer_normalization_backward::desc desc(
              params ? prop_kind::backward : prop_kind::backward_data,
              denseDesc({rows, cols}), denseDesc({rows, cols}),
              denseDesc({rows}), eps, flags);
          dnnl::layer_normalization_backward::primitive_desc pd(
              desc, userScratchpadAttr(), c.engine(), hint);
          std::vector<int> args = {DNNL_ARG_SRC, DNNL_ARG_MEAN,
                                   DNNL_ARG_VARIANCE, DNNL_ARG_DIFF_DST,
                                   DNNL_ARG_DIFF_SRC};
          if (scale)
            args.push_back(DNNL_ARG_SCALE);
          // oneDNN wants the shift as an input whenever use_shift is set,
          // though the gradients do not depend on it.
          if (wantShift)
            args.push_back(DNNL_ARG_SHIFT);
          if (params && scale)
            args.push_back(DNNL_ARG_DIFF_SCALE);
          if (params && wantShift)
            args.push_back(DNNL_ARG_DIFF_SHIFT);
          return Primitive(c, pd, args);
        });
        float *dxOut = accumulate_dx ? c.temp(0).as<float>(rows * cols) : dx;
        float *dgammaOut = dgamma;
        float *dbetaOut = dbeta;
        if (params && scale && (!dgamma || accumulate_params))
          dgammaOut = c.temp(1).as<float>(cols);
        if (wantShift && accumulate_params)
          dbetaOut = c.temp(2).as<float>(cols);
        std::vector<const void *> pointers = {x, mean, var, dy, dxOut};
        if (scale)
          pointers.push_back(gamma);
        if (wantShift)
          pointers.push_back(c.temp(3).as<float>(cols));
        if (params && scale)
          pointers.push_back(dgammaOut);
        if (params && wantShift)
          pointers.push_back(dbetaOut);
        primitive.execute(c, pointers);
        if (accumulate_dx)
          addInto(c, dx, dxOut, rows * cols);
        if (dgamma && dgammaOut != dgamma)
          addInto(c, dgamma, dgammaOut, cols);
        if (dbeta && dbetaOut != dbeta)
          addInto(c, dbeta, dbetaOut, cols);
      });
}

} // extern "C"
