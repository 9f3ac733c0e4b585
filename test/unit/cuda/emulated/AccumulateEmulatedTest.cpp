//===- AccumulateEmulatedTest.cpp - the gradient exchange's kernels -------===//
//
// The device code of Accumulate.cu (runtime/cuda/kernels/
// AccumulateKernels.cuh, what runtime/cuda/GradientExchange.cpp enqueues)
// run on the host under CudaEmulation.h with its launches. The CPU's
// counterparts are internal to runtime/lib/GradientExchange.cpp, so the
// references are their formulas, written here as the CPU writes them: a
// scaled gradient added with the product rounded first (bit for bit), the
// sum of squares in double, and min(1, clip / (sqrt(squares) + 1e-6)).
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/AccumulateKernels.cuh"

#include <cstring>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::accumulate;

namespace {

/// runtime/lib/GradientExchange.cpp's accumulateScaled, contraction off.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void accumulateScaledReference(float *sum, const float *gradient,
                               float factor, int64_t n) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  for (int64_t i = 0; i < n; ++i)
    sum[i] += factor * gradient[i];
}

TEST(AccumulateEmulatedTest, ScaledGradientAddsTheRoundedProduct) {
  for (unsigned blocks : {0u, 2u}) { // the launch, and a grid looping
    const int64_t n = 3001;
    const Floats gradient = randomFloats(n, 170), sum0 = randomFloats(n, 171);
    const float factor = 0.3f;
    Floats want = sum0, got = sum0;
    accumulateScaledReference(want.data(), gradient.data(), factor, n);
    KernelLaunch elements = accumulateLaunch(n);
    if (blocks)
      elements.blocks = blocks;
    launch(elements, [&] {
      accumulateScaledKernel(got.data(), gradient.data(), factor, n);
    });
    EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0)
        << "blocks " << blocks;
  }
}

TEST(AccumulateEmulatedTest, SumOfSquaresAndTheClipFactor) {
  // Two buckets' sums into one double, as GradientExchange.cpp enqueues
  // them, then the factor.
  const Floats first = randomFloats(2500, 172), second = randomFloats(7, 173);
  double want = 0.0;
  for (const Floats *x : {&first, &second})
    for (float value : *x)
      want += double(value) * double(value);
  double squares = 0.0;
  for (const Floats *x : {&first, &second})
    launch(sumSquaresLaunch(),
           [&] { sumSquaresKernel(x->data(), int64_t(x->size()), &squares); });
  EXPECT_NEAR(squares, want, 1e-12 * want);
  for (float clip : {1.0f, 1e3f}) {
    float factor = kNaN;
    // One thread on a GPU; the emulation runs whole warps, and every
    // thread writes the same value.
    launch(KernelLaunch{1, 32},
           [&] { clipFactorKernel(&squares, clip, &factor); });
    EXPECT_EQ(factor, std::min(1.0f, clip / (float(std::sqrt(want)) + 1e-6f)))
        << "clip " << clip;
  }
}

} // namespace
