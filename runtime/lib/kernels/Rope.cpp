//===- Rope.cpp - rotary position embedding -------------------------------===//
//
// y = rope(x) on x [outer, seq, heads * d]: each head's first and second
// halves rotate as a complex pair by theta(p, i) = p * inv_freq[i], with the
// position p = pos_offset + t. The angles are computed as Hugging Face's
// Llama computes them in float32 (inv_freq = 1 / base^(2i / d) and
// p * inv_freq rounded to float), cos and sin of that float angle in double
// rounded once, into a [seq, d/2] table per call; the rotation is then two
// FMAs per element, vectorized over i. A partial rotation (rotary_dim r <
// d: GPT-NeoX's rotary_pct, Phi's partial rotary) rotates each head's first
// r features with r in place of d, and copies the other d - r.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace txrt;

namespace {

/// Rotates the first `rot` features of each head of x into y by the angles
/// `angle(t, i)` (a float per position t and pair i < rot/2), copying the
/// other d - rot: cos and sin in double, rounded once, into a table.
template <typename Angle>
void ropeForward(Context &ctx, int64_t outer, int64_t seq, int64_t heads,
                 int64_t d, int64_t rot, const float *x, float *y, bool inverse,
                 Angle angle) {
  const int64_t half = rot / 2, width = heads * d;
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
        if (out != in)
          std::copy(in + rot, in + d, out + rot);
      }
    }
}

/// Checks the sizes of a rope call; false when there is nothing to do.
bool ropeSizes(int64_t outer, int64_t seq, int64_t heads, int64_t headDim,
               int64_t rotaryDim) {
  require(outer >= 0 && seq >= 0 && heads >= 0 && headDim >= 0,
          "sizes must be non-negative");
  if (rotaryDim == headDim)
    require(headDim % 2 == 0, "head_dim must be even");
  else
    require(rotaryDim > 0 && rotaryDim < headDim && rotaryDim % 2 == 0,
            "rotary_dim must be even, positive and at most head_dim");
  return outer > 0 && seq > 0 && heads > 0 && headDim > 0;
}

/// txrt_rope and txrt_rope_partial, under the name `name`.
txrt_status ropeByPositions(const char *name, txrt_context *ctx, int64_t site,
                            int64_t outer, int64_t seq, int64_t heads,
                            int64_t headDim, int64_t rotaryDim, const float *x,
                            float *y, int64_t posOffset, float base,
                            int32_t inverse) {
  return runKernel(
      ctx, site, name,
      [&] {
        return shapes("outer", outer, "seq", seq, "heads", heads, "head_dim",
                      headDim, "rotary_dim", rotaryDim, "pos_offset",
                      posOffset);
      },
      [&](Context &c) {
        const bool work = ropeSizes(outer, seq, heads, headDim, rotaryDim);
        require(posOffset >= 0, "pos_offset must be non-negative");
        require(base > 1.0f && std::isfinite(base),
                "base must be a finite number > 1");
        if (!work)
          return;
        require(x && y, "x and y must not be NULL");
        const int64_t half = rotaryDim / 2;
        std::vector<float> invFreq(static_cast<size_t>(half));
        for (int64_t i = 0; i < half; ++i)
          invFreq[i] = 1.0f / std::pow(base, float(2 * i) / float(rotaryDim));
        ropeForward(c, outer, seq, heads, headDim, rotaryDim, x, y,
                    inverse != 0, [&](int64_t t, int64_t i) {
                      return float(posOffset + t) * invFreq[i];
                    });
      });
}

/// txrt_rope_angles and txrt_rope_angles_partial, under the name `name`.
txrt_status ropeByAngles(const char *name, txrt_context *ctx, int64_t site,
                         int64_t outer, int64_t seq, int64_t heads,
                         int64_t headDim, int64_t rotaryDim, const float *x,
                         float *y, const float *angles, int32_t inverse) {
  return runKernel(
      ctx, site, name,
      [&] {
        return shapes("outer", outer, "seq", seq, "heads", heads, "head_dim",
                      headDim, "rotary_dim", rotaryDim);
      },
      [&](Context &c) {
        if (!ropeSizes(outer, seq, heads, headDim, rotaryDim))
          return;
        require(x && y && angles, "x, y and angles must not be NULL");
        const int64_t half = rotaryDim / 2;
        ropeForward(c, outer, seq, heads, headDim, rotaryDim, x, y,
                    inverse != 0,
                    [&](int64_t t, int64_t i) { return angles[t * half + i]; });
      });
}

} // namespace

extern "C" {

txrt_status txrt_rope(txrt_context *ctx, int64_t site, int64_t outer,
                      int64_t seq, int64_t heads, int64_t head_dim,
                      const float *x, float *y, int64_t pos_offset, float base,
                      int32_t inverse) {
  return ropeByPositions("txrt_rope", ctx, site, outer, seq, heads, head_dim,
                         head_dim, x, y, pos_offset, base, inverse);
}

txrt_status txrt_rope_partial(txrt_context *ctx, int64_t site, int64_t outer,
                              int64_t seq, int64_t heads, int64_t head_dim,
                              int64_t rotary_dim, const float *x, float *y,
                              int64_t pos_offset, float base, int32_t inverse) {
  return ropeByPositions("txrt_rope_partial", ctx, site, outer, seq, heads,
                         head_dim, rotary_dim, x, y, pos_offset, base, inverse);
}

txrt_status txrt_rope_angles(txrt_context *ctx, int64_t site, int64_t outer,
                             int64_t seq, int64_t heads, int64_t head_dim,
                             const float *x, float *y, const float *angles,
                             int32_t inverse) {
  return ropeByAngles("txrt_rope_angles", ctx, site, outer, seq, heads,
                      head_dim, head_dim, x, y, angles, inverse);
}

txrt_status txrt_rope_angles_partial(txrt_context *ctx, int64_t site,
                                     int64_t outer, int64_t seq, int64_t heads,
                                     int64_t head_dim, int64_t rotary_dim,
                                     const float *x, float *y,
                                     const float *angles, int32_t inverse) {
  return ropeByAngles("txrt_rope_angles_partial", ctx, site, outer, seq, heads,
                      head_dim, rotary_dim, x, y, angles, inverse);
}

} // extern "C"
