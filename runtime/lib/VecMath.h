//===- VecMath.h - exp that vectorises, row helpers -------------*- C++ -*-===//
//
// std::exp does not vectorise without -ffast-math (glibc only declares its
// SIMD variants then), so the softmax-like kernels use expApprox: a
// Cody-Waite range reduction and a degree-6 Taylor polynomial, about 2 ulp
// over the float range, branch-free so loops over it vectorise.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_VECMATH_H
#define TXRT_LIB_VECMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace txrt {

/// e^x for finite x and -inf (-> 0); x below ~-87.3 gives 0, above ~88.7
/// gives +inf.
inline float expApprox(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2Hi = 0.693145751953125f;
  const float ln2Lo = 1.42860682030941723e-6f;
  const float roundMagic = 12582912.0f; // 1.5 * 2^23: adding rounds to int
  float clamped = x < -87.5f ? -87.5f : (x > 88.7f ? 88.7f : x);
  float nf = (clamped * log2e + roundMagic) - roundMagic;
  float r = clamped - nf * ln2Hi;
  r = r - nf * ln2Lo;
  // Horner on 1 + r + r^2/2 + ... + r^6/720 (|r| <= ln2/2).
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t n = int32_t(nf);
  // 2^n as two factors so n = -126..-149 (subnormal results) stay exact
  // enough and n = 128 does not overflow the exponent field.
  int32_t half = n >> 1;
  uint32_t bits1 = uint32_t(half + 127) << 23;
  uint32_t bits2 = uint32_t(n - half + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &bits1, sizeof(s1));
  std::memcpy(&s2, &bits2, sizeof(s2));
  float result = p * s1 * s2;
  return x < -87.0f ? 0.0f : result;
}

/// out[j] = e^(in[j] - shift) for j < n; in and out may be the same. With
/// AVX-512: the Cody-Waite reduction and polynomial of expApprox, 16 lanes
/// at a time, with VSCALEFPS for the 2^n (it goes to 0 below the float
/// range by itself), about 12 instructions per 16 values instead of the ~25
/// of the compiler's vectorisation of expApprox; the tail uses expApprox.
#if defined(__AVX512F__)
// GCC 12 reports its own _mm512_undefined_ps() inside the max and rounding
// intrinsics as maybe-uninitialized wherever they are inlined; it is not.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
inline void expShifted(const float *in, float shift, int64_t n, float *out) {
  int64_t j = 0;
#if defined(__AVX512F__)
  const __m512 by = _mm512_set1_ps(shift);
  for (; j + 16 <= n; j += 16) {
    const __m512 x = _mm512_max_ps(_mm512_sub_ps(_mm512_loadu_ps(in + j), by),
                                   _mm512_set1_ps(-104.0f));
    const __m512 nf = _mm512_roundscale_ps(
        _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(0.693145751953125f), x);
    r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(1.42860682030941723e-6f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    _mm512_storeu_ps(out + j, _mm512_scalef_ps(p, nf));
  }
#endif
  for (; j < n; ++j)
    out[j] = expApprox(in[j] - shift);
}
#if defined(__AVX512F__)
#pragma GCC diagnostic pop
#endif

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// max over n floats (-inf for n == 0).
inline float rowMax(const float *x, int64_t n) {
  float m = kNegInf;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j)
    m = x[j] > m ? x[j] : m;
  return m;
}

} // namespace txrt

#endif // TXRT_LIB_VECMATH_H
