//===- EmulatedTestUtil.h - the emulated tests' helpers ---------*- C++ -*-===//
//
// What the tests of runtime/cuda/kernels/*Kernels.cuh under CudaEmulation.h
// share: random inputs, NaN poison, a launch with a kernel's own geometry
// (KernelLaunch), and the comparison CudaTestUtil.h's expectNear makes on a
// GPU, so an emulated test and its GPU test accept the same results.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_TEST_CUDA_EMULATED_EMULATEDTESTUTIL_H
#define TXRT_TEST_CUDA_EMULATED_EMULATEDTESTUTIL_H

#include "CudaEmulation.h"

#include "TestUtil.h"
#include "kernels/KernelLaunch.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace emu_test {

using Floats = std::vector<float>;
using Ints = std::vector<int32_t>;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
/// CudaKernelsTest's tolerance in strict fp32.
constexpr double kStrict = 1e-5;

using txrt_test::randomFloats; // test/unit/runtime/TestUtil.h

/// Runs kernel() with `launch`'s blocks and threads (1-D).
template <typename Kernel>
void launch(const txrt::cuda::KernelLaunch &launch, Kernel &&kernel) {
  emu::launch({launch.blocks, 1, 1}, {launch.threads, 1, 1}, 0, kernel);
}

/// The emulated result agrees with the CPU kernel's to `rel` as
/// CudaTestUtil.h's expectNear defines it: ||got - cpu|| / ||cpu|| <= rel,
/// and no element off by more than 10 rel of max(|cpu_i|, 1% of the
/// tensor's largest |cpu|). A NaN anywhere fails.
inline void expectNear(const Floats &got, const Floats &cpu, double rel,
                       const std::string &what) {
  ASSERT_EQ(got.size(), cpu.size()) << what;
  double scale = 0.0, diffNorm = 0.0, refNorm = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    scale = std::max(scale, double(std::fabs(cpu[i])));
    const double diff = double(got[i]) - double(cpu[i]);
    diffNorm += diff * diff;
    refNorm += double(cpu[i]) * double(cpu[i]);
  }
  const double normError =
      refNorm > 0.0 ? std::sqrt(diffNorm / refNorm) : std::sqrt(diffNorm);
  EXPECT_TRUE(normError <= rel)
      << what << ": ||emulated - cpu|| / ||cpu|| = " << normError << " > "
      << rel;
  const double floor = std::max(scale * 1e-2, 1e-30);
  int reported = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double bound =
        10.0 * rel * std::max(double(std::fabs(cpu[i])), floor);
    const double diff = std::fabs(double(got[i]) - double(cpu[i]));
    if (!(diff <= bound) && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: emulated " << got[i] << " cpu "
                    << cpu[i] << " (|diff| " << diff << " > " << bound << ")";
  }
}

} // namespace emu_test

#endif // TXRT_TEST_CUDA_EMULATED_EMULATEDTESTUTIL_H
