//===- EltwiseTest.cpp - txrt_activation_fwd / _bwd -----------------------===//
#include "TestUtil.h"

#include <cmath>
#include <limits>

using namespace txrt_test;

namespace {

double referenceActivation(int32_t activation, double x) {
  switch (activation) {
  case TXRT_ACTIVATION_RELU:
    return x > 0 ? x : 0;
  case TXRT_ACTIVATION_GELU:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case TXRT_ACTIVATION_GELU_TANH:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case TXRT_ACTIVATION_SILU:
    return x / (1 + std::exp(-x));
  default:
    return x;
  }
}

class EltwiseTest : public RuntimeTest {};

TEST_F(EltwiseTest, ForwardAndBackward) {
  for (int32_t act : {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_RELU,
                      TXRT_ACTIVATION_GELU, TXRT_ACTIVATION_GELU_TANH,
                      TXRT_ACTIVATION_SILU}) {
    SCOPED_TRACE("activation " + std::to_string(act));
    for (int64_t n : {1, 7, 63, 65, 1000}) {
      Floats x = randomFloats(n, uint32_t(n + act), -3, 3);
      // Keep relu's inputs away from the kink for finite differences.
      for (float &v : x)
        if (std::fabs(v) < 1e-2f)
          v = 0.5f;
      Floats y(n), dy = randomFloats(n, uint32_t(7 * n)), dx(n);
      expectOk(txrt_activation_fwd(ctx_, 1, act, n, x.data(), y.data()));
      Doubles expected(n);
      for (int64_t i = 0; i < n; ++i)
        expected[i] = referenceActivation(act, x[i]);
      expectClose(y, expected, 1e-5, 1e-4, "y");
      expectOk(
          txrt_activation_bwd(ctx_, 2, act, n, x.data(), dy.data(), dx.data()));
      expectClose(dx,
                  vjpByFiniteDifferences(
                      [&](const Doubles &p) {
                        Doubles out(p.size());
                        for (size_t i = 0; i < p.size(); ++i)
                          out[i] = referenceActivation(act, p[i]);
                        return out;
                      },
                      toDoubles(x), dy),
                  1e-5, 1e-3, "dx");
    }
  }
}

// relu's gradient selects, as PyTorch's threshold_backward: an infinite or
// NaN dy where x <= 0 gives 0 (dy * 0 gave NaN: the gradient of
// sqrt(relu(x)) at x = 0), and a NaN x passes dy on. Over more elements than
// one thread takes.
TEST_F(EltwiseTest, ReluBackwardSelects) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 70000;
  Floats x(n), dy(n), dx(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = float(i % 5) - 2.0f; // -2 -1 0 1 2
    dy[i] = i % 3 == 0 ? inf : i % 3 == 1 ? nan : 0.5f;
  }
  x[n - 1] = nan;
  dy[n - 1] = 0.25f;
  expectOk(txrt_activation_bwd(ctx_, 6, TXRT_ACTIVATION_RELU, n, x.data(),
                               dy.data(), dx.data()));
  for (int64_t i = 0; i + 1 < n; ++i) {
    SCOPED_TRACE("i = " + std::to_string(i));
    if (x[i] <= 0.0f)
      EXPECT_EQ(dx[i], 0.0f);
    else if (std::isnan(dy[i]))
      EXPECT_TRUE(std::isnan(dx[i]));
    else
      EXPECT_EQ(dx[i], dy[i]);
    if (HasFailure())
      break;
  }
  EXPECT_EQ(dx[n - 1], 0.25f);
}

// relu's forward is torch.relu: NaN stays NaN and -0 stays -0 (oneDNN's
// max(x, 0) gave 0 and +0).
TEST_F(EltwiseTest, ReluForwardKeepsNaNAndNegativeZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 70000;
  Floats x(n), y(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = i % 4 == 0 ? nan : i % 4 == 1 ? -0.0f : float(i % 7) - 3.0f;
  expectOk(txrt_activation_fwd(ctx_, 7, TXRT_ACTIVATION_RELU, n, x.data(),
                               y.data()));
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("i = " + std::to_string(i));
    if (std::isnan(x[i]))
      EXPECT_TRUE(std::isnan(y[i]));
    else if (x[i] == 0.0f)
      EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i]));
    else
      EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f);
    if (HasFailure())
      break;
  }
}

TEST_F(EltwiseTest, InPlace) {
  Floats x = randomFloats(65, 3, -2, 2);
  Floats copy = x;
  expectOk(txrt_activation_fwd(ctx_, 3, TXRT_ACTIVATION_RELU, 65, x.data(),
                               x.data()));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(x[i], copy[i] > 0 ? copy[i] : 0.0f);
  // Backward over dy.
  Floats dy = randomFloats(65, 4), dx(65);
  expectOk(txrt_activation_bwd(ctx_, 4, TXRT_ACTIVATION_GELU, 65, copy.data(),
                               dy.data(), dx.data()));
  expectOk(txrt_activation_bwd(ctx_, 5, TXRT_ACTIVATION_GELU, 65, copy.data(),
                               dy.data(), dy.data()));
  EXPECT_EQ(dy, dx);
}

} // namespace
