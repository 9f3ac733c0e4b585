//===- Eltwise.cpp - activations on oneDNN eltwise, fwd and bwd -----------===//
//
// relu, gelu (erf), gelu (tanh) and silu forward and backward over flat
// buffers; relu forward and backward are loops (torch's NaN and -0).
// The backward takes the forward's input. TXRT_ACTIVATION_NONE copies; the
// relu backward is a select (an infinite gradient where x <= 0 gives 0).
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "MatmulPrimitive.h"

#include <cstring>

using namespace txrt;

namespace {

dnnl::eltwise_forward::primitive_desc
eltwiseForwardDesc(Context &ctx, int32_t activation, int64_t n,
                   const dnnl::primitive_attr &attr) {
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training,
                                   eltwiseAlgorithm(activation), denseDesc({n}),
                                   eltwiseAlpha(activation), 0.0f);
  return {desc, attr, ctx.engine()};
}

void copyFloats(float *dst, const float *src, int64_t n) {
  if (dst != src)
    std::memmove(dst, src, size_t(n) * sizeof(float));
}

} // namespace

extern "C" {

txrt_status txrt_activation_fwd(txrt_context *ctx, int64_t site,
                                int32_t activation, int64_t n, const float *x,
                                float *y) {
  return runKernel(
      ctx, site, "txrt_activation_fwd",
      [&] { return shapes("activation", activation, "n", n); },
      [&](Context &c) {
        requireActivation(activation);
        require(n >= 0, "n must be non-negative");
        if (n == 0)
          return;
        require(x && y, "x and y must not be NULL");
        if (activation == TXRT_ACTIVATION_NONE)
          return copyFloats(y, x, n);
        if (activation == TXRT_ACTIVATION_RELU) {
      // torch.relu: NaN and -0 stay (oneDNN's max(x, 0) gives 0 and +0).
#pragma omp parallel for simd num_threads(c.numThreads()) if (n > 32768)
          for (int64_t i = 0; i < n; ++i)
            y[i] = x[i] < 0.0f ? 0.0f : x[i];
          return;
        }
        CacheKey key(site, int32_t(Kernel::EltwiseFwd));
        key << int64_t(activation) << n;
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          return Primitive(
              c, eltwiseForwardDesc(c, activation, n, userScratchpadAttr()),
              {DNNL_ARG_SRC, DNNL_ARG_DST});
        });
        primitive.execute(c, {x, y});
      });
}

txrt_status txrt_activation_bwd(txrt_context *ctx, int64_t site,
                                int32_t activation, int64_t n, const float *x,
                                const float *dy, float *dx) {
  return runKernel(
      ctx, site, "txrt_activation_bwd",
      [&] { return shapes("activation", activation, "n", n); },
      [&](Context &c) {
        requireActivation(activation);
        require(n >= 0, "n must be non-negative");
        if (n == 0)
          return;
        require(x && dy && dx, "x, dy and dx must not be NULL");
        if (activation == TXRT_ACTIVATION_NONE)
          return copyFloats(dx, dy, n);
        if (activation == TXRT_ACTIVATION_RELU) {
      // A select, as PyTorch's threshold_backward: oneDNN multiplies dy
      // by 0 where x <= 0, which gives NaN for an infinite dy (the
      // gradient of sqrt(relu(x)) at 0); and x NaN passes dy on.
#pragma omp parallel for simd num_threads(c.numThreads()) if (n > 32768)
          for (int64_t i = 0; i < n; ++i)
            dx[i] = x[i] <= 0.0f ? 0.0f : dy[i];
          return;
        }
        CacheKey key(site, int32_t(Kernel::EltwiseBwd));
        key << int64_t(activation) << n;
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          auto hint =
              eltwiseForwardDesc(c, activation, n, dnnl::primitive_attr());
          dnnl::eltwise_backward::desc desc(eltwiseAlgorithm(activation),
                                            denseDesc({n}), denseDesc({n}),
                                            eltwiseAlpha(activation), 0.0f);
          dnnl::eltwise_backward::primitive_desc pd(desc, userScratchpadAttr(),
                                                    c.engine(), hint);
          return Primitive(
              c, pd, {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
        });
        primitive.execute(c, {x, dy, dx});
      });
}

} // extern "C"
