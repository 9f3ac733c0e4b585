//===- Rope.cpp - rotary position embedding -------------------------------===//
//
// y = rope(x) on x [outer, seq, heads * d]: each head's first and second
// halves rotate as a complex pair by theta(p, i) = p * inv_freq[i], with the
// position p = pos_offset + t. The angles are computed as Hugging Face's
// Llama computes them in float32 (inv_freq = 1 / base^(2i / d) and
// p * inv_freq rounded to float), cos and sin of that float angle in double
// rounded once, into a [seq, d/2] table per call; the rotation is then two
// FMAs per element, vectorized over i.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <cmath>
#include <vector>

using namespace txrt;

namespace {

/// Rotates x into y by the angles `angle(t, i)` (a float per position t and
/// pair i < d/2): cos and sin in double, rounded once, into a table.
template <typename Angle>
void ropeForward(Context &ctx, int64_t outer, int64_t seq, int64_t heads,
                 int64_t d, const float *x, float *y, bool inverse,
                 Angle angle) {
  const int64_t half = d / 2, width = heads * d;
  // The table: cos then sin, [seq x half] each.
  float *table = ctx.statsWork.as<float>(2 * size_t(seq) * size_t(half));
  float *cosTable = table, *sinTable = table + seq * half;
  const double sign = inverse ? -1.0 : 1.0;
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const float a = angle(t, i);
      cosTable[t * half + i] = float(std::cos(double(a)));
      sinTable[t * half + i] = float(sign * std::sin(double(a)));
    }
#pragma omp parallel for collapse(2) num_threads(ctx.numThreads()) \
    schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = 0; t < seq; ++t) {
      const float *c = cosTable + t * half, *s = sinTable + t * half;
      for (int64_t h = 0; h < heads; ++h) {
        const float *in = x + (o * seq + t) * width + h * d;
        float *out = y + (o * seq + t) * width + h * d;
#pragma omp simd
        for (int64_t i = 0; i < half; ++i) {
          const float first = in[i], second = in[i + half];
          out[i] = first * c[i] - second * s[i];
          out[i + half] = second * c[i] + first * s[i];
        }
      }
    }
}

} // namespace

extern "C" {

txrt_status txrt_rope(txrt_context *ctx, int64_t site, int64_t outer,
                      int64_t seq, int64_t heads, int64_t head_dim,
                      const float *x, float *y, int64_t pos_offset, float base,
                      int32_t inverse) {
  return runKernel(
      ctx, site, "txrt_rope",
      [&] {
        return shapes("outer", outer, "seq", seq, "heads", heads, "head_dim",
                      head_dim, "pos_offset", pos_offset);
      },
      [&](Context &c) {
        require(outer >= 0 && seq >= 0 && heads >= 0 && head_dim >= 0,
                "sizes must be non-negative");
        require(head_dim % 2 == 0, "head_dim must be even");
        require(pos_offset >= 0, "pos_offset must be non-negative");
        require(base > 1.0f && std::isfinite(base),
                "base must be a finite number > 1");
        if (outer == 0 || seq == 0 || heads == 0 || head_dim == 0)
          return;
        require(x && y, "x and y must not be NULL");
        const int64_t half = head_dim / 2;
        std::vector<float> invFreq(static_cast<size_t>(half));
        for (int64_t i = 0; i < half; ++i)
          invFreq[i] = 1.0f / std::pow(base, float(2 * i) / float(head_dim));
        ropeForward(c, outer, seq, heads, head_dim, x, y, inverse != 0,
                    [&](int64_t t, int64_t i) {
                      return float(pos_offset + t) * invFreq[i];
                    });
      });
}

txrt_status txrt_rope_angles(txrt_context *ctx, int64_t site,
                             int64_t outer, int64_t seq, int64_t heads,
                             int64_t head_dim, const float *x, float *y,
                             const float *angles, int32_t inverse) {
  return runKernel(
      ctx, site, "txrt_rope_angles",
      [&] {
        return shapes("outer", outer, "seq", seq, "heads", heads, "head_dim",
                      head_dim);
      },
      [&](Context &c) {
        require(outer >= 0 && seq >= 0 && heads >= 0 && head_dim >= 0,
                "sizes must be non-negative");
        require(head_dim % 2 == 0, "head_dim must be even");
        if (outer == 0 || seq == 0 || heads == 0 || head_dim == 0)
          return;
        require(x && y && angles, "x, y and angles must not be NULL");
        const int64_t half = head_dim / 2;
        ropeForward(c, outer, seq, heads, head_dim, x, y, inverse != 0,
                    [&](int64_t t, int64_t i) { return angles[t * half + i]; });
      });
}

} // extern "C"
