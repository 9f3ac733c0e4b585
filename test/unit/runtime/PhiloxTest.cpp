//===- PhiloxTest.cpp - the vectorised dropout stream is Philox4x32-10 ----===//
//
// Built with the runtime's flags (-march=native), so it checks the path the
// dropout and attention kernels use on the host (AVX-512: 16-lane philox16;
// AVX2: two 8-lane philox8; else the portable batch), bit for bit, against
// the scalar philox4x32:
// chunk-aligned and unaligned ranges, short and long ones, and counters
// whose low word wraps (the carry into the high word).
//
//===----------------------------------------------------------------------===//
#include "Philox.h"

#include <gtest/gtest.h>

#include <vector>

using namespace txrt;

namespace {

/// The scale of element e as the scalar definition gives it: word e % 4 of
/// counter e / 4.
float referenceScale(const PhiloxKey &key, uint64_t e, uint32_t threshold,
                     float keepScale) {
  uint32_t words[4];
  philox4x32(key, e / 4, words);
  return words[e % 4] >= threshold ? keepScale : 0.0f;
}

TEST(PhiloxTest, KeepBitsAreTheScalarStream) {
  const PhiloxKey key = philoxKey(0x123456789ull, 17, 4);
  const uint32_t threshold = dropoutThreshold(0.3f);
  std::vector<uint64_t> blocks = {0, 16, uint64_t(1) << 20,
                                  (uint64_t(5) << 32) - 16};
  // The low word wraps inside the batch at every lane (of either vector of
  // an 8-lane batch), into high words 1 and 3.
  for (uint64_t before = 1; before < uint64_t(kPhiloxBatch); ++before) {
    blocks.push_back((uint64_t(1) << 32) - before);
    blocks.push_back((uint64_t(3) << 32) - before);
  }
  for (uint64_t block : blocks) {
    const uint64_t bits = dropoutKeepBits(key, block, threshold);
    for (int j = 0; j < kDropoutChunk; ++j)
      EXPECT_EQ((bits >> j) & 1u,
                referenceScale(key, 4 * block + j, threshold, 1.0f) != 0.0f)
          << "block " << block << " element " << j;
  }
}

TEST(PhiloxTest, DropoutScalesOverAnyRange) {
  const PhiloxKey key = philoxKey(99, 3, 11);
  const uint32_t threshold = dropoutThreshold(0.1f);
  const float keepScale = 1.0f / 0.9f;
  for (uint64_t first : {uint64_t(0), uint64_t(5), uint64_t(64), uint64_t(77),
                         ((uint64_t(1) << 32) - 3) * 4 + 1})
    for (int64_t count : {1, 15, 16, 17, 63, 64, 65, 200}) {
      std::vector<float> scale(size_t(count), -1.0f);
      dropoutScales(key, first, count, threshold, keepScale, scale.data());
      for (int64_t j = 0; j < count; ++j)
        ASSERT_EQ(scale[size_t(j)], referenceScale(key, first + uint64_t(j),
                                                   threshold, keepScale))
            << "first " << first << " count " << count << " element " << j;
    }
}

TEST(PhiloxTest, ThresholdsAtTheEnds) {
  const PhiloxKey key = philoxKey(7, 0, 0);
  EXPECT_EQ(dropoutKeepBits(key, 3, dropoutThreshold(0.0f)), ~uint64_t(0));
  EXPECT_EQ(dropoutThreshold(0.5f), 0x80000000u);
}

} // namespace
