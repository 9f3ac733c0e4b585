//===- LayerNorm.cpp - layer normalisation, fwd (oneDNN) and bwd ----------===//
//
// oneDNN layer_normalization over the last dimension of [rows, cols], with
// scale (gamma) and shift (beta) as separate arguments. The forward saves
// mean and variance. The backward is txrt's own, the fused add + layer
// norm's (LayerNormBackward.h) with s = x, reading the forward's
// statistics or recomputing them in double.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "LayerNormBackward.h"
#include "Primitive.h"
#include "RowStats.h"

#include <algorithm>

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
        if (cols == 0)
          return;
        if (rows == 0)
          return layerNormBackwardOverNoRows(cols, dgamma, dbeta,
                                             accumulate_params != 0);
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
        // The fused add + layer norm's backward with s = x: its parameter
        // gradients sum rows in float blocks added in double, where
        // oneDNN's summed each column in one float per thread.
        const float *scale = gamma;
        if (!scale) {
          float *ones = c.temp(0).as<float>(cols);
          std::fill(ones, ones + cols, 1.0f);
          scale = ones;
        }
        addLayerNormBackward(c, rows, cols, nullptr, nullptr, x, scale, mean,
                             var, eps, dy, nullptr, dx, dgamma, dbeta,
                             accumulate_dx != 0, accumulate_params != 0);
      });
}

} // extern "C"
