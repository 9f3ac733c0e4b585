//===- GatherEmulatedTest.cpp - the CUDA gather kernels, emulated ---------===//
//
// The device code of txrt_cuda_gather / _gather_bwd
// (runtime/cuda/kernels/GatherKernels.cuh) run on the host under
// CudaEmulation.h with the launches Gather.cu makes, and compared with the
// CPU kernels (txrt_gather, txrt_gather_bwd): f32 rows bit for bit, bool
// (byte) rows, the scatter-add gradient with repeated and negative indices
// at CudaKernelsTest's tolerance, a grid smaller than the elements; an
// index outside [-n, n) gives zeros, is skipped backward, and is a device
// fault naming it.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/GatherKernels.cuh"

#include "txrt/txrt.h"

#include <cstring>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::gather;

namespace {

struct Shape {
  int64_t outer, n, inner;
};

class GatherEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// Gather.cu's launches; `blocks` > 0 launches fewer blocks than the
  /// elements need (the grid stride).
  template <typename T>
  std::vector<T>
  emulatedGather(const Shape &s, const Ints &ids, const std::vector<T> &src,
                 T poison, txrt_cuda_device_fault &fault, unsigned blocks = 0) {
    const int64_t count = int64_t(ids.size());
    std::vector<T> out(s.outer * count * s.inner, poison);
    fault = {};
    KernelLaunch elements = elementLaunch(int64_t(out.size()));
    if (blocks > 0)
      elements.blocks = blocks;
    launch(elements, [&] {
      gatherKernel(s.outer, s.n, s.inner, ids.data(), count, src.data(),
                   out.data(), &fault);
    });
    return out;
  }

  /// dsrc zeroed (Gather.cu's memset), then the scatter-add launch.
  Floats emulatedBackward(const Shape &s, const Ints &ids, const Floats &dout,
                          txrt_cuda_device_fault &fault, unsigned blocks = 0) {
    const int64_t count = int64_t(ids.size());
    Floats dsrc(s.outer * s.n * s.inner, 0.0f);
    fault = {};
    KernelLaunch elements = elementLaunch(s.outer * count * s.inner);
    if (blocks > 0)
      elements.blocks = blocks;
    launch(elements, [&] {
      gatherBackwardKernel(s.outer, s.n, s.inner, ids.data(), count,
                           dout.data(), dsrc.data(), &fault);
    });
    return dsrc;
  }

  void check(const Shape &s, const Ints &ids, unsigned blocks = 0) {
    const int64_t count = int64_t(ids.size());
    const Floats src = randomFloats(s.outer * s.n * s.inner, 120),
                 dout = randomFloats(s.outer * count * s.inner, 121);
    Floats out(s.outer * count * s.inner), dsrc(s.outer * s.n * s.inner);
    ASSERT_EQ(txrt_gather(cpu_, 14, s.outer, s.n, s.inner, 4, ids.data(), count,
                          src.data(), out.data()),
              TXRT_OK)
        << txrt_last_error(cpu_);
    ASSERT_EQ(txrt_gather_bwd(cpu_, 14, s.outer, s.n, s.inner, ids.data(),
                              count, dout.data(), dsrc.data()),
              TXRT_OK);
    txrt_cuda_device_fault fault;
    const Floats got = emulatedGather(s, ids, src, kNaN, fault, blocks);
    EXPECT_EQ(std::memcmp(got.data(), out.data(), out.size() * sizeof(float)),
              0);
    EXPECT_EQ(fault.kind, kNoFault);
    expectNear(emulatedBackward(s, ids, dout, fault, blocks), dsrc, kStrict,
               "dsrc");
    EXPECT_EQ(fault.kind, kNoFault);

    // Bool (byte) rows.
    std::vector<uint8_t> mask(src.size()), maskOut(out.size());
    for (size_t i = 0; i < mask.size(); ++i)
      mask[i] = uint8_t((i * 7) % 3 == 0);
    ASSERT_EQ(txrt_gather(cpu_, 15, s.outer, s.n, s.inner, 1, ids.data(), count,
                          mask.data(), maskOut.data()),
              TXRT_OK);
    EXPECT_EQ(emulatedGather<uint8_t>(s, ids, mask, 7, fault, blocks), maskOut);
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(GatherEmulatedTest, RowsWithNegativeAndRepeatedIndices) {
  check({3, 9, 5}, {0, 8, -1, 3, 3, -9, 4});
}

TEST_F(GatherEmulatedTest, WideRowsAndOneElementRows) {
  check({2, 6, 300}, {5, -6, 2, 2});
  check({1, 4, 1}, {3, -1, 0});
}

TEST_F(GatherEmulatedTest, AGridSmallerThanTheElementsLoops) {
  check({2, 6, 300}, {5, -6, 2, 2}, 2); // 512 threads for 4800 elements
}

TEST_F(GatherEmulatedTest, AnIndexOutOfRangeIsZerosSkippedAndAFault) {
  const Shape s{2, 9, 3};
  const Floats src = randomFloats(s.outer * s.n * s.inner, 122),
               dout = randomFloats(s.outer * 3 * s.inner, 123);
  const Ints ids = {1, -10, 9}; // one below -n, one at n
  txrt_cuda_device_fault fault;
  const Floats out = emulatedGather(s, ids, src, kNaN, fault);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j) {
      EXPECT_EQ(out[(o * 3 + 0) * s.inner + j],
                src[(o * s.n + 1) * s.inner + j]);
      EXPECT_EQ(out[(o * 3 + 1) * s.inner + j], 0.0f);
      EXPECT_EQ(out[(o * 3 + 2) * s.inner + j], 0.0f);
    }
  EXPECT_EQ(fault.kind, kGatherIndexOutOfRange);
  EXPECT_EQ(fault.index, 1);
  EXPECT_EQ(fault.value, -10);
  EXPECT_EQ(fault.bound, 9);

  const Floats dsrc = emulatedBackward(s, ids, dout, fault);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0; j < s.inner; ++j)
        EXPECT_EQ(dsrc[(o * s.n + i) * s.inner + j],
                  i == 1 ? dout[(o * 3) * s.inner + j] : 0.0f);
  EXPECT_EQ(fault.kind, kGatherIndexOutOfRange);
  EXPECT_EQ(fault.index, 1);
}

} // namespace
