//===- CopyRowsEmulatedTest.cpp - strided copies within the device --------===//
//
// The device code of CopyRows.cu (runtime/cuda/kernels/CopyRowsKernels.cuh,
// what regrows a --target=cuda executable's resident KV caches at every
// decoded token) run on the host under CudaEmulation.h with CopyRows.cu's
// batching and launches, against a byte-by-byte reference: widths that are
// multiples of 16, of 4 and odd (each copy its own unit), pitches wider
// than the rows, copies taller than the grid (the blocks loop), more copies
// than one launch takes, empty copies, and the bytes around every row
// untouched.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/CopyRowsKernels.cuh"

#include <cstring>
#include <random>

using namespace txrt::cuda;
using namespace txrt::cuda::copyrows;

namespace {

using Bytes = std::vector<unsigned char>;

/// One copy within a source and a destination buffer of its own.
struct Case {
  int64_t width, height, srcPitch, dstPitch;
  int64_t srcOffset, dstOffset; ///< bytes from the buffers' 64-aligned start
  Bytes src, dst;
};

Case makeCase(int64_t width, int64_t height, int64_t srcPitch, int64_t dstPitch,
              int64_t srcOffset, int64_t dstOffset, uint32_t seed) {
  Case c{width, height, srcPitch, dstPitch, srcOffset, dstOffset, {}, {}};
  std::mt19937 random(seed);
  c.src.resize(size_t(srcOffset + srcPitch * height + 64));
  for (unsigned char &byte : c.src)
    byte = static_cast<unsigned char>(random());
  c.dst.assign(size_t(dstOffset + dstPitch * height + 64), 0xA5);
  return c;
}

/// Runs every case's copy through the kernel, batched as CopyRows.cu does;
/// returns the number of launches.
int runKernel(std::vector<Case> &cases) {
  std::vector<RowCopy> copies;
  for (Case &c : cases)
    copies.push_back(
        {reinterpret_cast<char *>(c.dst.data()) + c.dstOffset,
         reinterpret_cast<const char *>(c.src.data()) + c.srcOffset, c.dstPitch,
         c.srcPitch, c.width, c.height});
  int launches = 0;
  forEachLaunch(copies.data(), int64_t(copies.size()),
                [&](const RowCopies &batch, int64_t filled,
                    const KernelLaunch &geometry) {
                  ++launches;
                  emu::launch({geometry.blocks, unsigned(filled), 1},
                              {geometry.threads, 1, 1}, 0,
                              [&] { copyRowsKernel(batch); });
                });
  return launches;
}

/// What the destination must hold: each row copied, every other byte
/// as it was.
Bytes expected(const Case &c) {
  Bytes want(c.dst.size(), 0xA5);
  for (int64_t row = 0; row < c.height; ++row)
    std::memcpy(want.data() + c.dstOffset + row * c.dstPitch,
                c.src.data() + c.srcOffset + row * c.srcPitch, size_t(c.width));
  return want;
}

TEST(CopyRowsEmulatedTest, EveryRowLandsAndNothingElseMoves) {
  std::vector<Case> cases;
  // 16-byte units (a cache row of 4 floats a position), 4-byte units
  // (odd float counts, or a 4-aligned offset) and single bytes.
  cases.push_back(makeCase(64, 8, 64, 80, 0, 0, 1));
  cases.push_back(makeCase(2048, 3, 2048, 4096, 0, 0, 2));
  cases.push_back(makeCase(12, 5, 12, 16, 0, 0, 3));
  cases.push_back(makeCase(64, 4, 64, 64, 4, 0, 4));
  cases.push_back(makeCase(7, 9, 11, 13, 1, 3, 5));
  cases.push_back(makeCase(1, 1, 1, 1, 0, 0, 6));
  // Empty copies are skipped.
  cases.push_back(makeCase(0, 4, 16, 16, 0, 0, 8));
  cases.push_back(makeCase(16, 0, 16, 16, 0, 0, 9));
  EXPECT_EQ(runKernel(cases), 1);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(cases[i].dst, expected(cases[i])) << "case " << i;
  // Taller than the grid's 1024 blocks: the blocks stride over the rows
  // (alone: every copy of a launch gets the tallest one's blocks, which the
  // emulation runs one by one).
  std::vector<Case> tall = {makeCase(32, 1030, 48, 32, 0, 0, 7)};
  EXPECT_EQ(runKernel(tall), 1);
  EXPECT_EQ(tall[0].dst, expected(tall[0]));
}

TEST(CopyRowsEmulatedTest, ManyCopiesTakeSeveralLaunches) {
  // A dozen caches of 6 layers' keys and values, and more: 70 copies.
  std::vector<Case> cases;
  for (int i = 0; i < 70; ++i)
    cases.push_back(makeCase(16 * (1 + i % 5), 1 + i % 7, 16 * (1 + i % 5),
                             16 * (2 + i % 5), 0, 0, uint32_t(100 + i)));
  EXPECT_EQ(runKernel(cases), 3); // 32 + 32 + 6
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(cases[i].dst, expected(cases[i])) << "case " << i;
}

TEST(CopyRowsEmulatedTest, TheUnitIsWhatEveryAddressAndSizeAllows) {
  alignas(16) static char buffer[256];
  RowCopy aligned{buffer, buffer + 32, 64, 48, 32, 2};
  EXPECT_EQ(copyUnit(aligned), 16);
  RowCopy pitch4 = aligned;
  pitch4.srcPitch = 52;
  EXPECT_EQ(copyUnit(pitch4), 4);
  RowCopy width4 = aligned;
  width4.width = 20;
  EXPECT_EQ(copyUnit(width4), 4);
  RowCopy odd = aligned;
  odd.dst = buffer + 1;
  EXPECT_EQ(copyUnit(odd), 1);
}

} // namespace
