//===- DenormalsTest.cpp - flush-to-zero / denormals-are-zero -------------===//
//
// A context flushes denormals on its worker threads and, for the duration
// of each call, on the calling thread (restored after); TXRT_DENORMALS=keep
// and TXRT_OPTION_FLUSH_DENORMALS keep IEEE gradual underflow.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <omp.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

using namespace txrt_test;

namespace {

constexpr uint32_t kFtzDaz = 0x8040u;

class DenormalsTest : public RuntimeTest {};

/// Adam with every value tiny: m = beta1 * m stays denormal under IEEE
/// arithmetic and becomes 0 when flushed.
float adamMomentAfterOneStep(txrt_context *ctx) {
  const int64_t n = 4096;
  std::vector<float> param(n, 1.0f), grad(n, 0.0f), v(n, 0.0f);
  std::vector<float> m(n, 1e-39f); // denormal: below FLT_MIN = 1.18e-38
  EXPECT_EQ(txrt_adam_update(ctx, 0, n, param.data(), grad.data(), m.data(),
                             v.data(), 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 1),
            TXRT_OK)
      << txrt_last_error(ctx);
  for (int64_t i = 1; i < n; ++i)
    EXPECT_EQ(m[i], m[0]);
  return m[0];
}

TEST_F(DenormalsTest, FlushedByDefaultKeptOnRequest) {
  ASSERT_EQ(txrt_context_flushes_denormals(ctx_), 1);
  EXPECT_EQ(adamMomentAfterOneStep(ctx_), 0.0f);

  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_FLUSH_DENORMALS, 0),
            TXRT_OK);
  EXPECT_EQ(txrt_context_flushes_denormals(ctx_), 0);
  float kept = adamMomentAfterOneStep(ctx_);
  EXPECT_GT(kept, 0.0f);
  EXPECT_LT(kept, FLT_MIN);
  EXPECT_FLOAT_EQ(kept, 0.9f * 1e-39f);

  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_FLUSH_DENORMALS, 1),
            TXRT_OK);
  EXPECT_EQ(adamMomentAfterOneStep(ctx_), 0.0f);
  EXPECT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_FLUSH_DENORMALS, 2),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(DenormalsTest, EveryWorkerThreadFlushes) {
  int threads = std::max(2, txrt_context_num_threads(ctx_));
  std::vector<uint32_t> modes(size_t(threads), 0);
#pragma omp parallel num_threads(threads)
  modes[size_t(omp_get_thread_num())] = _mm_getcsr();
  // Thread 0 is this one: a context leaves its caller's mode alone.
  EXPECT_EQ(modes[0] & kFtzDaz, 0u);
  for (int t = 1; t < threads; ++t)
    EXPECT_EQ(modes[size_t(t)] & kFtzDaz, kFtzDaz) << "thread " << t;
}

TEST_F(DenormalsTest, CallerModeIsRestoredAfterEachCall) {
  uint32_t before = _mm_getcsr();
  _mm_setcsr(before & ~kFtzDaz);
  EXPECT_EQ(adamMomentAfterOneStep(ctx_), 0.0f);
  EXPECT_EQ(_mm_getcsr() & kFtzDaz, 0u);

  uint32_t saved = txrt_denormals_enter(ctx_);
  EXPECT_EQ(_mm_getcsr() & kFtzDaz, kFtzDaz);
  volatile float tiny = 1e-39f;
  EXPECT_EQ(tiny * 0.5f, 0.0f); // DAZ: the denormal input reads as 0
  txrt_denormals_leave(saved);
  EXPECT_EQ(_mm_getcsr() & kFtzDaz, 0u);
  EXPECT_GT(tiny * 0.5f, 0.0f);
  _mm_setcsr(before);
}

TEST_F(DenormalsTest, EnvironmentChoosesThePolicy) {
  txrt_context *ctx = nullptr;
  ::setenv("TXRT_DENORMALS", "keep", 1);
  ASSERT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
  EXPECT_EQ(txrt_context_flushes_denormals(ctx), 0);
  EXPECT_GT(adamMomentAfterOneStep(ctx), 0.0f);
  txrt_context_destroy(ctx);

  ::setenv("TXRT_DENORMALS", "sometimes", 1);
  EXPECT_EQ(txrt_context_create_with_threads(2, &ctx),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(nullptr)).find("TXRT_DENORMALS"),
            std::string::npos);

  ::setenv("TXRT_DENORMALS", "flush", 1);
  ASSERT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
  EXPECT_EQ(txrt_context_flushes_denormals(ctx), 1);
  txrt_context_destroy(ctx);
  ::unsetenv("TXRT_DENORMALS");
  // The fixture's context is the process's last: put its workers back.
  ASSERT_EQ(txrt_context_set_option(ctx_, TXRT_OPTION_FLUSH_DENORMALS, 1),
            TXRT_OK);
}

} // namespace
