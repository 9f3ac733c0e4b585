//===- RmsNormTest.cpp - RMS norm and residual add + RMS norm -------------===//
//
// txrt_rms_norm_fwd / _bwd against a double-precision reference (plain and
// after a residual add, with the sum written out, in place), backward
// against finite differences of the reference, the sum's own gradient and
// accumulation, over row widths that exercise whole vectors and tails.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cmath>

using namespace txrt_test;

namespace {

/// y = s / sqrt(mean(s^2) + eps) * gamma, s = x (+ r when r is not empty).
Doubles referenceRmsNorm(int64_t rows, int64_t cols, const Doubles &x,
                         const Doubles &r, const Doubles &gamma, double eps) {
  Doubles y(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double squares = 0;
    for (int64_t j = 0; j < cols; ++j) {
      double s = x[i * cols + j] + (r.empty() ? 0.0 : r[i * cols + j]);
      squares += s * s;
    }
    double rstd = 1.0 / std::sqrt(squares / double(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) {
      double s = x[i * cols + j] + (r.empty() ? 0.0 : r[i * cols + j]);
      y[i * cols + j] = s * rstd * gamma[j];
    }
  }
  return y;
}

class RmsNormTest : public RuntimeTest {};

TEST_F(RmsNormTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1},
                            {7, 63},
                            {65, 65},
                            {4, 512},
                            {3, 33}}) {
    SCOPED_TRACE("rows=" + std::to_string(rows) +
                 " cols=" + std::to_string(cols));
    Floats x = randomFloats(rows * cols, seed++, -2, 2),
           r = randomFloats(rows * cols, seed++, -1, 3),
           gamma = randomFloats(cols, seed++);
    Floats y(rows * cols), sum(rows * cols);
    expectOk(txrt_rms_norm_fwd(ctx_, 1, rows, cols, x.data(), nullptr,
                               gamma.data(), 1e-6f, y.data(), nullptr));
    expectClose(y,
                referenceRmsNorm(rows, cols, toDoubles(x), {},
                                 toDoubles(gamma), 1e-6),
                1e-5, 1e-5, "y");
    Doubles added = referenceRmsNorm(rows, cols, toDoubles(x), toDoubles(r),
                                     toDoubles(gamma), 1e-6);
    expectOk(txrt_rms_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                               gamma.data(), 1e-6f, y.data(), sum.data()));
    expectClose(y, added, 1e-5, 1e-5, "y of x + r");
    Doubles sumRef(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      sumRef[i] = double(x[i] + r[i]);
    expectClose(sum, sumRef, 0, 0, "sum");
    // In place over x.
    Floats inPlace = x;
    expectOk(txrt_rms_norm_fwd(ctx_, 1, rows, cols, inPlace.data(), r.data(),
                               gamma.data(), 1e-6f, inPlace.data(), nullptr));
    expectClose(inPlace, added, 1e-5, 1e-5, "y of x + r in place");
  }
}

TEST_F(RmsNormTest, BackwardMatchesFiniteDifferences) {
  for (auto shape : {std::pair<int64_t, int64_t>{3, 7}, {2, 33}, {2, 70}}) {
    // Named copies, not a structured binding: the lambdas below capture
    // them (a C++20 extension for bindings, which clang warns about).
    const int64_t rows = shape.first, cols = shape.second;
    SCOPED_TRACE("rows=" + std::to_string(rows) +
                 " cols=" + std::to_string(cols));
    const float eps = 1e-5f;
    Floats x = randomFloats(rows * cols, 20, -2, 2),
           r = randomFloats(rows * cols, 21), gamma = randomFloats(cols, 22),
           dy = randomFloats(rows * cols, 24),
           dsum = randomFloats(rows * cols, 25);
    Doubles xd = toDoubles(x), rd = toDoubles(r), gd = toDoubles(gamma);
    for (bool withResidual : {false, true}) {
      SCOPED_TRACE(withResidual ? "x + r" : "x");
      Doubles residual = withResidual ? rd : Doubles{};
      auto f = [&](const Doubles &xs, const Doubles &gs) {
        return referenceRmsNorm(rows, cols, xs, residual, gs, eps);
      };
      Doubles dxExpected = vjpByFiniteDifferences(
          [&](const Doubles &p) { return f(p, gd); }, xd, dy);
      Doubles dgExpected = vjpByFiniteDifferences(
          [&](const Doubles &p) { return f(xd, p); }, gd, dy);
      Floats dx(rows * cols), dgamma(cols);
      expectOk(txrt_rms_norm_bwd(ctx_, 2, rows, cols, x.data(),
                                 withResidual ? r.data() : nullptr,
                                 gamma.data(), eps, dy.data(), nullptr,
                                 dx.data(), dgamma.data(), 0, 0));
      expectClose(dx, dxExpected, 1e-4, 1e-3, "dx");
      expectClose(dgamma, dgExpected, 1e-4, 1e-3, "dgamma");

      // The gradient of the returned sum adds to ds; accumulation adds.
      Floats acc = randomFloats(rows * cols, 26), dgAcc(cols, 1.0f);
      Doubles expected(rows * cols), dgAccExpected(cols);
      for (int64_t i = 0; i < rows * cols; ++i)
        expected[i] = acc[i] + dxExpected[i] + dsum[i];
      for (int64_t j = 0; j < cols; ++j)
        dgAccExpected[j] = 1.0 + dgExpected[j];
      expectOk(txrt_rms_norm_bwd(ctx_, 2, rows, cols, x.data(),
                                 withResidual ? r.data() : nullptr,
                                 gamma.data(), eps, dy.data(), dsum.data(),
                                 acc.data(), dgAcc.data(), 1, 1));
      expectClose(acc, expected, 1e-4, 1e-3, "dx with dsum, accumulated");
      expectClose(dgAcc, dgAccExpected, 1e-4, 1e-3, "dgamma accumulated");
    }
  }
}

TEST_F(RmsNormTest, BadArgumentsAreErrors) {
  Floats x(4), y(4), g(4);
  EXPECT_EQ(txrt_rms_norm_fwd(ctx_, 1, 1, 4, x.data(), nullptr, g.data(), 0.0f,
                              y.data(), nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_rms_norm_fwd(ctx_, 1, 1, 4, x.data(), nullptr, g.data(), 1e-6f,
                              y.data(), y.data()),
            TXRT_ERROR_INVALID_ARGUMENT); // out_sum without r
  EXPECT_EQ(txrt_rms_norm_fwd(ctx_, 1, 0, 4, nullptr, nullptr, nullptr, 1e-6f,
                              nullptr, nullptr),
            TXRT_OK);
}

TEST_F(RmsNormTest, WideRowsSumInBlocks) {
  // Two float accumulators over a 20M-wide row were 2e-4 off; 8M here.
  const int64_t cols = 8000000;
  Floats x = randomFloats(cols, 11, 99.5f, 100.5f), gamma(cols, 1.0f);
  Floats y(cols);
  expectOk(txrt_rms_norm_fwd(ctx_, 1, 1, cols, x.data(), nullptr, gamma.data(),
                             1e-6f, y.data(), nullptr));
  expectClose(
      y, referenceRmsNorm(1, cols, toDoubles(x), {}, toDoubles(gamma), 1e-6), 0,
      1e-6, "y");
}

TEST_F(RmsNormTest, GammaGradientSumsManyRowsInBlocks) {
  // dgamma sums dy * xhat over every row: a float accumulator per column
  // over a thread's 65536 rows drifted (terms of one sign here). Now float
  // for 128 rows, then double.
  const int64_t rows = 131072, cols = 8;
  Floats x = randomFloats(rows * cols, 21, 0.5f, 1.5f);
  Floats gamma = randomFloats(cols, 22);
  Floats dy = randomFloats(rows * cols, 23, 0.5f, 1.5f);
  Floats dx(rows * cols), dgamma(cols);
  expectOk(txrt_rms_norm_bwd(ctx_, 1, rows, cols, x.data(), nullptr,
                             gamma.data(), 1e-6f, dy.data(), nullptr, dx.data(),
                             dgamma.data(), 0, 0));
  for (int64_t j = 0; j < cols; ++j) {
    double sum = 0, scale = 0;
    for (int64_t i = 0; i < rows; ++i) {
      double squares = 0;
      for (int64_t c = 0; c < cols; ++c)
        squares += double(x[i * cols + c]) * x[i * cols + c];
      const double rstd = 1.0 / std::sqrt(squares / cols + 1e-6);
      const double term = double(dy[i * cols + j]) * x[i * cols + j] * rstd;
      sum += term;
      scale += std::fabs(term);
    }
    EXPECT_LT(std::fabs(dgamma[j] - sum), 2e-6 * scale)
        << "column " << j << ": " << dgamma[j] << " against " << sum;
  }
}

} // namespace
