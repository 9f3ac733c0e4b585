//===- Philox.h - Philox4x32-10 counter-based random numbers ----*- C++ -*-===//
//
// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11): ten
// rounds of a multiply-xor bijection turn a 128-bit counter and a 64-bit key
// into four 32-bit uniform words. Dropout masks are a pure function of
// (seed, step, site, element index): element i uses word i % 4 of counter
// i / 4, so backward regenerates the forward's mask without storing it.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_PHILOX_H
#define TXRT_LIB_PHILOX_H

#include <cstdint>

#if defined(__AVX512F__) && defined(__BMI2__)
#include <immintrin.h>
#define TXRT_PHILOX_AVX512 1
#elif defined(__AVX2__) && defined(__BMI2__)
#include <immintrin.h>
#define TXRT_PHILOX_AVX2 1
#endif

namespace txrt {

struct PhiloxKey {
  uint32_t k0, k1;
  /// Words 2 and 3 of every counter (the stream), words 0-1 are the block.
  uint32_t c2, c3;
};

/// Derives the key and stream of (seed, step, site): the seed is the key,
/// step and site (mixed) select the stream.
inline PhiloxKey philoxKey(uint64_t seed, int64_t step, int64_t site) {
  // splitmix64 finaliser to spread step/site over the stream words.
  auto mix = [](uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  uint64_t stream = mix(uint64_t(step) ^ mix(uint64_t(site)));
  return {uint32_t(seed), uint32_t(seed >> 32), uint32_t(stream),
          uint32_t(stream >> 32)};
}

/// The four words of counter `block` (written to out[0..3]).
inline void philox4x32(const PhiloxKey &key, uint64_t block, uint32_t out[4]) {
  uint32_t c0 = uint32_t(block), c1 = uint32_t(block >> 32);
  uint32_t c2 = key.c2, c3 = key.c3;
  uint32_t k0 = key.k0, k1 = key.k1;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c0;
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/// The keep threshold of dropout probability p: a word w keeps iff
/// w >= threshold (so P(keep) = 1 - p up to 2^-32).
inline uint32_t dropoutThreshold(float p) {
  double t = double(p) * 4294967296.0;
  return t >= 4294967295.0 ? 0xFFFFFFFFu : uint32_t(t);
}

/// Counters per philoxBatch call; it yields 4 * kPhiloxBatch words.
constexpr int kPhiloxBatch = 16;

/// The words of counters firstBlock .. firstBlock + kPhiloxBatch - 1, word w
/// of counter firstBlock + i at words[4*i + w]. Written as independent lanes
/// so the compiler vectorises the rounds across counters.
inline void philoxBatch(const PhiloxKey &key, uint64_t firstBlock,
                        uint32_t words[4 * kPhiloxBatch]) {
  uint32_t c0[kPhiloxBatch], c1[kPhiloxBatch], c2[kPhiloxBatch],
      c3[kPhiloxBatch];
  for (int i = 0; i < kPhiloxBatch; ++i) {
    uint64_t block = firstBlock + uint64_t(i);
    c0[i] = uint32_t(block);
    c1[i] = uint32_t(block >> 32);
    c2[i] = key.c2;
    c3[i] = key.c3;
  }
  uint32_t k0 = key.k0, k1 = key.k1;
  for (int round = 0; round < 10; ++round) {
#pragma omp simd
    for (int i = 0; i < kPhiloxBatch; ++i) {
      uint64_t p0 = uint64_t(0xD2511F53u) * c0[i];
      uint64_t p1 = uint64_t(0xCD9E8D57u) * c2[i];
      uint32_t n0 = uint32_t(p1 >> 32) ^ c1[i] ^ k0;
      uint32_t n2 = uint32_t(p0 >> 32) ^ c3[i] ^ k1;
      c1[i] = uint32_t(p1);
      c3[i] = uint32_t(p0);
      c0[i] = n0;
      c2[i] = n2;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  for (int i = 0; i < kPhiloxBatch; ++i) {
    words[4 * i] = c0[i];
    words[4 * i + 1] = c1[i];
    words[4 * i + 2] = c2[i];
    words[4 * i + 3] = c3[i];
  }
}

/// Elements per dropoutKeepBits call: the words of kPhiloxBatch counters.
constexpr int kDropoutChunk = 4 * kPhiloxBatch;

#if defined(TXRT_PHILOX_AVX512)
// GCC 12 reports its own _mm512_undefined_epi32() inside the multiply and
// shift intrinsics as (maybe-)uninitialized wherever they are inlined; it is
// not.
#pragma GCC diagnostic push
#ifndef __clang__ // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
/// philoxBatch on 16 counters held in the lanes of four vectors: lane i of
/// words[w] is word w of counter firstBlock + i. 32 x 32 -> 64-bit products
/// take two VPMULUDQ (even and odd lanes) and two blends.
inline void philox16(const PhiloxKey &key, uint64_t firstBlock,
                     __m512i words[4]) {
  const __m512i lanes =
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i base = _mm512_set1_epi32(int32_t(uint32_t(firstBlock)));
  __m512i c0 = _mm512_add_epi32(base, lanes);
  // The high word of firstBlock + i carries when the low word wraps.
  const __mmask16 carry = _mm512_cmplt_epu32_mask(c0, base);
  const __m512i high = _mm512_set1_epi32(int32_t(uint32_t(firstBlock >> 32)));
  __m512i c1 = _mm512_mask_add_epi32(high, carry, high, _mm512_set1_epi32(1));
  __m512i c2 = _mm512_set1_epi32(int32_t(key.c2));
  __m512i c3 = _mm512_set1_epi32(int32_t(key.c3));
  const __m512i m0 = _mm512_set1_epi32(int32_t(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(int32_t(0xCD9E8D57u));
  uint32_t k0 = key.k0, k1 = key.k1;
  for (int round = 0; round < 10; ++round) {
    const __m512i even0 = _mm512_mul_epu32(c0, m0);
    const __m512i odd0 = _mm512_mul_epu32(_mm512_srli_epi64(c0, 32), m0);
    const __m512i even1 = _mm512_mul_epu32(c2, m1);
    const __m512i odd1 = _mm512_mul_epu32(_mm512_srli_epi64(c2, 32), m1);
    const __m512i hi0 =
        _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even0, 32), odd0);
    const __m512i lo0 =
        _mm512_mask_blend_epi32(0xAAAA, even0, _mm512_slli_epi64(odd0, 32));
    const __m512i hi1 =
        _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even1, 32), odd1);
    const __m512i lo1 =
        _mm512_mask_blend_epi32(0xAAAA, even1, _mm512_slli_epi64(odd1, 32));
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1),
                          _mm512_set1_epi32(int32_t(k0)));
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3),
                          _mm512_set1_epi32(int32_t(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  words[0] = c0;
  words[1] = c1;
  words[2] = c2;
  words[3] = c3;
}
#pragma GCC diagnostic pop
#endif

#if defined(TXRT_PHILOX_AVX2)
/// philoxBatch on 8 counters in the lanes of four ymm vectors (lane i of
/// words[w]: word w of counter firstBlock + i); as philox16, with AVX2's
/// VPMULUDQ and 32-bit blends.
inline void philox8(const PhiloxKey &key, uint64_t firstBlock,
                    __m256i words[4]) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i base = _mm256_set1_epi32(int32_t(uint32_t(firstBlock)));
  __m256i c0 = _mm256_add_epi32(base, lanes);
  // The high word carries where the low word wrapped: c0 < base unsigned,
  // i.e. (c0 ^ sign) < (base ^ sign) signed; the compare gives -1 there.
  const __m256i sign = _mm256_set1_epi32(INT32_MIN);
  const __m256i wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(base, sign),
                                             _mm256_xor_si256(c0, sign));
  __m256i c1 = _mm256_sub_epi32(
      _mm256_set1_epi32(int32_t(uint32_t(firstBlock >> 32))), wrapped);
  __m256i c2 = _mm256_set1_epi32(int32_t(key.c2));
  __m256i c3 = _mm256_set1_epi32(int32_t(key.c3));
  const __m256i m0 = _mm256_set1_epi32(int32_t(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(int32_t(0xCD9E8D57u));
  uint32_t k0 = key.k0, k1 = key.k1;
  for (int round = 0; round < 10; ++round) {
    const __m256i even0 = _mm256_mul_epu32(c0, m0);
    const __m256i odd0 = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
    const __m256i even1 = _mm256_mul_epu32(c2, m1);
    const __m256i odd1 = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
    const __m256i hi0 =
        _mm256_blend_epi32(_mm256_srli_epi64(even0, 32), odd0, 0xAA);
    const __m256i lo0 =
        _mm256_blend_epi32(even0, _mm256_slli_epi64(odd0, 32), 0xAA);
    const __m256i hi1 =
        _mm256_blend_epi32(_mm256_srli_epi64(even1, 32), odd1, 0xAA);
    const __m256i lo1 =
        _mm256_blend_epi32(even1, _mm256_slli_epi64(odd1, 32), 0xAA);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1),
                          _mm256_set1_epi32(int32_t(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3),
                          _mm256_set1_epi32(int32_t(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  words[0] = c0;
  words[1] = c1;
  words[2] = c2;
  words[3] = c3;
}

/// 8 bits: lane i of words is >= threshold (unsigned).
inline uint32_t keepLanes8(__m256i words, uint32_t threshold) {
  // w >= t  <=>  not (t > w), compared signed after flipping the sign bits.
  const __m256i sign = _mm256_set1_epi32(INT32_MIN);
  const __m256i below =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(threshold ^ 0x80000000u)),
                         _mm256_xor_si256(words, sign));
  return ~uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(below))) & 0xFFu;
}
#endif

/// Bit j says whether element 4 * firstBlock + j (j < kDropoutChunk) is
/// kept: word j of the stream is >= threshold.
inline uint64_t dropoutKeepBits(const PhiloxKey &key, uint64_t firstBlock,
                                uint32_t threshold) {
  static_assert(kDropoutChunk == 64, "one bit per element of a chunk");
#if defined(TXRT_PHILOX_AVX512)
  __m512i words[4];
  philox16(key, firstBlock, words);
  const __m512i bound = _mm512_set1_epi32(int32_t(threshold));
  uint64_t bits = 0;
  // Word w of counter i is element 4 i + w: deposit each word's 16 lane
  // bits every fourth bit.
  for (int w = 0; w < 4; ++w)
    bits |= _pdep_u64(_mm512_cmpge_epu32_mask(words[w], bound),
                      0x1111111111111111ull << w);
  return bits;
#elif defined(TXRT_PHILOX_AVX2)
  uint64_t bits = 0;
  for (int half = 0; half < 2; ++half) {
    __m256i words[4];
    philox8(key, firstBlock + uint64_t(8 * half), words);
    // Counters 8 * half .. + 7 are elements 32 * half .. + 31: word w of
    // counter i is bit 4 i + w of that range.
    for (int w = 0; w < 4; ++w)
      bits |= _pdep_u64(keepLanes8(words[w], threshold),
                        0x11111111ull << (32 * half + w));
  }
  return bits;
#else
  uint32_t words[kDropoutChunk];
  philoxBatch(key, firstBlock, words);
  uint64_t bits = 0;
  for (int j = 0; j < kDropoutChunk; ++j)
    bits |= uint64_t(words[j] >= threshold) << j;
  return bits;
#endif
}

/// Fills scale[0..count) with keepScale (kept) or 0 (dropped) for the
/// elements first .. first+count-1 of the stream of `key`.
inline void dropoutScales(const PhiloxKey &key, uint64_t first, int64_t count,
                          uint32_t threshold, float keepScale, float *scale) {
  constexpr uint64_t kChunk = kDropoutChunk;
  uint64_t position = first;
  const uint64_t end = first + uint64_t(count);
  while (position < end) {
    const uint64_t chunkStart = position / kChunk * kChunk;
    const uint64_t stop = chunkStart + kChunk < end ? chunkStart + kChunk : end;
    const uint64_t bits = dropoutKeepBits(key, chunkStart / 4, threshold) >>
                          (position - chunkStart);
    float *out = scale + (position - first);
    const int64_t n = int64_t(stop - position);
#if defined(TXRT_PHILOX_AVX512)
    const __m512 kept = _mm512_set1_ps(keepScale);
    for (int64_t j = 0; j < n; j += 16) {
      const int64_t lanes = n - j < 16 ? n - j : 16;
      const __mmask16 valid = __mmask16((1u << lanes) - 1u);
      _mm512_mask_storeu_ps(out + j, valid,
                            _mm512_maskz_mov_ps(__mmask16(bits >> j), kept));
    }
#else
    for (int64_t j = 0; j < n; ++j)
      out[j] = (bits >> j) & 1u ? keepScale : 0.0f;
#endif
    position = stop;
  }
}

} // namespace txrt

#endif // TXRT_LIB_PHILOX_H
