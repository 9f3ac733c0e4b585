//===- EmaEmulatedTest.cpp - train --ema's device update, emulated --------===//
//
// The device code of Ema.cu (runtime/cuda/kernels/EmaKernels.cuh, what a
// --target=cuda executable runs after every train step with --ema) run on
// the host under CudaEmulation.h with its launch, against the driver's
// host update (runtime/driver/loop/Ema.cpp's updateAverage) bit for bit:
// odd sizes, several decays, a grid smaller than the data (the threads
// loop), and inputs where a fused multiply-add would round otherwise.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/EmaKernels.cuh"

#include "loop/Ema.h"

#include <cmath>
#include <cstring>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::ema;

namespace {

/// The kernel over `average` with `launch` (its own when blocks is 0).
void runKernel(Floats &average, const Floats &params, float decay,
               unsigned blocks) {
  const int64_t n = int64_t(average.size());
  KernelLaunch elements = updateAverageLaunch(n);
  if (blocks)
    elements.blocks = blocks;
  launch(elements,
         [&] { updateAverageKernel(average.data(), params.data(), n, decay); });
}

TEST(EmaEmulatedTest, SameBitsAsTheHostUpdate) {
  for (int64_t n : {1, 37, 3001})
    for (unsigned blocks : {0u, 2u}) // the launch, and a grid looping
      for (float decay : {0.5f, 0.9f, 0.999f, 0.9999f}) {
        const Floats params = randomFloats(n, uint32_t(180 + n));
        const Floats start = randomFloats(n, uint32_t(181 + n), -3.0f, 3.0f);
        Floats want = start, got = start;
        // Three updates in a row, as three train steps make.
        for (int update = 0; update < 3; ++update) {
          txrt::driver::updateAverage(want.data(), params.data(), n, decay);
          runKernel(got, params, decay, blocks);
        }
        EXPECT_EQ(std::memcmp(got.data(), want.data(), size_t(n) * 4), 0)
            << "n " << n << ", blocks " << blocks << ", decay " << decay;
      }
}

TEST(EmaEmulatedTest, ProductsAreRoundedBeforeTheSum) {
  // Inputs where fma(decay, average, (1 - decay) * param) differs from the
  // two rounded products' sum: a kernel that fused them would differ here.
  const float decay = 0.9f, take = 1.0f - decay;
  const Floats candidates = randomFloats(20000, 190, -2.0f, 2.0f);
  Floats average, params;
  for (size_t i = 0; i + 1 < candidates.size() && average.size() < 300;
       i += 2) {
    const float e = candidates[i], p = candidates[i + 1];
    volatile float kept = decay * e, taken = take * p;
    if (std::fma(decay, e, taken) != kept + taken) {
      average.push_back(e);
      params.push_back(p);
    }
  }
  ASSERT_EQ(average.size(), 300u);
  Floats want = average;
  txrt::driver::updateAverage(want.data(), params.data(), int64_t(want.size()),
                              decay);
  runKernel(average, params, decay, 0);
  EXPECT_EQ(std::memcmp(average.data(), want.data(), want.size() * 4), 0);
}

} // namespace
