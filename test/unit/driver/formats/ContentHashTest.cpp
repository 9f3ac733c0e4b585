//===- ContentHashTest.cpp - the safetensors checksum's hash --------------===//
#include "formats/ContentHash.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace txrt::driver;

namespace {

TEST(ContentHashTest, EveryBitFlipChangesTheHash) {
  // Sizes around the 32-byte blocks and the 8-byte tail words.
  for (size_t size : {1, 7, 8, 9, 31, 32, 33, 100, 257}) {
    std::vector<unsigned char> bytes(size);
    for (size_t i = 0; i < size; ++i)
      bytes[i] = static_cast<unsigned char>(i * 37 + 11);
    std::set<uint64_t> seen = {contentHash64(bytes.data(), size)};
    for (size_t i = 0; i < size; ++i)
      for (int bit = 0; bit < 8; ++bit) {
        bytes[i] ^= static_cast<unsigned char>(1 << bit);
        EXPECT_TRUE(seen.insert(contentHash64(bytes.data(), size)).second)
            << "size " << size << " byte " << i << " bit " << bit;
        bytes[i] ^= static_cast<unsigned char>(1 << bit);
      }
  }
}

TEST(ContentHashTest, LengthAndOrderCount) {
  std::vector<unsigned char> zeros(96, 0);
  std::set<uint64_t> seen;
  for (size_t size = 0; size <= zeros.size(); ++size)
    EXPECT_TRUE(seen.insert(contentHash64(zeros.data(), size)).second)
        << size;
  // Two 8-byte words swapped, within a block and in the tail.
  std::vector<unsigned char> a(40), b;
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<unsigned char>(i);
  b = a;
  std::swap_ranges(b.begin(), b.begin() + 8, b.begin() + 8);
  EXPECT_NE(contentHash64(a.data(), 40), contentHash64(b.data(), 40));
  b = a;
  std::swap_ranges(b.begin() + 32, b.begin() + 36, b.begin() + 36);
  EXPECT_NE(contentHash64(a.data(), 40), contentHash64(b.data(), 40));
  EXPECT_EQ(contentHash64(a.data(), 40), contentHash64(a.data(), 40));
}

TEST(ContentHashTest, HexIsSixteenLowerCaseDigits) {
  EXPECT_EQ(hashHex(0), "0000000000000000");
  EXPECT_EQ(hashHex(0x0123456789ABCDEFull), "0123456789abcdef");
}

} // namespace
