//===- VecMathTest.cpp - the kernels' exp, scalar and vector --------------===//
//
// expApprox, expShifted and expShiftedSum against std::exp in double, built
// with the runtime's flags so that the vector path the host runs (Simd::exp
// on AVX-512 or AVX2) is the one checked: relative error <= 4e-7 over the
// range softmax uses, exact zeros for -inf and below the float range, and
// lengths with every tail size.
//
//===----------------------------------------------------------------------===//
#include "VecMath.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace txrt;
using namespace txrt_test;

namespace {

double relativeError(float got, double want) {
  return std::fabs(double(got) - want) / std::max(want, 1e-300);
}

TEST(VecMathTest, ExpApproxIsAccurate) {
  for (float x = -87.0f; x <= 88.0f; x += 0.173f)
    EXPECT_LE(relativeError(expApprox(x), std::exp(double(x))), 4e-7) << x;
  EXPECT_EQ(expApprox(kNegInf), 0.0f);
  EXPECT_EQ(expApprox(-200.0f), 0.0f);
  EXPECT_EQ(expApprox(0.0f), 1.0f);
  // NaN in, NaN out (its conversion to an exponent was undefined behaviour,
  // which the sanitizer build's UBSan reported in a diverged run).
  EXPECT_TRUE(std::isnan(expApprox(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VecMathTest, ExpShiftedMatchesExpOverEveryTail) {
  for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100}) {
    Floats in = randomFloats(size_t(n) + 1, uint32_t(n), -30.0f, 5.0f);
    if (n > 2) {
      in[0] = kNegInf; // a masked score
      in[1] = -500.0f; // below the float range after the shift
    }
    const float shift = 3.5f;
    Floats out(size_t(n) + 1, 77.0f), summed(size_t(n) + 1, 77.0f);
    expShifted(in.data(), shift, n, out.data());
    const float total = expShiftedSum(in.data(), shift, n, summed.data());
    double want = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      // The kernels subtract in float; only the exp is under test.
      const double e = std::exp(double(in[size_t(j)] - shift));
      want += e;
      if (e < 1e-37) {
        EXPECT_EQ(out[size_t(j)], 0.0f) << "n " << n << " j " << j;
      } else {
        EXPECT_LE(relativeError(out[size_t(j)], e), 4e-7)
            << "n " << n << " j " << j << " x " << in[size_t(j)];
      }
      EXPECT_EQ(summed[size_t(j)], out[size_t(j)]) << "n " << n << " j " << j;
    }
    EXPECT_EQ(out[size_t(n)], 77.0f) << "wrote past n = " << n;
    EXPECT_EQ(summed[size_t(n)], 77.0f) << "wrote past n = " << n;
    EXPECT_NEAR(total, want, 1e-6 * want + 1e-30) << "n " << n;
  }
}

TEST(VecMathTest, ExpShiftedKeepsLargeArguments) {
  // Up to e^88 (the float range ends at e^88.72).
  Floats in = {80.0f, 85.0f, 88.0f, 60.0f, 1.0f, -86.0f, -20.0f, 0.0f, 88.5f};
  Floats out(in.size());
  expShifted(in.data(), 0.0f, int64_t(in.size()), out.data());
  for (size_t j = 0; j < in.size(); ++j)
    EXPECT_LE(relativeError(out[j], std::exp(double(in[j]))), 4e-7) << in[j];
}

} // namespace
