//===- ContentHash.cpp - a fast 64-bit hash of a byte range ---------------===//
#include "formats/ContentHash.h"
#include "core/Init.h" // mix64: every input bit reaches every output bit

#include <cstring>

namespace txrt::driver {

namespace {

// Odd 64-bit constants with well-spread bits (from the digits of pi and e).
constexpr uint64_t kMulA = 0x243F6A8885A308D3ull;
constexpr uint64_t kMulB = 0xB7E151628AED2A6Bull;
constexpr uint64_t kSeeds[4] = {0x13198A2E03707345ull, 0xA4093822299F31D1ull,
                                0x082EFA98EC4E6C89ull, 0x452821E638D01377ull};

uint64_t rotateLeft(uint64_t x, int bits) {
  return (x << bits) | (x >> (64 - bits));
}

uint64_t load64(const unsigned char *p) {
  uint64_t value; // the host's byte order: checksums are for this format's
  std::memcpy(&value, p, 8); // little-endian data, read on the same kind
  return value;
}

uint64_t mixWord(uint64_t lane, uint64_t word) {
  return rotateLeft(lane ^ (word * kMulA), 29) * kMulB;
}

} // namespace

uint64_t contentHash64(const void *data, size_t bytes) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t lanes[4] = {kSeeds[0], kSeeds[1], kSeeds[2], kSeeds[3]};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int lane = 0; lane < 4; ++lane)
      lanes[lane] = mixWord(lanes[lane], load64(p + i + 8 * lane));
  uint64_t hash = uint64_t(bytes) * kMulB;
  for (int lane = 0; lane < 4; ++lane)
    hash = rotateLeft(hash ^ mix64(lanes[lane]), 23) * kMulA;
  for (; i + 8 <= bytes; i += 8)
    hash = mixWord(hash, load64(p + i));
  for (; i < bytes; ++i)
    hash = mixWord(hash, uint64_t(p[i]) | (uint64_t(i & 7) << 8));
  return mix64(hash);
}

std::string hashHex(uint64_t hash) {
  static const char digits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4)
    text[size_t(i)] = digits[hash & 15];
  return text;
}

} // namespace txrt::driver
