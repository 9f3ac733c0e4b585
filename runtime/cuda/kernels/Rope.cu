//===- Rope.cu - rotary position embeddings --------------------------------===//
//
// The CPU kernel's rotation (runtime/lib/kernels/Rope.cpp): the angle of
// position t and pair i is a float (p * inv_freq[i], inv_freq computed on
// the host with the CPU's expression and passed by value, or the program's
// angle table), its cos and sin taken in double and rounded once; then
//   y[i] = x[i] cos - x[i + d/2] sin,  y[i + d/2] = x[i + d/2] cos + x[i] sin
// one thread per pair. inverse rotates by -theta (the backward).
//
//===----------------------------------------------------------------------===//
#include "CudaContext.h"

#include <cmath>

using namespace txrt::cuda;

namespace {

constexpr int kMaxPairs = 256; ///< head_dim <= 512

struct InverseFrequencies {
  float values[kMaxPairs];
};

__global__ void ropeKernel(int64_t outer, int64_t seq, int64_t heads,
                           int64_t headDim, const float *x, float *y,
                           int64_t posOffset, InverseFrequencies inv,
                           const float *angles, bool inverse) {
  const int64_t half = headDim / 2;
  const int64_t total = outer * seq * heads * half;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % half, h = e / half % heads,
                  t = e / half / heads % seq, o = e / half / heads / seq;
    const float angle = angles ? angles[t * half + i]
                               : float(posOffset + t) * inv.values[i];
    const float c = float(cos(double(angle)));
    const float s = float((inverse ? -1.0 : 1.0) * sin(double(angle)));
    const int64_t base = (o * seq + t) * heads * headDim + h * headDim;
    // y may alias x: both elements of the pair are read before either is
    // written, by this thread alone.
    const float first = x[base + i], second = x[base + i + half];
    y[base + i] = first * c - second * s;
    y[base + i + half] = second * c + first * s;
  }
}

void rope(txrt_cuda_context &c, int64_t outer, int64_t seq, int64_t heads,
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
    for (int64_t i = 0; i < headDim / 2; ++i)
      inv.values[i] =
          1.0f / std::pow(base, float(2 * i) / float(headDim)); // as the CPU
  }
  ropeKernel<<<gridFor(total, 256), 256, 0, c.stream>>>(
      outer, seq, heads, headDim, x, y, posOffset, inv, angles, inverse != 0);
  checkLaunch("ropeKernel");
}

} // namespace

extern "C" {

txrt_status txrt_cuda_rope(txrt_cuda_context *ctx, int64_t site,
                           int64_t outer, int64_t seq, int64_t heads,
                           int64_t head_dim, const float *x, float *y,
                           int64_t pos_offset, float base, int32_t inverse) {
  return runCuda(ctx, "txrt_cuda_rope", [&](txrt_cuda_context &c) {
    rope(c, outer, seq, heads, head_dim, x, y, pos_offset, base, nullptr,
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
    rope(c, outer, seq, heads, head_dim, x, y, 0, 1.0f, angles, inverse);
  });
}

} // extern "C"
