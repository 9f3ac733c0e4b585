//===- RopeEmulatedTest.cpp - the CUDA rotary embedding kernel, emulated --===//
//
// The device code of txrt_cuda_rope / _rope_angles
// (runtime/cuda/kernels/RopeKernels.cuh) run on the host under
// CudaEmulation.h with the inverse frequencies and launch Rope.cu makes,
// and compared with the CPU kernels (txrt_rope, txrt_rope_angles) at
// CudaKernelsTest's tolerance: by position with an offset and by an angle
// table in place, forward and inverse, head dimensions that end a block
// part way, a grid smaller than the pairs, and partial rotations (the
// first `rot` features of each head; the rest copied, or left in place).
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/RopeKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::rope;

namespace {

struct Case {
  int64_t outer, seq, heads, headDim;
  int64_t rot = 0; ///< 0: the whole head
  int64_t rotated() const { return rot ? rot : headDim; }
};

class RopeEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// Rope.cu's launch; `blocks` > 0 launches fewer blocks than the pairs
  /// need (the grid stride).
  void emulated(const Case &c, const float *x, float *y, int64_t posOffset,
                float base, const float *angles, bool inverse,
                unsigned blocks = 0) {
    const int64_t rows = c.outer * c.seq * c.heads;
    const InverseFrequencies inv =
        angles ? InverseFrequencies{} : inverseFrequencies(base, c.rotated());
    KernelLaunch pairs =
        pairLaunch(rows * (c.rotated() / 2),
                   x == y ? 0 : rows * (c.headDim - c.rotated()));
    if (blocks > 0)
      pairs.blocks = blocks;
    launch(pairs, [&] {
      ropeKernel(c.outer, c.seq, c.heads, c.headDim, c.rotated(), x, y,
                 posOffset, inv, angles, inverse);
    });
  }

  void check(const Case &c, unsigned blocks = 0) {
    const int64_t size = c.outer * c.seq * c.heads * c.headDim;
    const Floats x = randomFloats(size, 130),
                 angles =
                     randomFloats(c.seq * c.rotated() / 2, 131, -20.0f, 20.0f);
    for (bool inverse : {false, true}) {
      const std::string what = std::string(inverse ? "inverse " : "") +
                               "head_dim " + std::to_string(c.headDim) + " ";
      Floats y(size), z(size);
      ASSERT_EQ(txrt_rope_partial(cpu_, 17, c.outer, c.seq, c.heads, c.headDim,
                                  c.rotated(), x.data(), y.data(), 1000,
                                  10000.0f, inverse),
                TXRT_OK);
      ASSERT_EQ(txrt_rope_angles_partial(cpu_, 18, c.outer, c.seq, c.heads,
                                         c.headDim, c.rotated(), x.data(),
                                         z.data(), angles.data(), inverse),
                TXRT_OK);
      Floats gotY(size, kNaN), gotZ = x;
      emulated(c, x.data(), gotY.data(), 1000, 10000.0f, nullptr, inverse,
               blocks);
      emulated(c, gotZ.data(), gotZ.data(), 0, 1.0f, angles.data(), inverse,
               blocks); // in place
      expectNear(gotY, y, kStrict, what + "rope");
      expectNear(gotZ, z, kStrict, what + "rope_angles in place");
    }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(RopeEmulatedTest, ByPositionAndByAngleTable) { check({2, 11, 3, 64}); }

TEST_F(RopeEmulatedTest, HeadDimensionsThatEndABlockPartWay) {
  check({1, 5, 7, 2});
  check({3, 4, 2, 74});
}

TEST_F(RopeEmulatedTest, AGridSmallerThanThePairsLoops) {
  check({2, 11, 3, 64}, 2); // 512 threads for 2112 pairs
}

TEST_F(RopeEmulatedTest, PartialRotationsCopyTheRest) {
  check({2, 5, 3, 20, 8});    // more copied features than pairs
  check({1, 7, 2, 80, 32});   // Phi-2's head
  check({2, 3, 3, 20, 2}, 1); // one pair, one block
}

} // namespace
