//===- BroadcastEmulatedTest.cpp - the CUDA broadcasting ops, emulated ----===//
//
// The device code of txrt_cuda_binary, _reduce and _argmax
// (runtime/cuda/kernels/BroadcastKernels.cuh) run on the host under
// CudaEmulation.h with the shapes and launches Broadcast.cu computes, and
// compared with the CPU kernels (txrt_binary, txrt_reduce, txrt_argmax) at
// CudaKernelsTest's tolerance: every binary op broadcasting both ways,
// every reduction to several shapes including none and all, an empty
// reduced dimension, argmax with ties over rows wider and narrower than a
// block, a grid smaller than the elements.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/BroadcastKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::broadcast;

namespace {

using Shape = std::vector<int64_t>;

Dims dimsOf(const Shape &a, const Shape &b) {
  Dims d = {};
  d.rank = int32_t(a.size());
  for (size_t r = 0; r < a.size(); ++r) {
    d.a[r] = a[r];
    d.b[r] = b[r];
  }
  return d;
}

int64_t sizeOf(const Shape &dims) {
  int64_t size = 1;
  for (int64_t dim : dims)
    size *= dim;
  return size;
}

class BroadcastEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  void checkBinary(const Shape &aDims, const Shape &bDims,
                   unsigned blocks = 0) {
    const Floats a = randomFloats(sizeOf(aDims), 150),
                 b = randomFloats(sizeOf(bDims), 151, 0.5f, 2.0f);
    Dims d = dimsOf(aDims, bDims);
    const int64_t total = broadcastShape(d);
    for (int32_t op = TXRT_BINARY_ADD; op <= TXRT_BINARY_MIN; ++op) {
      Floats want(total);
      ASSERT_EQ(txrt_binary(cpu_, 20, op, d.rank, aDims.data(), a.data(),
                            bDims.data(), b.data(), want.data()),
                TXRT_OK)
          << txrt_last_error(cpu_);
      Floats got(total, kNaN);
      KernelLaunch elements = elementLaunch(total);
      if (blocks)
        elements.blocks = blocks;
      launch(elements, [&] {
        binaryKernel(op, d, total, a.data(), b.data(), got.data());
      });
      expectNear(got, want, kStrict, "binary op " + std::to_string(op));
    }
  }

  void checkReduce(const Shape &xDims, const Shape &yDims,
                   unsigned blocks = 0) {
    const Floats x = randomFloats(sizeOf(xDims), 152);
    const Dims d = dimsOf(xDims, yDims);
    const ReduceCounts counts = reduceCounts(d);
    for (int32_t op = TXRT_REDUCE_SUM; op <= TXRT_REDUCE_MIN; ++op) {
      Floats want(counts.total);
      ASSERT_EQ(txrt_reduce(cpu_, 21, op, d.rank, xDims.data(), x.data(),
                            yDims.data(), want.data()),
                TXRT_OK)
          << txrt_last_error(cpu_);
      Floats got(counts.total, kNaN);
      KernelLaunch elements = elementLaunch(counts.total);
      if (blocks)
        elements.blocks = blocks;
      launch(elements, [&] {
        reduceKernel(op, d, counts.total, counts.reduced, x.data(), got.data());
      });
      const std::string what = "reduce op " + std::to_string(op) + " to " +
                               std::to_string(counts.total);
      if (counts.reduced == 0) { // the identities, and 0 / 0
        for (size_t i = 0; i < want.size(); ++i)
          EXPECT_TRUE(got[i] == want[i] ||
                      (std::isnan(got[i]) && std::isnan(want[i])))
              << what << "[" << i << "]: " << got[i] << " vs " << want[i];
        continue;
      }
      expectNear(got, want, kStrict, what);
    }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(BroadcastEmulatedTest, BinaryOpsBroadcastLikeTheCpu) {
  checkBinary({2, 1, 5, 4}, {1, 3, 5, 1});
  checkBinary({7}, {1});
  checkBinary({3, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 3});
}

TEST_F(BroadcastEmulatedTest, ReductionsOverSeveralDims) {
  for (const Shape &yDims :
       {Shape{3, 1, 5, 1}, Shape{1, 4, 5, 6}, Shape{1, 1, 1, 1},
        Shape{3, 4, 5, 1}, Shape{3, 4, 5, 6}})
    checkReduce({3, 4, 5, 6}, yDims);
}

TEST_F(BroadcastEmulatedTest, ReducingAnEmptyDimensionGivesTheIdentity) {
  checkReduce({3, 0, 2}, {3, 1, 2});
}

TEST_F(BroadcastEmulatedTest, AGridSmallerThanTheElementsLoops) {
  checkBinary({30, 40}, {30, 1}, 2); // 512 threads for 1200 elements
  checkReduce({30, 40, 3}, {30, 40, 1}, 2);
}

TEST_F(BroadcastEmulatedTest, ArgmaxTakesTheFirstMaximum) {
  for (int64_t cols : {1000, 37, 1}) {
    const int64_t rows = 6;
    Floats x = randomFloats(rows * cols, 153);
    if (cols > 700) {
      // Ties: the first wins, within a thread (10, 266) and across (700).
      x[1 * cols + 10] = x[1 * cols + 266] = x[1 * cols + 700] = 5.0f;
      x[2 * cols + 999] = 9.0f;
    } else if (cols > 1) {
      x[3 * cols + 36] = x[3 * cols + 4] = 7.0f; // threads of two warps
    }
    Ints want(rows);
    ASSERT_EQ(txrt_argmax(cpu_, 22, rows, cols, x.data(), want.data()),
              TXRT_OK);
    Ints got(rows, -1);
    launch(argmaxLaunch(rows),
           [&] { argmaxKernel(cols, x.data(), got.data()); });
    EXPECT_EQ(got, want) << "cols " << cols;
  }
}

} // namespace
