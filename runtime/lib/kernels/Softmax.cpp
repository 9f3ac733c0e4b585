//===- Softmax.cpp - softmax and log-softmax on oneDNN, fwd and bwd -------===//
//
// oneDNN softmax_v2 (softmax_accurate / softmax_log) over the last
// dimension of [rows, cols]; the backward reads the forward's output.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Primitive.h"

using namespace txrt;

namespace {

dnnl::algorithm softmaxAlgorithm(int32_t logSoftmax) {
  return logSoftmax ? dnnl::algorithm::softmax_log
                    : dnnl::algorithm::softmax_accurate;
}

dnnl::softmax_v2_forward::primitive_desc
softmaxForwardDesc(Context &ctx, int64_t rows, int64_t cols, int32_t log,
                   const dnnl::primitive_attr &attr) {
  memory::desc data = denseDesc({rows, cols});
  dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_training,
                                      softmaxAlgorithm(log), data, data, 1);
  return {desc, attr, ctx.engine()};
}

} // namespace

extern "C" {

txrt_status txrt_softmax_fwd(txrt_context *ctx, int64_t site, int64_t rows,
                             int64_t cols, const float *x, float *y,
                             int32_t log_softmax) {
  return runKernel(
      ctx, site, "txrt_softmax_fwd",
      [&] {
        return shapes("rows", rows, "cols", cols, "log_softmax", log_softmax);
      },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(x && y, "x and y must not be NULL");
        CacheKey key(site, int32_t(Kernel::SoftmaxFwd));
        key << rows << cols << int64_t(log_softmax != 0);
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          return Primitive(c,
                           softmaxForwardDesc(c, rows, cols, log_softmax,
                                              userScratchpadAttr()),
                           {DNNL_ARG_SRC, DNNL_ARG_DST});
        });
        primitive.execute(c, {x, y});
      });
}

txrt_status txrt_softmax_bwd(txrt_context *ctx, int64_t site, int64_t rows,
                             int64_t cols, const float *y, const float *dy,
                             float *dx, int32_t log_softmax) {
  return runKernel(
      ctx, site, "txrt_softmax_bwd",
      [&] {
        return shapes("rows", rows, "cols", cols, "log_softmax", log_softmax);
      },
      [&](Context &c) {
        require(rows >= 0 && cols >= 0, "sizes must be non-negative");
        if (rows == 0 || cols == 0)
          return;
        require(y && dy && dx, "y, dy and dx must not be NULL");
        CacheKey key(site, int32_t(Kernel::SoftmaxBwd));
        key << rows << cols << int64_t(log_softmax != 0);
        Primitive &primitive = cachedPrimitive(c, key, [&] {
          auto hint = softmaxForwardDesc(c, rows, cols, log_softmax,
                                         dnnl::primitive_attr());
          memory::desc data = denseDesc({rows, cols});
          dnnl::softmax_v2_backward::desc desc(softmaxAlgorithm(log_softmax),
                                               data, data, data, 1);
          dnnl::softmax_v2_backward::primitive_desc pd(
              desc, userScratchpadAttr(), c.engine(), hint);
          return Primitive(
              c, pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
        });
        primitive.execute(c, {y, dy, dx});
      });
}

} // extern "C"
