//===- TestUtil.h - helpers shared by the libtxrt unit tests ----*- C++ -*-===//
//
// A context fixture, seeded random data, tolerance comparisons against
// double-precision references, and central finite differences of a
// double-precision reference function (what every backward kernel is
// checked against).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_TEST_TESTUTIL_H
#define TXRT_TEST_TESTUTIL_H

#include "txrt/txrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace txrt_test {

using Doubles = std::vector<double>;
using Floats = std::vector<float>;

/// A context with two threads (the CI machine's core count), shared by the
/// tests of a suite.
class RuntimeTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(txrt_context_create_with_threads(2, &ctx_), TXRT_OK)
        << txrt_last_error(nullptr);
  }
  static void TearDownTestSuite() {
    txrt_context_destroy(ctx_);
    ctx_ = nullptr;
  }
  /// Checks a status and prints the runtime's message when it is not ok.
  static void expectOk(txrt_status status) {
    EXPECT_EQ(status, TXRT_OK) << txrt_last_error(ctx_);
  }
  static txrt_context *ctx_;
};

inline Floats randomFloats(size_t n, uint32_t seed, float lo = -1.0f,
                           float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats values(n);
  for (float &v : values)
    v = dist(gen);
  return values;
}

inline Doubles toDoubles(const Floats &values) {
  return Doubles(values.begin(), values.end());
}

/// Expects |actual - expected| <= atol + rtol * |expected| elementwise and
/// reports the first few violations with their index.
inline void expectClose(const Floats &actual, const Doubles &expected,
                        double atol, double rtol, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double diff = std::fabs(double(actual[i]) - expected[i]);
    bool ok = std::isfinite(actual[i]) &&
              diff <= atol + rtol * std::fabs(expected[i]);
    if (!ok && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: got " << actual[i]
                    << ", expected " << expected[i];
  }
}

/// Central finite differences of the scalar function f at x (double
/// precision throughout).
inline Doubles
finiteDifferences(const std::function<double(const Doubles &)> &f, Doubles x,
                  double h = 1e-6) {
  Doubles grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double saved = x[i];
    x[i] = saved + h;
    double up = f(x);
    x[i] = saved - h;
    double down = f(x);
    x[i] = saved;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

/// sum_i w[i] * y[i]: the scalar whose gradient a backward kernel computes
/// when it is given dy = w.
inline double dot(const Doubles &w, const Doubles &y) {
  double total = 0.0;
  for (size_t i = 0; i < w.size(); ++i)
    total += w[i] * y[i];
  return total;
}

/// The gradient of dot(w, f(x)) with respect to x by finite differences.
inline Doubles
vjpByFiniteDifferences(const std::function<Doubles(const Doubles &)> &f,
                       const Doubles &x, const Floats &w, double h = 1e-6) {
  Doubles weights = toDoubles(w);
  return finiteDifferences(
      [&](const Doubles &point) { return dot(weights, f(point)); }, x, h);
}

} // namespace txrt_test

#endif // TXRT_TEST_TESTUTIL_H
