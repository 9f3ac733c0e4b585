//===- GradientExchangeTest.cpp - accumulation, buckets, deferred Adam ----===//
#include "TestUtil.h"

#include "Context.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

using namespace txrt_test;

namespace {

TEST(BucketPlanTest, FillsBucketsInArrivalOrderAndClosesThem) {
  txrt::BucketPlan plan(10);
  EXPECT_EQ(plan.place(7, 4).bucket, 0);
  EXPECT_EQ(plan.place(3, 6).offset, 4); // exactly full
  EXPECT_FALSE(plan.closed(0));
  const auto &third = plan.place(9, 2);
  EXPECT_EQ(third.bucket, 1);
  EXPECT_EQ(third.offset, 0);
  EXPECT_TRUE(plan.closed(0));
  // Larger than a bucket: one of its own.
  EXPECT_EQ(plan.place(1, 25).bucket, 2);
  EXPECT_EQ(plan.bucketSize(2), 25);
  EXPECT_EQ(plan.place(2, 1).bucket, 3);
  EXPECT_EQ(plan.bucketSites(0), 2);
  EXPECT_EQ(plan.bucketSize(0), 10);
  // A site keeps its slot; a new size is an error.
  EXPECT_EQ(plan.place(3, 6).offset, 4);
  EXPECT_THROW(plan.place(3, 5), txrt::Error);
}

/// A context of its own: the tests change its gradient mode.
class GradientExchangeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(1, &ctx_), TXRT_OK);
    txrt_context_set_train_state(ctx_, 3, 0);
  }
  void TearDown() override { txrt_context_destroy(ctx_); }

  txrt_status adam(int64_t site, Floats &param, const Floats &grad, Floats &m,
                   Floats &v, const float *gradScale = nullptr) {
    return txrt_adam_step(ctx_, site, int64_t(param.size()), param.data(),
                          grad.data(), m.data(), v.data(), gradScale,
                          TXRT_LR_CONSTANT, 1e-2f, 0, 0, 0.9f, 0.98f, 1e-9f,
                          0.0f);
  }
  txrt_context *ctx_ = nullptr;
};

TEST_F(GradientExchangeTest, AccumulateThenApplyIsOneStepOnTheScaledSum) {
  const size_t n = 1001;
  Floats g1 = randomFloats(n, 1), g2 = randomFloats(n, 2);
  Floats param = randomFloats(n, 3), m = randomFloats(n, 4, 0, 1e-2f);
  Floats v = randomFloats(n, 5, 0, 1e-2f);
  Floats refParam = param, refM = m, refV = v, sum(n);
  for (size_t i = 0; i < n; ++i)
    sum[i] = (0.0f + 0.25f * g1[i]) + 0.75f * g2[i];
  ASSERT_EQ(adam(1, refParam, sum, refM, refV), TXRT_OK);

  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_ACCUMULATE,
                                           0.25f),
            TXRT_OK);
  Floats before = param;
  ASSERT_EQ(adam(1, param, g1, m, v), TXRT_OK);
  EXPECT_EQ(param, before); // accumulating updates nothing
  ASSERT_EQ(
      txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 0.75f),
      TXRT_OK);
  ASSERT_EQ(adam(1, param, g2, m, v), TXRT_OK);
  // The runtime may contract the accumulation into FMAs: equal to rounding.
  expectClose(param, toDoubles(refParam), 1e-7, 1e-6, "param");
  expectClose(m, toDoubles(refM), 1e-7, 1e-6, "m");
  expectClose(v, toDoubles(refV), 1e-9, 1e-6, "v");

  // The accumulator was cleared: a second apply sees only its gradient.
  Floats again = param, againM = m, againV = v;
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_UPDATE, 1),
            TXRT_OK);
  ASSERT_EQ(adam(1, again, g1, againM, againV), TXRT_OK);
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 1),
            TXRT_OK);
  ASSERT_EQ(adam(1, param, g1, m, v), TXRT_OK);
  expectClose(param, toDoubles(again), 1e-7, 1e-6, "param");
}

TEST_F(GradientExchangeTest, ClippingWithoutTheBoundIsAnError) {
  Floats param(8, 1.0f), grad(8, 1.0f), m(8, 0.0f), v(8, 0.0f);
  float scale = 0.5f;
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_ACCUMULATE,
                                           1.0f),
            TXRT_OK);
  EXPECT_EQ(adam(1, param, grad, m, v, &scale), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_))
                .find("txrt_context_set_gradient_clip"),
            std::string::npos);
  EXPECT_EQ(txrt_context_set_gradient_mode(ctx_, 7, 1.0f),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_context_set_gradient_clip(ctx_, -1.0f),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(GradientExchangeTest, ClippingScalesByTheNormOfTheWholeSum) {
  // Two sites, two micro-batches: the updates wait for finish_update and
  // are scaled by min(1, clip / (norm + 1e-6)) of the summed gradient of
  // both sites, not by the compiled step's factor of one call's part.
  const size_t n = 100;
  const float clip = 0.5f;
  std::vector<Floats> params, ms, vs, refs, refMs, refVs, sums;
  std::vector<Floats> g1, g2;
  double squares = 0.0;
  for (int site = 0; site < 2; ++site) {
    params.push_back(randomFloats(n, 30 + site));
    ms.push_back(Floats(n, 0.0f));
    vs.push_back(Floats(n, 0.0f));
    g1.push_back(randomFloats(n, 40 + site));
    g2.push_back(randomFloats(n, 50 + site));
    Floats sum(n);
    for (size_t i = 0; i < n; ++i) {
      sum[i] = 0.5f * g1.back()[i] + 0.5f * g2.back()[i];
      squares += double(sum[i]) * sum[i];
    }
    sums.push_back(sum);
  }
  float expected = std::min(1.0f, clip / (float(std::sqrt(squares)) + 1e-6f));
  ASSERT_LT(expected, 0.5f); // the bound bites
  for (int site = 0; site < 2; ++site) {
    refs.push_back(params[site]);
    refMs.push_back(ms[site]);
    refVs.push_back(vs[site]);
    ASSERT_EQ(adam(site, refs[site], sums[site], refMs[site], refVs[site],
                   &expected),
              TXRT_OK);
  }

  ASSERT_EQ(txrt_context_set_gradient_clip(ctx_, clip), TXRT_OK);
  float partScale = 0.9f; // what the compiled step computed: ignored
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_ACCUMULATE,
                                           0.5f),
            TXRT_OK);
  for (int site = 0; site < 2; ++site)
    ASSERT_EQ(adam(site, params[site], g1[site], ms[site], vs[site],
                   &partScale),
              TXRT_OK);
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 0.5f),
            TXRT_OK);
  for (int site = 0; site < 2; ++site) {
    Floats before = params[site];
    ASSERT_EQ(adam(site, params[site], g2[site], ms[site], vs[site],
                   &partScale),
              TXRT_OK);
    EXPECT_EQ(params[site], before) << "Adam ran before the norm was known";
  }
  ASSERT_EQ(txrt_context_finish_update(ctx_), TXRT_OK);
  for (int site = 0; site < 2; ++site) {
    expectClose(params[site], toDoubles(refs[site]), 1e-7, 1e-6, "param");
    expectClose(ms[site], toDoubles(refMs[site]), 1e-7, 1e-6, "m");
  }
  // The next update starts from cleared sums: one micro-batch whose norm
  // is under the bound is not scaled.
  Floats small(n, 1e-4f), ref = params[0], refM = ms[0], refV = vs[0];
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_UPDATE, 1.0f),
            TXRT_OK);
  ASSERT_EQ(adam(0, ref, small, refM, refV), TXRT_OK);
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 1.0f),
            TXRT_OK);
  ASSERT_EQ(adam(0, params[0], small, ms[0], vs[0], &partScale), TXRT_OK);
  ASSERT_EQ(txrt_context_finish_update(ctx_), TXRT_OK);
  expectClose(params[0], toDoubles(ref), 1e-7, 1e-6, "param, unclipped");
}

/// Two ranks with the same gradients: the sum doubles them. Records the
/// order of the started buckets and when each started.
struct FakeRanks {
  std::vector<int64_t> startedSizes;
  int64_t tests = 0, waits = 0;
  static int32_t start(void *state, float *data, int64_t n, void **request) {
    auto *self = static_cast<FakeRanks *>(state);
    for (int64_t i = 0; i < n; ++i)
      data[i] *= 2.0f;
    self->startedSizes.push_back(n);
    *request = data;
    return 0;
  }
  static int32_t test(void *state, void *, int32_t *done) {
    ++static_cast<FakeRanks *>(state)->tests;
    *done = 0;
    return 0;
  }
  static int32_t wait(void *state, void *) {
    ++static_cast<FakeRanks *>(state)->waits;
    return 0;
  }
};

// A gradient whose squared norm overflows f32 (elements of 1e19): the
// compiled step's norm (txrt_sum_squares: each tensor in double, the sum of
// tensors in f32) is inf and the factor 0, as torch's clip_grad_norm_; the
// accumulated update summed every square in double, kept the norm finite,
// and trained where one batch of the same examples did not.
TEST_F(GradientExchangeTest, ClippingAnOverflowingNormIsTheCompiledStepsZero) {
  const size_t n = 100;
  float compiled = 0.0f;
  Floats huge(n, 1e19f);
  for (int site = 0; site < 2; ++site)
    ASSERT_EQ(txrt_sum_squares(ctx_, site, int64_t(n), huge.data(), &compiled),
              TXRT_OK);
  ASSERT_TRUE(std::isinf(compiled));
  ASSERT_EQ(txrt_context_set_gradient_clip(ctx_, 1.0f), TXRT_OK);
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 1.0f),
            TXRT_OK);
  std::vector<Floats> params, ms, vs;
  for (int site = 0; site < 2; ++site) {
    params.push_back(randomFloats(n, 60 + site));
    ms.push_back(Floats(n, 0.0f));
    vs.push_back(Floats(n, 0.0f));
  }
  std::vector<Floats> before = params;
  float partScale = 1.0f;
  for (int site = 0; site < 2; ++site)
    ASSERT_EQ(adam(site, params[site], huge, ms[site], vs[site], &partScale),
              TXRT_OK);
  ASSERT_EQ(txrt_context_finish_update(ctx_), TXRT_OK);
  for (int site = 0; site < 2; ++site) {
    EXPECT_EQ(params[site], before[site]) << "site " << site;
    EXPECT_EQ(ms[site], Floats(n, 0.0f)) << "site " << site;
  }
}

TEST_F(GradientExchangeTest, BucketsStartWhenCompleteAndAdamWaitsForThem) {
  // Buckets of 26 floats: sites of 20, 20, 20 are three buckets.
  txrt_context_destroy(ctx_);
  setenv("TXRT_BUCKET_MB", "0.0001", 1);
  ASSERT_EQ(txrt_context_create_with_threads(1, &ctx_), TXRT_OK);
  unsetenv("TXRT_BUCKET_MB");
  txrt_context_set_train_state(ctx_, 1, 0);
  FakeRanks ranks;
  txrt_communicator communicator{&ranks, 2, FakeRanks::start,
                                 FakeRanks::test, FakeRanks::wait};
  txrt_context_set_communicator(ctx_, &communicator);

  const size_t n = 20;
  std::vector<Floats> params, ms, vs, grads, refs;
  for (int site = 0; site < 3; ++site) {
    params.push_back(randomFloats(n, 10 + site));
    ms.push_back(Floats(n, 0.0f));
    vs.push_back(Floats(n, 0.0f));
    grads.push_back(randomFloats(n, 20 + site));
    // One process, twice the gradient.
    Floats ref = params.back(), m = ms.back(), v = vs.back(), g(n);
    for (size_t i = 0; i < n; ++i)
      g[i] = 2.0f * (0.0f + 1.0f * grads.back()[i]);
    refs.push_back(ref);
    ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_UPDATE, 1),
              TXRT_OK);
    ASSERT_EQ(adam(100 + site, refs.back(), g, m, v), TXRT_OK);
  }
  for (int update = 0; update < 2; ++update) {
    ranks.startedSizes.clear();
    ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 1),
              TXRT_OK);
    for (int site = 0; site < 3; ++site) {
      Floats before = params[site];
      ASSERT_EQ(adam(site, params[site], grads[site], ms[site], vs[site]),
                TXRT_OK);
      EXPECT_EQ(params[site], before) << "Adam ran before the allreduce";
    }
    // The first two buckets started during the step (the first update
    // closes a bucket when the next one opens; later ones when their last
    // site arrives); the last one in finish.
    EXPECT_EQ(ranks.startedSizes, std::vector<int64_t>({20, 20}));
    ASSERT_EQ(txrt_context_finish_update(ctx_), TXRT_OK);
    EXPECT_EQ(ranks.startedSizes, std::vector<int64_t>({20, 20, 20}));
    if (update == 0) {
      for (int site = 0; site < 3; ++site)
        expectClose(params[site], toDoubles(refs[site]), 1e-7, 1e-6,
                    "param");
    }
  }
  EXPECT_GT(ranks.tests, 0);
  double waited = -1;
  int64_t bytes = 0;
  txrt_context_allreduce_stats(ctx_, &waited, &bytes);
  EXPECT_GE(waited, 0.0);
  EXPECT_EQ(bytes, 2 * 60 * 4);
}

} // namespace
