//===- ProfileTest.cpp - per-call profile records -------------------------===//
#include "TestUtil.h"

#include <string>

using namespace txrt_test;

namespace {

class ProfileTest : public RuntimeTest {};

TEST_F(ProfileTest, RecordsCallsWithSiteDurationAndFlops) {
  const int64_t m = 8, n = 16, k = 32;
  Floats x(m * k, 1.0f), w(n * k, 0.5f), y(m * n);
  // Off by default: nothing recorded.
  ASSERT_EQ(txrt_linear_fwd(ctx_, 7, m, n, k, x.data(), w.data(), nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_OK);
  EXPECT_EQ(txrt_profile_event_count(ctx_), 0);

  txrt_context_set_profiling(ctx_, 1);
  int64_t before = txrt_profile_clock_ns();
  ASSERT_EQ(txrt_linear_fwd(ctx_, 7, m, n, k, x.data(), w.data(), nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_OK);
  Floats g(m * n, 1.0f), o(m * n);
  ASSERT_EQ(txrt_activation_fwd(ctx_, 9, TXRT_ACTIVATION_RELU, m * n, g.data(),
                                o.data()),
            TXRT_OK);
  int64_t after = txrt_profile_clock_ns();
  ASSERT_EQ(txrt_profile_event_count(ctx_), 2);
  const txrt_profile_event *events = txrt_profile_events(ctx_);
  EXPECT_EQ(std::string(events[0].kernel), "txrt_linear_fwd");
  EXPECT_EQ(events[0].site, 7);
  EXPECT_DOUBLE_EQ(events[0].flops, 2.0 * m * n * k);
  EXPECT_GE(events[0].start_ns, before);
  EXPECT_GE(events[0].duration_ns, 0);
  EXPECT_LE(events[0].start_ns + events[0].duration_ns, events[1].start_ns);
  EXPECT_LE(events[1].start_ns + events[1].duration_ns, after);
  EXPECT_EQ(std::string(events[1].kernel), "txrt_activation_fwd");
  EXPECT_EQ(events[1].site, 9);
  EXPECT_EQ(events[1].flops, 0.0); // not counted for element-wise kernels

  // A failing call is recorded too (its time was spent).
  EXPECT_EQ(txrt_linear_fwd(ctx_, 8, m, n, k, x.data(), nullptr, nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_profile_event_count(ctx_), 3);

  txrt_profile_clear(ctx_);
  EXPECT_EQ(txrt_profile_event_count(ctx_), 0);
  txrt_context_set_profiling(ctx_, 0);
  ASSERT_EQ(txrt_linear_fwd(ctx_, 7, m, n, k, x.data(), w.data(), nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_OK);
  EXPECT_EQ(txrt_profile_event_count(ctx_), 0);
}

} // namespace
