//===- Broadcast.cu - broadcasting binary ops, reductions, argmax ---------===//
//
// The host side of BroadcastKernels.cuh: the dims checked, then the
// launches.
//
//===----------------------------------------------------------------------===//
#include "BroadcastKernels.cuh"
#include "CudaContext.h"

using namespace txrt::cuda;
using namespace txrt::cuda::broadcast;

namespace {

Dims readDims(int32_t rank, const int64_t *a, const int64_t *b) {
  require(rank >= 1 && rank <= kMaxRank, "rank must be in 1..6");
  require(a && b, "dims must not be NULL");
  Dims d = {};
  d.rank = rank;
  for (int r = 0; r < rank; ++r) {
    require(a[r] >= 0 && b[r] >= 0, "dims must be non-negative");
    d.a[r] = a[r];
    d.b[r] = b[r];
  }
  return d;
}

} // namespace

extern "C" {

txrt_status txrt_cuda_binary(txrt_cuda_context *ctx, int64_t site, int32_t op,
                             int32_t rank, const int64_t *a_dims,
                             const float *a, const int64_t *b_dims,
                             const float *b, float *c) {
  return runCuda(ctx, "txrt_cuda_binary", [&](txrt_cuda_context &cx) {
    require(op >= TXRT_BINARY_ADD && op <= TXRT_BINARY_MIN, "unknown op");
    Dims d = readDims(rank, a_dims, b_dims);
    for (int r = 0; r < rank; ++r)
      require(d.a[r] == d.b[r] || d.a[r] == 1 || d.b[r] == 1,
              "dims are not broadcast-compatible");
    const int64_t total = broadcastShape(d);
    if (total == 0)
      return;
    require(a && b && c, "a, b and c must not be NULL");
    const KernelLaunch elements = elementLaunch(total);
    binaryKernel<<<elements.blocks, elements.threads, 0, cx.stream>>>(
        op, d, total, a, b, c);
    checkLaunch("binaryKernel");
  });
}

txrt_status txrt_cuda_reduce(txrt_cuda_context *ctx, int64_t site, int32_t op,
                             int32_t rank, const int64_t *x_dims,
                             const float *x, const int64_t *y_dims, float *y) {
  return runCuda(ctx, "txrt_cuda_reduce", [&](txrt_cuda_context &c) {
    require(op >= TXRT_REDUCE_SUM && op <= TXRT_REDUCE_MIN, "unknown op");
    Dims d = readDims(rank, x_dims, y_dims);
    for (int r = 0; r < rank; ++r)
      require(d.b[r] == d.a[r] || d.b[r] == 1,
              "y_dims[i] must be x_dims[i] or 1");
    const auto [total, reduced] = reduceCounts(d);
    if (total == 0)
      return;
    require(y, "y must not be NULL");
    require(reduced == 0 || x, "x must not be NULL");
    // Reducing an empty dimension gives the identity (-inf, inf, 0) and a
    // NaN mean (0 / 0), as the CPU kernel does.
    const KernelLaunch elements = elementLaunch(total);
    reduceKernel<<<elements.blocks, elements.threads, 0, c.stream>>>(
        op, d, total, reduced, x, y);
    checkLaunch("reduceKernel");
  });
}

txrt_status txrt_cuda_argmax(txrt_cuda_context *ctx, int64_t site, int64_t rows,
                             int64_t cols, const float *x, int32_t *out) {
  return runCuda(ctx, "txrt_cuda_argmax", [&](txrt_cuda_context &c) {
    require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
    require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
    if (rows == 0)
      return;
    require(cols > 0, "argmax of an empty row");
    require(x && out, "x and out must not be NULL");
    const KernelLaunch perRow = argmaxLaunch(rows);
    argmaxKernel<<<perRow.blocks, perRow.threads, 0, c.stream>>>(cols, x, out);
    checkLaunch("argmaxKernel");
  });
}

} // extern "C"
