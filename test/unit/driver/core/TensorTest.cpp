//===- TensorTest.cpp - the driver's aligned buffers ----------------------===//
//
// Large buffers (arenas) are their own 2 MiB aligned mapping, zero-filled
// and marked for transparent huge pages (the kernel lists the mapping with
// the `hg` VmFlag in /proc/self/smaps); small ones and TXRT_HUGE_PAGES=0
// keep the 64-byte aligned heap block. Either way the memory is zero and
// writable to its last byte, and moving a buffer moves its ownership.
//
//===----------------------------------------------------------------------===//
#include "core/Tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using namespace txrt::driver;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

/// The VmFlags line of the /proc/self/smaps mapping that holds `address`
/// ("" when not found or not Linux).
std::string vmFlagsOf(const void *address) {
  std::ifstream smaps("/proc/self/smaps");
  uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = at >= begin && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

bool allZero(const AlignedBuffer &buffer) {
  const unsigned char *bytes =
      static_cast<const unsigned char *>(buffer.data());
  for (size_t i = 0; i < buffer.size(); i += 4096)
    if (bytes[i] != 0)
      return false;
  return bytes[buffer.size() - 1] == 0;
}

/// Sets TXRT_HUGE_PAGES for one test and restores it after.
class HugePagesEnv {
public:
  explicit HugePagesEnv(const char *value) {
    if (const char *old = std::getenv("TXRT_HUGE_PAGES"))
      saved_ = old, had_ = true;
    setenv("TXRT_HUGE_PAGES", value, 1);
  }
  ~HugePagesEnv() {
    if (had_)
      setenv("TXRT_HUGE_PAGES", saved_.c_str(), 1);
    else
      unsetenv("TXRT_HUGE_PAGES");
  }

private:
  std::string saved_;
  bool had_ = false;
};

TEST(AlignedBufferTest, LargeBufferIsAHugePageMappingThatIsZeroAndWritable) {
  HugePagesEnv env("1");
  AlignedBuffer buffer(5 * kMiB + 3);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 5 * kMiB + 3);
#if defined(__linux__)
  EXPECT_TRUE(buffer.hugePageMapped());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % (2 * kMiB), 0u);
  std::string flags = vmFlagsOf(buffer.data());
  ASSERT_FALSE(flags.empty()) << "no /proc/self/smaps entry";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
#endif
  EXPECT_TRUE(allZero(buffer));
  unsigned char *bytes = static_cast<unsigned char *>(buffer.data());
  bytes[0] = 1;
  bytes[buffer.size() - 1] = 2;
  EXPECT_EQ(bytes[buffer.size() - 1], 2);
}

TEST(AlignedBufferTest, SmallBufferStaysOnTheHeap) {
  HugePagesEnv env("1");
  AlignedBuffer buffer(64 * 1024);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_FALSE(buffer.hugePageMapped());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) %
                AlignedBuffer::kAlignment,
            0u);
  EXPECT_TRUE(allZero(buffer));
}

TEST(AlignedBufferTest, HugePagesZeroKeepsSmallPages) {
  HugePagesEnv env("0");
  AlignedBuffer buffer(8 * kMiB);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_FALSE(buffer.hugePageMapped());
#if defined(__linux__)
  EXPECT_EQ(vmFlagsOf(buffer.data()).find(" hg"), std::string::npos);
#endif
  EXPECT_TRUE(allZero(buffer));
}

TEST(AlignedBufferTest, MovingAMappedBufferMovesItsOwnership) {
  HugePagesEnv env("1");
  AlignedBuffer first(4 * kMiB);
  void *data = first.data();
  static_cast<unsigned char *>(data)[4 * kMiB - 1] = 7;
  AlignedBuffer second(std::move(first));
  EXPECT_EQ(second.data(), data);
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(first.size(), 0u);
  EXPECT_FALSE(first.hugePageMapped());
  AlignedBuffer third(16);
  third = std::move(second);
  EXPECT_EQ(third.data(), data);
  EXPECT_EQ(static_cast<unsigned char *>(third.data())[4 * kMiB - 1], 7);
#if defined(__linux__)
  EXPECT_TRUE(third.hugePageMapped());
#endif
}

} // namespace
