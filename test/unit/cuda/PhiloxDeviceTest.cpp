//===- PhiloxDeviceTest.cpp - the CUDA Philox equals the CPU's, on the host -===//
//
// runtime/cuda/PhiloxDevice.h is compiled here as plain C++ (its host side)
// and compared bit for bit with runtime/lib/Philox.h and with the CPU
// dropout kernel: same key derivation, same words per counter, same keep
// threshold, the same elements dropped. No GPU needed; the device side runs
// the same source (CudaDropoutTest compares it on a GPU).
//
//===----------------------------------------------------------------------===//
#include "Philox.h"
#include "PhiloxDevice.h"

#include "txrt/txrt.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(PhiloxDeviceTest, KeyAndWordsEqualTheCpuGenerator) {
  for (uint64_t seed : {0ull, 1ull, 0x123456789ull, ~0ull}) {
    for (int64_t step : {int64_t(0), int64_t(1), int64_t(42), int64_t(-1)}) {
      for (int64_t site : {int64_t(0), int64_t(17), int64_t(1) << 40}) {
        txrt::PhiloxKey cpu = txrt::philoxKey(seed, step, site);
        txrt::cuda::PhiloxStream gpu =
            txrt::cuda::philoxStream(seed, step, site);
        ASSERT_EQ(cpu.k0, gpu.k0);
        ASSERT_EQ(cpu.k1, gpu.k1);
        ASSERT_EQ(cpu.c2, gpu.c2);
        ASSERT_EQ(cpu.c3, gpu.c3);
        for (uint64_t block : {0ull, 1ull, 15ull, 0xFFFFFFFFull,
                               0x100000000ull, 0xDEADBEEFCAFEull}) {
          uint32_t a[4], b[4];
          txrt::philox4x32(cpu, block, a);
          txrt::cuda::philoxWords(gpu, block, b);
          for (int w = 0; w < 4; ++w)
            ASSERT_EQ(a[w], b[w]) << "block " << block << " word " << w;
        }
      }
    }
  }
}

TEST(PhiloxDeviceTest, ThresholdEqualsTheCpuKernels) {
  for (float p : {0.0f, 1e-7f, 0.1f, 0.25f, 0.5f, 0.9f, 0.999999f})
    EXPECT_EQ(txrt::dropoutThreshold(p), txrt::cuda::keepThreshold(p)) << p;
}

TEST(PhiloxDeviceTest, DropsTheElementsTheCpuKernelDrops) {
  txrt_context *ctx = nullptr;
  ASSERT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
  for (int64_t n : {1, 5, 64, 65, 4099}) {
    for (float p : {0.1f, 0.5f}) {
      const uint64_t seed = 77;
      const int64_t step = 3, site = 12;
      std::vector<float> x(n, 1.0f), y(n);
      ASSERT_EQ(txrt_dropout_fwd(ctx, site, n, p, seed, step, x.data(),
                                 y.data()),
                TXRT_OK);
      txrt::cuda::PhiloxStream key = txrt::cuda::philoxStream(seed, step, site);
      uint32_t threshold = txrt::cuda::keepThreshold(p);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(y[i] != 0.0f,
                  txrt::cuda::keepsElement(key, uint64_t(i), threshold))
            << "element " << i << " of " << n << ", p " << p;
    }
  }
  txrt_context_destroy(ctx);
}

} // namespace
