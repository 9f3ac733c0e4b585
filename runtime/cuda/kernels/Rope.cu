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
             int64_t headDim, const float *x, float *y, int64_t posOffset,
             float base, const float *angles, int32_t inverse) {
  require(outer >= 0 && seq >= 0 && heads >= 0 && headDim >= 0,
          "sizes must be non-negative");
  require(headDim % 2 == 0, "head_dim must be even");
  require(headDim / 2 <= kMaxPairs, "head_dim over 512");
  const int64_t total = outer * seq * heads * (headDim / 2);
  if (total == 0)
    return;
  require(x && y, "x and y must not be NULL");
  InverseFrequencies inv = {};
  if (!angles) {
    require(base > 0.0f, "base must be positive");
    inv = inverseFrequencies(base, headDim);
  }
  const KernelLaunch pairs = pairLaunch(total);
  ropeKernel<<<pairs.blocks, pairs.threads, 0, c.stream>>>(
      outer, seq, heads, headDim, x, y, posOffset, inv, angles, inverse != 0);
  checkLaunch("ropeKernel");
}

} // namespace

extern "C" {

txrt_status txrt_cuda_rope(txrt_cuda_context *ctx, int64_t site, int64_t outer,
                           int64_t seq, int64_t heads, int64_t head_dim,
                           const float *x, float *y, int64_t pos_offset,
                           float base, int32_t inverse) {
  return runCuda(ctx, "txrt_cuda_rope", [&](txrt_cuda_context &c) {
    runRope(c, outer, seq, heads, head_dim, x, y, pos_offset, base, nullptr,
            inverse);
  });
}

txrt_status txrt_cuda_rope_angles(txrt_cuda_context *ctx, int64_t site,
                                  int64_t outer, int64_t seq, int64_t heads,
                                  int64_t head_dim, const float *x, float *y,
                                  const float *angles, int32_t inverse) {
  return runCuda(ctx, "txrt_cuda_rope_angles", [&](txrt_cuda_context &c) {
    require(outer * seq * heads * head_dim == 0 || angles,
            "angles must not be NULL");
    runRope(c, outer, seq, heads, head_dim, x, y, 0, 1.0f, angles, inverse);
  });
}

} // extern "C"
