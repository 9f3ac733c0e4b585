//===- Rope.cu - rotary position embeddings -------------------------------===//
//
// The host side of RopeKernels.cuh: checks, the inverse frequencies (none
// with an angle table), and the launch.
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"
#include "RopeKernels.cuh"

using namespace txrt::cuda;
using namespace txrt::cuda::rope;

namespace {

void runRope(txrt_cuda_context &c, int64_t outer, int64_t seq, int64_t heads,
             int64_t headDim, int64_t rot, const float *x, float *y,
             int64_t posOffset, float base, const float *angles,
             int32_t inverse) {
  require(outer >= 0 && seq >= 0 && heads >= 0 && headDim >= 0,
          "sizes must be non-negative");
  if (rot == headDim)
    require(headDim % 2 == 0, "head_dim must be even");
  else
    require(rot > 0 && rot < headDim && rot % 2 == 0,
            "rotary_dim must be even, positive and at most head_dim");
  require(rot / 2 <= kMaxPairs, "rotary_dim over 512");
  const int64_t rows = outer * seq * heads;
  if (rows == 0 || headDim == 0)
    return;
  require(x && y, "x and y must not be NULL");
  InverseFrequencies inv = {};
  if (!angles) {
    require(base > 0.0f, "base must be positive");
    inv = inverseFrequencies(base, rot);
  }
  const KernelLaunch pairs =
      pairLaunch(rows * (rot / 2), x == y ? 0 : rows * (headDim - rot));
  ropeKernel<<<pairs.blocks, pairs.threads, 0, c.stream>>>(
      outer, seq, heads, headDim, rot, x, y, posOffset, inv, angles,
      inverse != 0);
  checkLaunch("ropeKernel");
}

} // namespace

extern "C" {

txrt_status txrt_cuda_rope(txrt_cuda_context *ctx, int64_t site, int64_t outer,
                           int64_t seq, int64_t heads, int64_t head_dim,
                           const float *x, float *y, int64_t pos_offset,
                           float base, int32_t inverse) {
  return runCuda(ctx, "txrt_cuda_rope", [&](txrt_cuda_context &c) {
    runRope(c, outer, seq, heads, head_dim, head_dim, x, y, pos_offset, base,
            nullptr, inverse);
  });
}

txrt_status txrt_cuda_rope_partial(txrt_cuda_context *ctx, int64_t site,
                                   int64_t outer, int64_t seq, int64_t heads,
                                   int64_t head_dim, int64_t rotary_dim,
                                   const float *x, float *y,
                                   int64_t pos_offset, float base,
                                   int32_t inverse) {
  return runCuda(ctx, "txrt_cuda_rope_partial", [&](txrt_cuda_context &c) {
    runRope(c, outer, seq, heads, head_dim, rotary_dim, x, y, pos_offset,
            base, nullptr, inverse);
  });
}

txrt_status txrt_cuda_rope_angles(txrt_cuda_context *ctx, int64_t site,
                                  int64_t outer, int64_t seq, int64_t heads,
                                  int64_t head_dim, const float *x, float *y,
                                  const float *angles, int32_t inverse) {
  return runCuda(ctx, "txrt_cuda_rope_angles", [&](txrt_cuda_context &c) {
    require(outer * seq * heads * head_dim == 0 || angles,
            "angles must not be NULL");
    runRope(c, outer, seq, heads, head_dim, head_dim, x, y, 0, 1.0f, angles,
            inverse);
  });
}

txrt_status txrt_cuda_rope_angles_partial(txrt_cuda_context *ctx,
                                          int64_t site, int64_t outer,
                                          int64_t seq, int64_t heads,
                                          int64_t head_dim, int64_t rotary_dim,
                                          const float *x, float *y,
                                          const float *angles,
                                          int32_t inverse) {
  return runCuda(
      ctx, "txrt_cuda_rope_angles_partial", [&](txrt_cuda_context &c) {
        require(outer * seq * heads * head_dim == 0 || angles,
                "angles must not be NULL");
        runRope(c, outer, seq, heads, head_dim, rotary_dim, x, y, 0, 1.0f,
                angles, inverse);
      });
}

} // extern "C"
