//===- DropoutEmulatedTest.cpp - the CUDA dropout kernel, emulated --------===//
//
// The device code of txrt_cuda_dropout_{fwd,bwd}
// (runtime/cuda/kernels/DropoutKernels.cuh) run on the host under
// CudaEmulation.h with the key, threshold, offset and launch Dropout.cu
// computes, and compared with the CPU kernels (txrt_dropout_*) bit for bit:
// sizes around Philox's 4-element counters and a block's threads, pieces
// of a batch starting part way into a counter, and a grid smaller than the
// counters.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/DropoutKernels.cuh"

#include "txrt/txrt.h"

#include <cstring>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::dropout;

namespace {

const uint64_t kSeed = 0x123456789ull;

class DropoutEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// Dropout.cu's launch for p > 0: element 0 is element `offset` of the
  /// batch's stream. `blocks` > 0 launches fewer blocks than the counters
  /// need (the grid stride).
  Floats emulated(const Floats &x, float p, uint64_t seed, int64_t step,
                  int64_t site, int64_t offset = 0, unsigned blocks = 0) {
    const int64_t n = int64_t(x.size());
    Floats y(n, kNaN);
    KernelLaunch counters = counterLaunch(n, offset);
    if (blocks > 0)
      counters.blocks = blocks;
    launch(counters, [&] {
      dropoutKernel(n, offset, hostPhilox(seed, step, site), keepThreshold(p),
                    keepScaleOf(p), x.data(), y.data());
    });
    return y;
  }

  /// The same launch as a captured step makes it: the key derived in the
  /// kernel from the training state `state` points at.
  Floats emulatedFromState(const Floats &x, float p,
                           const DeviceTrainState *state, int64_t site) {
    const int64_t n = int64_t(x.size());
    Floats y(n, kNaN);
    launch(counterLaunch(n, 0), [&] {
      dropoutKernel(n, 0, PhiloxSource{PhiloxStream{}, state, site},
                    keepThreshold(p), keepScaleOf(p), x.data(), y.data());
    });
    return y;
  }

  static void expectSameBits(const Floats &got, const Floats &want,
                             const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)),
              0)
        << what;
  }

  txrt_context *cpu_ = nullptr;
};

// A captured step's dropout reads the step and seed from the device's
// training state: one launch (the graph's node, its arguments fixed)
// replayed after the state changed draws the new step's mask, the one the
// host-keyed launch and the CPU kernel draw for that step.
TEST_F(DropoutEmulatedTest, KeyFromTheDeviceStateFollowsEachReplaysStep) {
  const int64_t n = 1029;
  const Floats x = randomFloats(n, 7, 0.5f, 1.5f);
  DeviceTrainState state{kSeed, 5};
  for (int64_t step : {5, 6, 11}) {
    state.step = step;
    const Floats replay = emulatedFromState(x, 0.3f, &state, 23);
    expectSameBits(replay, emulated(x, 0.3f, kSeed, step, 23),
                   "step " + std::to_string(step));
    Floats cpu(n);
    ASSERT_EQ(txrt_dropout_fwd(cpu_, 23, n, 0.3f, kSeed, step, x.data(),
                               cpu.data()),
              TXRT_OK);
    expectSameBits(replay, cpu, "cpu, step " + std::to_string(step));
  }
  state.seed = kSeed + 1;
  expectSameBits(emulatedFromState(x, 0.3f, &state, 23),
                 emulated(x, 0.3f, kSeed + 1, 11, 23), "new seed");
}

TEST_F(DropoutEmulatedTest, SameMaskAndValuesAsCpuBitForBit) {
  for (int64_t n : {1, 3, 63, 64, 65, 1000, 1029}) {
    for (float p : {0.1f, 0.5f}) {
      const Floats x = randomFloats(n, uint32_t(n), 0.5f, 1.5f);
      Floats y(n), dx(n);
      ASSERT_EQ(txrt_dropout_fwd(cpu_, 17, n, p, kSeed, 42, x.data(), y.data()),
                TXRT_OK);
      ASSERT_EQ(
          txrt_dropout_bwd(cpu_, 17, n, p, kSeed, 42, x.data(), dx.data()),
          TXRT_OK);
      const std::string what =
          "n " + std::to_string(n) + " p " + std::to_string(p);
      expectSameBits(emulated(x, p, kSeed, 42, 17), y, "forward " + what);
      // Backward regenerates the forward site's mask: the same launch.
      expectSameBits(emulated(x, p, kSeed, 42, 17), dx, "backward " + what);
    }
  }
}

TEST_F(DropoutEmulatedTest, APieceOfTheBatchDrawsItsRowsMasks) {
  // Rows [first, first + count) of a batch of 7 rows of `width` elements
  // drop what the whole batch drops in those rows, as on the CPU; widths
  // that do and do not fill Philox's 4-word counters.
  for (int64_t width : {1, 3, 4, 37}) {
    const int64_t rows = 7, n = rows * width;
    const Floats x = randomFloats(size_t(n), uint32_t(width), 0.5f, 1.5f);
    Floats whole(n);
    ASSERT_EQ(txrt_dropout_fwd(cpu_, 5, n, 0.3f, 99, 3, x.data(), whole.data()),
              TXRT_OK);
    for (int64_t first : {0, 1, 2, 5}) {
      const int64_t count = std::min<int64_t>(rows - first, 2);
      const Floats piece(x.begin() + first * width,
                         x.begin() + (first + count) * width);
      // txrt_cuda_context_set_batch_rows(first, count): dropoutOffset.
      const Floats got = emulated(piece, 0.3f, 99, 3, 5, first * width);
      expectSameBits(got,
                     Floats(whole.begin() + first * width,
                            whole.begin() + (first + count) * width),
                     "width " + std::to_string(width) + " rows " +
                         std::to_string(first));
    }
  }
}

TEST_F(DropoutEmulatedTest, AGridSmallerThanTheCountersLoops) {
  // One block of 256 threads for the 751 counters of 3000 elements from
  // offset 3: three passes.
  const int64_t n = 3000, offset = 3;
  const Floats x = randomFloats(n + offset, 7, 0.5f, 1.5f);
  Floats whole(n + offset);
  ASSERT_EQ(
      txrt_dropout_fwd(cpu_, 9, n + offset, 0.2f, 5, 1, x.data(), whole.data()),
      TXRT_OK);
  const Floats got =
      emulated(Floats(x.begin() + offset, x.end()), 0.2f, 5, 1, 9, offset, 1);
  expectSameBits(got, Floats(whole.begin() + offset, whole.end()), "one block");
}

} // namespace
