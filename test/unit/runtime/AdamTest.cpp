//===- AdamTest.cpp - the Adam update against torch.optim.Adam's math -----===//
#include "TestUtil.h"

#include <cmath>

using namespace txrt_test;

namespace {

class AdamTest : public RuntimeTest {};

TEST_F(AdamTest, MatchesReferenceOverSteps) {
  for (float weightDecay : {0.0f, 0.01f}) {
    const int64_t n = 100003; // not a multiple of any vector width
    Floats param = randomFloats(n, 1), m(n, 0.0f), v(n, 0.0f);
    Doubles pRef = toDoubles(param), mRef(n, 0.0), vRef(n, 0.0);
    const double lr = 1e-3, b1 = 0.9, b2 = 0.98, eps = 1e-9;
    for (int64_t step = 1; step <= 5; ++step) {
      Floats grad = randomFloats(n, uint32_t(10 + step));
      expectOk(txrt_adam_update(ctx_, 1, n, param.data(), grad.data(), m.data(),
                                v.data(), float(lr), float(b1), float(b2),
                                float(eps), weightDecay, step));
      for (int64_t i = 0; i < n; ++i) {
        double g = grad[i] + weightDecay * pRef[i];
        mRef[i] = b1 * mRef[i] + (1 - b1) * g;
        vRef[i] = b2 * vRef[i] + (1 - b2) * g * g;
        double mHat = mRef[i] / (1 - std::pow(b1, step));
        double vHat = vRef[i] / (1 - std::pow(b2, step));
        pRef[i] -= lr * mHat / (std::sqrt(vHat) + eps);
      }
    }
    expectClose(param, pRef, 1e-6, 1e-5, "param");
    expectClose(m, mRef, 1e-6, 1e-5, "m");
    expectClose(v, vRef, 1e-7, 1e-5, "v");
  }
}

TEST_F(AdamTest, OneMinusBetaIsTheWrittenDecimals) {
  // The betas arrive as f32: 1 - f32(0.999) is 0.00099998713, and the
  // second moment was 1.3e-5 relative off torch.optim.Adam's, which takes
  // 1 - 0.999 in double (0.001). The bias corrections use 0.999 too.
  const int64_t n = 1001;
  Floats param = randomFloats(n, 3), grad = randomFloats(n, 4);
  Floats m(n, 0.0f), v(n, 0.0f);
  const Doubles p0 = toDoubles(param);
  expectOk(txrt_adam_update(ctx_, 1, n, param.data(), grad.data(), m.data(),
                            v.data(), 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 1));
  Doubles vRef(n), mRef(n), pRef(n);
  for (int64_t i = 0; i < n; ++i) {
    const double g = grad[i];
    mRef[i] = 0.1 * g;
    vRef[i] = 0.001 * g * g;
    const double mHat = mRef[i] / (1 - 0.9), vHat = vRef[i] / (1 - 0.999);
    pRef[i] = p0[i] - 1e-3 * mHat / (std::sqrt(vHat) + 1e-8);
  }
  expectClose(v, vRef, 0, 3e-7, "v after one step");
  expectClose(m, mRef, 0, 3e-7, "m after one step");
  expectClose(param, pRef, 1e-7, 1e-6, "param after one step");
}

TEST_F(AdamTest, FirstMomentIsTorchsLerpInBothForms) {
  // torch.optim.Adam updates m with lerp(m, g, 1 - beta1), which computes
  // g - (g - m) * beta1 for a weight >= 0.5: with beta1 = 0, m is g itself.
  // m + 1 * (g - m) was an ulp of the old m off it (a tester's exp_avg
  // 2e-4 relative off the gradient, the parameters 1e-5 off PyTorch).
  const int64_t n = 1001; // a vector body and a tail
  for (float beta1 : {0.0f, 0.3f, 0.5f, 0.9f}) {
    Floats param = randomFloats(n, 5), m = randomFloats(n, 6), v(n, 1.0f);
    Floats grad = randomFloats(n, 7);
    const Floats m0 = m;
    expectOk(txrt_adam_update(ctx_, 1, n, param.data(), grad.data(), m.data(),
                              v.data(), 1e-3f, beta1, 0.999f, 1e-8f, 0.0f, 3));
    const float w = float(1.0 - double(beta1));
    for (int64_t i = 0; i < n; ++i) {
      const float expected = w < 0.5f ? m0[i] + w * (grad[i] - m0[i])
                                      : grad[i] - (grad[i] - m0[i]) * (1.0f - w);
      // An ulp of the operands (with an FMA or without: the compiler's).
      const float ulps = 2.5e-7f * (std::fabs(grad[i]) + std::fabs(m0[i]));
      ASSERT_NEAR(m[i], expected, ulps)
          << "beta1 " << beta1 << ", element " << i;
      if (beta1 == 0.0f)
        ASSERT_EQ(m[i], grad[i]) << "element " << i;
    }
  }
}

TEST_F(AdamTest, StepUsesTheContextStepScheduleAndGradientScale) {
  const int64_t n = 40001;
  const double d = 64, warmup = 100, factor = 2.0, b1 = 0.9, b2 = 0.98,
               eps = 1e-9;
  const float scale = 0.25f;
  Floats param = randomFloats(n, 3), m(n, 0.0f), v(n, 0.0f);
  Doubles pRef = toDoubles(param), mRef(n, 0.0), vRef(n, 0.0);
  for (int64_t step = 1; step <= 3; ++step) {
    Floats grad = randomFloats(n, uint32_t(30 + step));
    txrt_context_set_train_state(ctx_, step, 0);
    expectOk(txrt_adam_step(ctx_, 1, n, param.data(), grad.data(), m.data(),
                            v.data(), &scale, TXRT_LR_NOAM, float(factor),
                            float(d), float(warmup), float(b1), float(b2),
                            float(eps), 0.0f));
    double lr = factor / std::sqrt(d) *
                std::min(1.0 / std::sqrt(double(step)),
                         double(step) * std::pow(warmup, -1.5));
    EXPECT_NEAR(txrt_learning_rate(TXRT_LR_NOAM, factor, d, warmup, step), lr,
                1e-9);
    for (int64_t i = 0; i < n; ++i) {
      double g = double(grad[i]) * scale;
      mRef[i] = b1 * mRef[i] + (1 - b1) * g;
      vRef[i] = b2 * vRef[i] + (1 - b2) * g * g;
      double mHat = mRef[i] / (1 - std::pow(b1, step));
      double vHat = vRef[i] / (1 - std::pow(b2, step));
      pRef[i] -= lr * mHat / (std::sqrt(vHat) + eps);
    }
  }
  expectClose(param, pRef, 1e-6, 1e-5, "param");
  expectClose(m, mRef, 1e-6, 1e-5, "m");
  // Without a step set, the update is refused.
  txrt_context_set_train_state(ctx_, 0, 0);
  EXPECT_EQ(txrt_adam_step(ctx_, 1, n, param.data(), param.data(), m.data(),
                           v.data(), nullptr, TXRT_LR_CONSTANT, 1e-3f, 0, 0,
                           0.9f, 0.98f, 1e-9f, 0.0f),
            TXRT_ERROR_INVALID_ARGUMENT);
}

// The loop is vectorised (zmm, ymm or xmm lanes, a peeled head and a
// masked or scalar tail, split across threads): every element must get the
// update a call on that element alone gives, bit for bit, wherever it falls
// (tiny gradients in step 3 drive some moments below FLT_MIN, so the
// flushing selects are exercised too).
TEST_F(AdamTest, VectorLanesAndTailsAgreeWithOneElementCalls) {
  const int64_t n = 70001; // above the parallel threshold, an odd tail
  for (float weightDecay : {0.0f, 0.01f}) {
    for (int64_t shift : {0, 1, 3}) { // misaligned starts: a peeled head
      Floats param = randomFloats(n + shift, 7), m(n + shift, 0.0f),
             v(n + shift, 0.0f);
      Floats one = param, oneM = m, oneV = v;
      for (int64_t step = 1; step <= 4; ++step) {
        Floats grad = randomFloats(n + shift, uint32_t(40 + step));
        if (step == 3)
          for (float &g : grad)
            g *= 1e-25f;
        expectOk(txrt_adam_update(ctx_, 1, n, param.data() + shift,
                                  grad.data() + shift, m.data() + shift,
                                  v.data() + shift, 1e-3f, 0.9f, 0.98f, 1e-9f,
                                  weightDecay, step));
        for (int64_t i = shift; i < n + shift; ++i)
          expectOk(txrt_adam_update(ctx_, 1, 1, &one[i], &grad[i], &oneM[i],
                                    &oneV[i], 1e-3f, 0.9f, 0.98f, 1e-9f,
                                    weightDecay, step));
      }
      int64_t mismatches = 0;
      for (int64_t i = shift; i < n + shift; ++i)
        mismatches += param[i] != one[i] || m[i] != oneM[i] || v[i] != oneV[i];
      EXPECT_EQ(mismatches, 0)
          << "weight decay " << weightDecay << ", shift " << shift;
    }
  }
}

/// start + the sum of x[i]^2, in double.
double sumOfSquaresFrom(double start, const Floats &x) {
  for (float value : x)
    start += double(value) * double(value);
  return start;
}

TEST_F(AdamTest, SumSquaresAccumulates) {
  const int64_t n = 70001; // above the parallel threshold
  Floats x = randomFloats(n, 5);
  const double expected = sumOfSquaresFrom(2.5, x);
  float total = 2.5f;
  expectOk(txrt_sum_squares(ctx_, 1, n, x.data(), &total));
  EXPECT_NEAR(total, expected, 1e-4 * expected);
}

// The sum runs in 16 double lanes and a tail: every size around the lane
// count, serial and parallel, gives the double sum rounded once to float.
TEST_F(AdamTest, SumSquaresOfEveryTailIsTheDoubleSum) {
  for (int64_t n : {1, 2, 15, 16, 17, 31, 33, 65537, 65551}) {
    Floats x = randomFloats(n, 11);
    const double expected = sumOfSquaresFrom(0.0, x);
    float total = 0.0f;
    expectOk(txrt_sum_squares(ctx_, 1, n, x.data(), &total));
    EXPECT_NEAR(total, expected, 2e-7 * expected) << "n = " << n;
  }
}

TEST_F(AdamTest, StepMustBePositive) {
  float p = 0, g = 0, m = 0, v = 0;
  EXPECT_EQ(txrt_adam_update(ctx_, 1, 1, &p, &g, &m, &v, 1e-3f, 0.9f, 0.98f,
                             1e-9f, 0.0f, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
}

} // namespace
