//===- Simd.h - one vector interface over AVX-512 and AVX2 ------*- C++ -*-===//
//
// The hand-written kernels (tileGemm, the attention tiles, exp) are written
// once against `Simd`: a float vector type, its lane count, and the handful
// of operations they need (load, store, broadcast, fused multiply-add, tail
// loads and stores of the first `n` lanes). The library is built for the
// host CPU (-march=native), so `Simd` is the widest set it has: 16-lane
// AVX-512 (zmm, 32 registers) or 8-lane AVX2 + FMA (ymm, 16 registers);
// TXRT_HAS_SIMD is 0 on anything older and callers keep a portable loop.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_SIMD_H
#define TXRT_LIB_SIMD_H

#include <cstdint>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define TXRT_HAS_SIMD 1
#else
#define TXRT_HAS_SIMD 0
#endif

namespace txrt {

#if defined(__AVX512F__)

/// 16 floats in a zmm register; tails through AVX-512 lane masks.
struct Simd {
  using Vec = __m512;
  using Tail = __mmask16;
  static constexpr int kLanes = 16;
  /// Vector registers: micro-kernels size their accumulator tiles by it.
  static constexpr int kRegisters = 32;

  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec load(const float *p) { return _mm512_loadu_ps(p); }
  static void store(float *p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }

  /// The first n lanes (0 <= n <= kLanes).
  static Tail tail(int64_t n) {
    return n >= kLanes ? Tail(0xFFFF) : Tail((1u << n) - 1u);
  }
  /// Lanes outside the tail read as 0; nothing past them is touched.
  static Vec load(const float *p, Tail t) {
    return _mm512_maskz_loadu_ps(t, p);
  }
  static void store(float *p, Tail t, Vec v) { _mm512_mask_storeu_ps(p, t, v); }

  /// e^x for x <= ~88; x below the float range gives 0 (-inf included).
  /// Cody-Waite reduction to r in [-ln2/2, ln2/2], a degree-6 Taylor
  /// polynomial, and VSCALEFPS for the 2^n (it underflows to 0 by itself).
  static Vec exp(Vec x);

  // Horizontal sum by halving, with the zero-masking forms of the
  // shuffles: GCC 12's plain forms (and _mm512_reduce_*) pass an
  // _mm512_undefined_ps() that -Wall flags as maybe-uninitialized wherever
  // they are inlined.
  static float sum(Vec v) {
    v = _mm512_add_ps(
        v, _mm512_maskz_shuffle_f32x4(0xFFFF, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm512_add_ps(
        v, _mm512_maskz_shuffle_f32x4(0xFFFF, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
    v = _mm512_add_ps(
        v, _mm512_maskz_permute_ps(0xFFFF, v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm512_add_ps(
        v, _mm512_maskz_permute_ps(0xFFFF, v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm512_cvtss_f32(v);
  }
};

#elif TXRT_HAS_SIMD

/// 8 floats in a ymm register; tails through VMASKMOVPS lane masks.
struct Simd {
  using Vec = __m256;
  using Tail = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;

  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec broadcast(float x) { return _mm256_set1_ps(x); }
  static Vec load(const float *p) { return _mm256_loadu_ps(p); }
  static void store(float *p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }

  static Tail tail(int64_t n) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), lanes);
  }
  static Vec load(const float *p, Tail t) { return _mm256_maskload_ps(p, t); }
  static void store(float *p, Tail t, Vec v) { _mm256_maskstore_ps(p, t, v); }

  /// e^x as in the AVX-512 version; 2^n is built in the exponent field,
  /// so x is clamped to [-87, 88.7] (n >= -126, a normal float) and results
  /// for x < -87 are set to 0.
  static Vec exp(Vec x);

  static float sum(Vec v) {
    __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

#endif

#if TXRT_HAS_SIMD
// GCC 12 reports its own _mm512_undefined_ps() inside the rounding and
// scalef intrinsics as maybe-uninitialized wherever they are inlined; it is
// not.
#pragma GCC diagnostic push
#ifndef __clang__ // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
inline Simd::Vec Simd::exp(Vec x) {
#if defined(__AVX512F__)
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
  const Vec nf = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  const Vec underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)),
                    _mm256_set1_ps(88.7f));
  const Vec nf =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#endif
  Vec r = fmadd(nf, broadcast(-0.693145751953125f), x);
  r = fmadd(nf, broadcast(-1.42860682030941723e-6f), r);
  Vec p = broadcast(1.0f / 720.0f);
  p = fmadd(p, r, broadcast(1.0f / 120.0f));
  p = fmadd(p, r, broadcast(1.0f / 24.0f));
  p = fmadd(p, r, broadcast(1.0f / 6.0f));
  p = fmadd(p, r, broadcast(0.5f));
  p = fmadd(p, r, broadcast(1.0f));
  p = fmadd(p, r, broadcast(1.0f));
#if defined(__AVX512F__)
  return _mm512_scalef_ps(p, nf);
#else
  // n in [-126, 128]: 2^n as two factors so n = 128 (x near 88.7) does not
  // overflow the exponent field.
  const __m256i n = _mm256_cvtps_epi32(nf);
  const __m256i half = _mm256_srai_epi32(n, 1);
  const __m256i bias = _mm256_set1_epi32(127);
  const Vec s1 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const Vec s2 = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(n, half), bias), 23));
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(_mm256_mul_ps(p, s1), s2));
#endif
}
#pragma GCC diagnostic pop
#endif

} // namespace txrt

#endif // TXRT_LIB_SIMD_H
