//===- SoftmaxEmulatedTest.cpp - the CUDA softmax kernels, emulated -------===//
//
// The device code of txrt_cuda_softmax_{fwd,bwd} and txrt_cuda_sum_squares
// (runtime/cuda/kernels/SoftmaxKernels.cuh) run on the host under
// CudaEmulation.h with the launches Softmax.cu makes, and compared with the
// CPU kernels (txrt_softmax_*, txrt_sum_squares) at CudaKernelsTest's
// tolerance: softmax and log-softmax, forward and backward, rows wider and
// narrower than a block, and a sum of squares over more elements than its
// block has threads added to an accumulator.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/SoftmaxKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::softmax;

namespace {

class SoftmaxEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  void check(int64_t rows, int64_t cols) {
    const Floats x = randomFloats(rows * cols, 80, -5.0f, 5.0f),
                 dy = randomFloats(rows * cols, 81);
    for (int32_t log : {0, 1}) {
      const std::string what = (log ? "log_softmax " : "softmax ") +
                               std::to_string(rows) + "x" +
                               std::to_string(cols) + " ";
      Floats y(rows * cols), dx(rows * cols);
      ASSERT_EQ(txrt_softmax_fwd(cpu_, 9, rows, cols, x.data(), y.data(), log),
                TXRT_OK);
      ASSERT_EQ(txrt_softmax_bwd(cpu_, 9, rows, cols, y.data(), dy.data(),
                                 dx.data(), log),
                TXRT_OK);
      Floats gotY(rows * cols, kNaN), gotDx(rows * cols, kNaN);
      launch(rowLaunch(rows),
             [&] { softmaxForward(cols, x.data(), gotY.data(), log); });
      expectNear(gotY, y, kStrict, what + "y");
      // The backward reads the CPU's y, as each direction is compared on
      // its own.
      launch(rowLaunch(rows), [&] {
        softmaxBackward(cols, y.data(), dy.data(), gotDx.data(), log);
      });
      expectNear(gotDx, dx, kStrict, what + "dx");
    }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(SoftmaxEmulatedTest, RowsWiderThanABlock) { check(17, 1000); }

TEST_F(SoftmaxEmulatedTest, RowsNarrowerThanABlockAndNotWholeWarps) {
  check(5, 37);
  check(3, 2); // not 1: there the exact gradient is 0, both give rounding
}

TEST_F(SoftmaxEmulatedTest, SumSquaresAccumulates) {
  for (int64_t n : {1, 1000, 3001}) {
    const Floats x = randomFloats(n, 82);
    float want = 0.5f, got = 0.5f;
    ASSERT_EQ(txrt_sum_squares(cpu_, 10, n, x.data(), &want), TXRT_OK);
    launch(sumSquaresLaunch(), [&] { sumSquaresKernel(n, x.data(), &got); });
    expectNear({got}, {want}, kStrict,
               "sum of squares of " + std::to_string(n));
  }
}

} // namespace
