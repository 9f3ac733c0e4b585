//===- EmbeddingEmulatedTest.cpp - the CUDA embedding kernels, emulated ---===//
//
// The device code of txrt_cuda_embedding_{fwd,bwd}
// (runtime/cuda/kernels/EmbeddingKernels.cuh) run on the host under
// CudaEmulation.h with the launches Embedding.cu makes, and compared with
// the CPU kernels (txrt_embedding_*) at CudaKernelsTest's tolerance: the
// gather with and without positions and scale, the scatter-add writing and
// accumulating with repeated ids and a padding id, widths that end a block
// part way, a grid smaller than the elements; an id out of range gives a
// zero row, is skipped backward, and is a device fault naming it.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/EmbeddingKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::embedding;

namespace {

struct Case {
  const char *name;
  int64_t vocab, dim, seqLen, n;
  bool positions;
  float scale;
  int32_t paddingIdx;
};

class EmbeddingEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// Embedding.cu's forward launch; `blocks` > 0 launches fewer blocks
  /// than the elements need (the grid stride, as past gridFor's cap).
  Floats emulatedForward(const Case &c, const Ints &ids, const Floats &table,
                         const Floats &pos, txrt_cuda_device_fault &fault,
                         unsigned blocks = 0) {
    Floats out(c.n * c.dim, kNaN);
    fault = {};
    KernelLaunch elements = elementLaunch(c.n, c.dim);
    if (blocks > 0)
      elements.blocks = blocks;
    launch(elements, [&] {
      gatherKernel(c.n, c.vocab, c.dim, ids.data(), table.data(), c.scale,
                   c.positions ? pos.data() : nullptr, c.seqLen, out.data(),
                   &fault);
    });
    return out;
  }

  /// Embedding.cu's backward: dtable zeroed unless accumulating, then the
  /// scatter-add launch.
  Floats emulatedBackward(const Case &c, const Ints &ids, const Floats &dout,
                          Floats dtable, bool accumulate,
                          txrt_cuda_device_fault &fault, unsigned blocks = 0) {
    if (!accumulate)
      std::fill(dtable.begin(), dtable.end(), 0.0f);
    fault = {};
    KernelLaunch elements = elementLaunch(c.n, c.dim);
    if (blocks > 0)
      elements.blocks = blocks;
    launch(elements, [&] {
      scatterAddKernel(c.n, c.vocab, c.dim, ids.data(), dout.data(), c.scale,
                       c.paddingIdx < 0 ? -1 : c.paddingIdx, dtable.data(),
                       &fault);
    });
    return dtable;
  }

  void check(const Case &c, unsigned blocks = 0) {
    const Floats table = randomFloats(c.vocab * c.dim, 50),
                 pos = randomFloats(c.seqLen * c.dim, 51),
                 dout = randomFloats(c.n * c.dim, 52),
                 dtable0 = randomFloats(c.vocab * c.dim, 53);
    Ints ids(c.n);
    for (int64_t i = 0; i < c.n; ++i)
      ids[i] = int32_t((i * 7) % std::min<int64_t>(c.vocab, 11)); // repeats
    const std::string name = c.name;
    Floats want(c.n * c.dim);
    ASSERT_EQ(txrt_embedding_fwd(cpu_, 7, c.n, c.vocab, c.dim, ids.data(),
                                 table.data(), c.scale,
                                 c.positions ? pos.data() : nullptr, c.seqLen,
                                 want.data()),
              TXRT_OK)
        << txrt_last_error(cpu_);
    txrt_cuda_device_fault fault;
    expectNear(emulatedForward(c, ids, table, pos, fault, blocks), want,
               kStrict, name + " out");
    EXPECT_EQ(fault.kind, kNoFault) << name;
    for (bool accumulate : {false, true}) {
      Floats dtable = dtable0;
      ASSERT_EQ(txrt_embedding_bwd(cpu_, 7, c.n, c.vocab, c.dim, ids.data(),
                                   dout.data(), c.scale, c.paddingIdx,
                                   dtable.data(), accumulate),
                TXRT_OK)
          << txrt_last_error(cpu_);
      expectNear(
          emulatedBackward(c, ids, dout,
                           accumulate ? dtable0 : Floats(dtable0.size(), kNaN),
                           accumulate, fault, blocks),
          dtable, kStrict,
          name + (accumulate ? " dtable (accumulate)" : " dtable"));
      EXPECT_EQ(fault.kind, kNoFault) << name;
    }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(EmbeddingEmulatedTest, GatherWithPositionsAndScatterAdd) {
  check({"vocab 50 dim 64", 50, 64, 7, 21, true, 8.0f, 0});
}

TEST_F(EmbeddingEmulatedTest, WidthsNotAWholeWarpWithoutPositions) {
  check({"dim 37", 13, 37, 1, 10, false, 1.0f, 5});
  check({"dim 1, no padding", 11, 1, 3, 9, true, 0.5f, -1});
}

TEST_F(EmbeddingEmulatedTest, AGridSmallerThanTheElementsLoops) {
  // 2 blocks of 256 threads for 21 x 64 elements: three passes.
  check({"grid stride", 50, 64, 7, 21, true, 8.0f, 0}, 2);
}

TEST_F(EmbeddingEmulatedTest, AnIdOutOfRangeIsAZeroRowSkippedAndAFault) {
  const Case c{"bad id", 10, 8, 1, 4, false, 1.0f, -1};
  const Floats table = randomFloats(c.vocab * c.dim, 54),
               dout = randomFloats(c.n * c.dim, 55);
  const Ints ids = {1, 2, 10, -1}; // one past the table, and below it
  txrt_cuda_device_fault fault;
  const Floats out = emulatedForward(c, ids, table, {}, fault);
  for (int64_t d = 0; d < c.dim; ++d) {
    EXPECT_EQ(out[2 * c.dim + d], 0.0f) << d;
    EXPECT_EQ(out[3 * c.dim + d], 0.0f) << d;
    EXPECT_EQ(out[1 * c.dim + d], table[2 * c.dim + d]) << d;
  }
  // The first bad row's element 0 reports it (blocks run in order).
  EXPECT_EQ(fault.kind, kEmbeddingIdOutOfRange);
  EXPECT_EQ(fault.index, 2);
  EXPECT_EQ(fault.value, 10);
  EXPECT_EQ(fault.bound, 10);

  const Floats dtable = emulatedBackward(
      c, ids, dout, Floats(c.vocab * c.dim, kNaN), false, fault);
  for (int64_t v = 0; v < c.vocab; ++v)
    for (int64_t d = 0; d < c.dim; ++d)
      EXPECT_EQ(dtable[v * c.dim + d], v == 1   ? dout[d]
                                       : v == 2 ? dout[c.dim + d]
                                                : 0.0f)
          << v << ", " << d;
  EXPECT_EQ(fault.kind, kEmbeddingIdOutOfRange);
  EXPECT_EQ(fault.index, 2);
}

} // namespace
