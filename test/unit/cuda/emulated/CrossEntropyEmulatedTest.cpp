//===- CrossEntropyEmulatedTest.cpp - the CUDA cross-entropy, emulated ----===//
//
// The device code of txrt_cuda_cross_entropy_{fwd,bwd}
// (runtime/cuda/kernels/CrossEntropyKernels.cuh) run on the host under
// CudaEmulation.h with the launches CrossEntropy.cu makes, and compared
// with the CPU kernels (txrt_cross_entropy_*) at CudaKernelsTest's
// tolerance: the loss, lse, row losses and count, and dlogits from a saved
// and a recomputed lse, for both reductions, with and without label
// smoothing and ignored rows; a target out of range leaves a NaN row loss
// and a device fault naming it.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/CrossEntropyKernels.cuh"

#include "txrt/txrt.h"

#include <cmath>
#include <limits>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::crossentropy;

namespace {

struct Case {
  const char *name;
  int64_t n, classes;
  int32_t ignore;
  std::vector<int64_t> ignoredRows;
};

struct Forward {
  float loss = 0.0f;
  int64_t count = 0;
  Floats lse, rowLoss;
};

class CrossEntropyEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// CrossEntropy.cu's forward launches (out_row_loss given).
  Forward emulatedForward(int64_t n, int64_t classes, const Floats &logits,
                          const Ints &targets, int32_t ignore, float smoothing,
                          int32_t reduction, txrt_cuda_device_fault &fault) {
    Forward out{kNaN, -1, Floats(n, kNaN), Floats(n, kNaN)};
    fault = {};
    if (n > 0)
      launch(rowLaunch(n), [&] {
        rowLossKernel(classes, logits.data(), targets.data(), ignore, smoothing,
                      out.lse.data(), out.rowLoss.data(), &fault);
      });
    launch(totalLaunch(), [&] {
      totalLossKernel(n, out.rowLoss.data(), targets.data(), ignore,
                      reduction == TXRT_LOSS_MEAN, &out.loss, &out.count);
    });
    return out;
  }

  /// CrossEntropy.cu's backward launches: the count (for the mean) in the
  /// workspace, then the gradient.
  Floats emulatedBackward(int64_t n, int64_t classes, const Floats &logits,
                          const Ints &targets, const float *lse, int32_t ignore,
                          float smoothing, int32_t reduction, float dloss) {
    Floats dlogits(n * classes, kNaN);
    float workspace = kNaN, *count = nullptr;
    if (reduction == TXRT_LOSS_MEAN) {
      count = &workspace;
      launch(totalLaunch(),
             [&] { countKernel(n, targets.data(), ignore, count); });
    }
    launch(rowLaunch(n), [&] {
      gradientKernel(classes, logits.data(), targets.data(), lse, ignore,
                     smoothing, &dloss, count, dlogits.data());
    });
    return dlogits;
  }

  void check(const Case &c) {
    Floats logits = randomFloats(c.n * c.classes, 40, -4.0f, 4.0f);
    Ints targets(c.n);
    for (int64_t i = 0; i < c.n; ++i)
      targets[i] = int32_t((i * 37 + 5) % c.classes);
    for (int64_t row : c.ignoredRows)
      targets[row] = c.ignore;
    for (int32_t reduction : {TXRT_LOSS_MEAN, TXRT_LOSS_SUM})
      for (float smoothing : {0.0f, 0.1f}) {
        const std::string what = std::string(c.name) +
                                 (reduction ? " sum" : " mean") +
                                 " smoothing " + std::to_string(smoothing);
        Forward want{0.0f, 0, Floats(c.n), Floats(c.n)};
        ASSERT_EQ(txrt_cross_entropy_fwd(cpu_, 6, c.n, c.classes, logits.data(),
                                         targets.data(), c.ignore, smoothing,
                                         reduction, &want.loss, want.lse.data(),
                                         want.rowLoss.data(), &want.count),
                  TXRT_OK)
            << txrt_last_error(cpu_);
        txrt_cuda_device_fault fault;
        const Forward got =
            emulatedForward(c.n, c.classes, logits, targets, c.ignore,
                            smoothing, reduction, fault);
        expectNear({got.loss}, {want.loss}, kStrict, what + " loss");
        expectNear(got.lse, want.lse, kStrict, what + " lse");
        expectNear(got.rowLoss, want.rowLoss, kStrict, what + " row loss");
        EXPECT_EQ(got.count, want.count) << what;
        EXPECT_EQ(fault.kind, kNoFault) << what;

        const float dloss = 0.75f;
        for (bool saved : {true, false}) {
          Floats dlogits(c.n * c.classes);
          const float *lse = saved ? want.lse.data() : nullptr;
          ASSERT_EQ(txrt_cross_entropy_bwd(cpu_, 6, c.n, c.classes,
                                           logits.data(), targets.data(), lse,
                                           c.ignore, smoothing, reduction,
                                           &dloss, dlogits.data()),
                    TXRT_OK)
              << txrt_last_error(cpu_);
          expectNear(emulatedBackward(c.n, c.classes, logits, targets, lse,
                                      c.ignore, smoothing, reduction, dloss),
                     dlogits, kStrict,
                     what + " dlogits" + (saved ? " (saved lse)" : ""));
        }
      }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(CrossEntropyEmulatedTest, SmoothingIgnoreIndexBothReductions) {
  check({"29x1000", 29, 1000, 0, {3, 11}});
}

TEST_F(CrossEntropyEmulatedTest, ClassesNotAWholeWarpAndIgnoreIndexNegative) {
  check({"5x37", 5, 37, -100, {0, 4}});
  check({"4x3", 4, 3, -100, {2}});
}

TEST_F(CrossEntropyEmulatedTest, EveryRowIgnoredGivesZeroLossAndGradient) {
  check({"all ignored", 3, 10, -100, {0, 1, 2}});
}

TEST_F(CrossEntropyEmulatedTest, TotalsLoopOverMoreRowsThanTheirThreads) {
  // The one-block sum and count over 2500 rows: 1024 threads, three
  // passes. The row losses are given (a block a row is slow emulated).
  const int64_t n = 2500;
  const Floats rowLoss = randomFloats(n, 56, 0.0f, 5.0f);
  Ints targets(n, 1);
  double sum = 0.0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 7 == 3)
      targets[i] = -100;
    sum += rowLoss[i];
    count += targets[i] != -100;
  }
  for (bool mean : {true, false}) {
    float loss = kNaN;
    int64_t gotCount = -1;
    launch(totalLaunch(), [&] {
      totalLossKernel(n, rowLoss.data(), targets.data(), -100, mean, &loss,
                      &gotCount);
    });
    EXPECT_EQ(gotCount, count);
    expectNear({loss}, {float(mean ? sum / double(count) : sum)}, kStrict,
               mean ? "mean loss" : "summed loss");
  }
  float countAsFloat = kNaN;
  launch(totalLaunch(),
         [&] { countKernel(n, targets.data(), -100, &countAsFloat); });
  EXPECT_EQ(countAsFloat, float(count));
}

// The max and the log sum kept apart, as the CPU kernel (txrt.h): at
// logits of 1e8 max + log rounded the log away (loss 0, not log 2), and a
// -inf logit without smoothing gave NaN (0 times the row's -inf sum).
TEST_F(CrossEntropyEmulatedTest, LargeAndMinusInfinityLogits) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float big : {1e7f, 1e8f, 2e38f}) {
    const Floats logits = {big, big, 0.0f, -inf};
    const Ints targets = {0};
    txrt_cuda_device_fault fault;
    const Forward got = emulatedForward(1, 4, logits, targets, -100, 0.0f,
                                        TXRT_LOSS_MEAN, fault);
    expectNear({got.loss}, {float(std::log(2.0))}, kStrict, "loss");
    for (const float *lse : {got.lse.data(), (const float *)nullptr})
      expectNear(emulatedBackward(1, 4, logits, targets, lse, -100, 0.0f,
                                  TXRT_LOSS_MEAN, 1.0f),
                 {-0.5f, 0.5f, 0.0f, 0.0f}, kStrict, "dlogits");
  }
}

TEST_F(CrossEntropyEmulatedTest, ATargetOutOfRangeIsAFault) {
  const Floats logits = randomFloats(3 * 5, 55);
  const Ints targets = {4, -3, 7};
  txrt_cuda_device_fault fault;
  const Forward got =
      emulatedForward(3, 5, logits, targets, -100, 0.0f, TXRT_LOSS_MEAN, fault);
  EXPECT_FALSE(std::isnan(got.rowLoss[0]));
  EXPECT_TRUE(std::isnan(got.rowLoss[1]));
  EXPECT_TRUE(std::isnan(got.rowLoss[2]));
  // The first row's block to find one reports it (blocks run in order).
  EXPECT_EQ(fault.kind, kCrossEntropyTargetOutOfRange);
  EXPECT_EQ(fault.index, 1);
  EXPECT_EQ(fault.value, -3);
  EXPECT_EQ(fault.bound, 5);
}

} // namespace
