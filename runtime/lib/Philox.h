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

/// Fills scale[0..count) with keepScale (kept) or 0 (dropped) for the
/// elements first .. first+count-1 of the stream of `key`.
inline void dropoutScales(const PhiloxKey &key, uint64_t first, int64_t count,
                          uint32_t threshold, float keepScale, float *scale) {
  constexpr uint64_t kChunk = 4 * kPhiloxBatch;
  uint32_t words[kChunk];
  uint64_t position = first;
  uint64_t end = first + uint64_t(count);
  while (position < end) {
    uint64_t chunkStart = position / kChunk * kChunk;
    philoxBatch(key, chunkStart / 4, words);
    uint64_t stop = chunkStart + kChunk < end ? chunkStart + kChunk : end;
    for (uint64_t e = position; e < stop; ++e)
      scale[e - first] = words[e - chunkStart] >= threshold ? keepScale : 0.0f;
    position = stop;
  }
}

} // namespace txrt

#endif // TXRT_LIB_PHILOX_H
