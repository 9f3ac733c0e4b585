//===- DenormalsTest.cpp - the TXRT_DENORMALS_* modes ---------------------===//
//
// Default: IEEE arithmetic, Adam stores moments below FLT_MIN as 0. KEEP:
// IEEE everywhere. FLUSH_ALL: FTZ + DAZ on the worker threads and, for the
// duration of each call, on the calling thread (restored after).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <omp.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <string>
#include <vector>

using namespace txrt_test;

namespace {

constexpr uint32_t kFtzDaz = 0x8040u;

class DenormalsTest : public RuntimeTest {
protected:
  void TearDown() override {
    txrt_context_set_option(ctx_, TXRT_OPTION_DENORMALS,
                            TXRT_DENORMALS_FLUSH_MOMENTS);
    RuntimeTest::TearDown();
  }
};

/// One Adam step with every moment tiny and no gradient: m = 0.9 m stays
/// denormal under IEEE arithmetic. Returns m[0] (all are equal).
float adamMomentAfterOneStep(txrt_context *ctx, float m0 = 1e-39f) {
  const int64_t n = 4096;
  std::vector<float> param(n, 1.0f), grad(n, 0.0f), v(n, 0.0f);
  std::vector<float> m(n, m0);
  EXPECT_EQ(txrt_adam_update(ctx, 0, n, param.data(), grad.data(), m.data(),
                             v.data(), 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 1),
            TXRT_OK)
      << txrt_last_error(ctx);
  for (int64_t i = 1; i < n; ++i)
    EXPECT_EQ(m[i], m[0]);
  if (m0 < FLT_MIN)
    for (float p : param)
      EXPECT_EQ(p, 1.0f); // the tiny update changes no parameter
  return m[0];
}

std::vector<uint32_t> workerModes(int threads) {
  std::vector<uint32_t> modes(size_t(threads), 0);
#pragma omp parallel num_threads(threads)
  modes[size_t(omp_get_thread_num())] = _mm_getcsr();
  return modes;
}

// The default mode changes no update: with eps = 1e-30 and a gradient of
// 1e-20, v = 1e-43 is denormal; it was flushed before the step used it, and
// the step was m / eps = -1e9 where torch.optim.Adam (and KEEP) give
// -0.100254871. A step reads its moments as computed, and with an eps below
// 1e-12 they are stored as computed too (a flushed v moved the next steps:
// eps = 1e-20, gradient 1e-18, three steps gave -30 against -0.297).
TEST_F(DenormalsTest, DefaultModeKeepsTorchsUpdateAtATinyEps) {
  ASSERT_EQ(txrt_context_denormal_mode(ctx_), TXRT_DENORMALS_FLUSH_MOMENTS);
  float param[2] = {0.0f, 0.0f}, grad[2] = {1e-20f, 1.0f}, m[2] = {}, v[2] = {};
  ASSERT_EQ(txrt_adam_update(ctx_, 0, 2, param, grad, m, v, 0.1f, 0.9f, 0.999f,
                             1e-30f, 0.0f, 1),
            TXRT_OK);
  EXPECT_FLOAT_EQ(param[0], -0.100254871f);
  EXPECT_EQ(v[0], 9.9492191e-44f); // kept: eps is below 1e-12
  float p3[2] = {0.0f, 0.0f}, g3[2] = {1e-18f, 1.0f}, m3[2] = {}, v3[2] = {};
  for (int64_t step = 1; step <= 3; ++step)
    ASSERT_EQ(txrt_adam_update(ctx_, 0, 2, p3, g3, m3, v3, 0.1f, 0.9f, 0.999f,
                               1e-20f, 0.0f, step),
              TXRT_OK);
  EXPECT_FLOAT_EQ(p3[0], -0.297029704f);
}

TEST_F(DenormalsTest, DefaultFlushesAdamMomentsOnly) {
  ASSERT_EQ(txrt_context_denormal_mode(ctx_), TXRT_DENORMALS_FLUSH_MOMENTS);
  EXPECT_EQ(adamMomentAfterOneStep(ctx_), 0.0f);
  // Moments of normal size are what IEEE arithmetic gives.
  EXPECT_FLOAT_EQ(adamMomentAfterOneStep(ctx_, 1e-3f), 0.9f * 1e-3f);
  // No thread computes with FTZ / DAZ.
  for (uint32_t mode : workerModes(std::max(2, txrt_context_num_threads(ctx_))))
    EXPECT_EQ(mode & kFtzDaz, 0u);
  uint32_t saved = txrt_denormals_enter(ctx_);
  EXPECT_EQ(_mm_getcsr() & kFtzDaz, 0u);
  txrt_denormals_leave(saved);
}

TEST_F(DenormalsTest, KeepStoresDenormalMoments) {
  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_DENORMALS,
                                    TXRT_DENORMALS_KEEP),
            TXRT_OK);
  float kept = adamMomentAfterOneStep(ctx_);
  EXPECT_GT(kept, 0.0f);
  EXPECT_LT(kept, FLT_MIN);
  EXPECT_FLOAT_EQ(kept, 0.9f * 1e-39f);
  EXPECT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_DENORMALS, 3),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(DenormalsTest, FlushAllSetsWorkersAndEachCallOnly) {
  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_DENORMALS,
                                    TXRT_DENORMALS_FLUSH_ALL),
            TXRT_OK);
  uint32_t before = _mm_getcsr();
  _mm_setcsr(before & ~kFtzDaz);
  int threads = std::max(2, txrt_context_num_threads(ctx_));
  std::vector<uint32_t> modes = workerModes(threads);
  // Thread 0 is this one: the runtime leaves its caller's mode alone.
  EXPECT_EQ(modes[0] & kFtzDaz, 0u);
  for (int t = 1; t < threads; ++t)
    EXPECT_EQ(modes[size_t(t)] & kFtzDaz, kFtzDaz) << "thread " << t;

  EXPECT_EQ(adamMomentAfterOneStep(ctx_), 0.0f);
  EXPECT_EQ(_mm_getcsr() & kFtzDaz, 0u); // restored after the call
  uint32_t saved = txrt_denormals_enter(ctx_);
  EXPECT_EQ(_mm_getcsr() & kFtzDaz, kFtzDaz);
  volatile float tiny = 1e-39f;
  EXPECT_EQ(tiny * 0.5f, 0.0f); // DAZ: the denormal input reads as 0
  txrt_denormals_leave(saved);
  EXPECT_GT(tiny * 0.5f, 0.0f);

  // Leaving FLUSH_ALL clears the workers again.
  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_DENORMALS,
                                    TXRT_DENORMALS_FLUSH_MOMENTS),
            TXRT_OK);
  for (uint32_t mode : workerModes(threads))
    EXPECT_EQ(mode & kFtzDaz, 0u);
  _mm_setcsr(before);
}

TEST_F(DenormalsTest, EnvironmentChoosesTheMode) {
  struct Case {
    const char *value;
    int mode;
  };
  for (Case c : {Case{"keep", TXRT_DENORMALS_KEEP},
                 Case{"moments", TXRT_DENORMALS_FLUSH_MOMENTS},
                 Case{"flush", TXRT_DENORMALS_FLUSH_ALL}}) {
    ::setenv("TXRT_DENORMALS", c.value, 1);
    txrt_context *ctx = nullptr;
    ASSERT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
    EXPECT_EQ(txrt_context_denormal_mode(ctx), c.mode) << c.value;
    txrt_context_destroy(ctx);
  }
  ::setenv("TXRT_DENORMALS", "sometimes", 1);
  txrt_context *ctx = nullptr;
  EXPECT_EQ(txrt_context_create_with_threads(2, &ctx),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(nullptr)).find("TXRT_DENORMALS"),
            std::string::npos);
  ::unsetenv("TXRT_DENORMALS");
  // The "flush" context set the pool's threads: put them back.
  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_DENORMALS,
                                    TXRT_DENORMALS_FLUSH_ALL),
            TXRT_OK);
}

} // namespace
