//===- SoftmaxTest.cpp - txrt_softmax_fwd / _bwd (softmax, log-softmax) ---===//
#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace txrt_test;

namespace {

Doubles referenceSoftmax(int64_t rows, int64_t cols, const Doubles &x,
                         bool log) {
  Doubles y(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double m = x[i * cols];
    for (int64_t j = 1; j < cols; ++j)
      m = std::max(m, x[i * cols + j]);
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      sum += std::exp(x[i * cols + j] - m);
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = log ? x[i * cols + j] - m - std::log(sum)
                            : std::exp(x[i * cols + j] - m) / sum;
  }
  return y;
}

class SoftmaxTest : public RuntimeTest {};

TEST_F(SoftmaxTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{1, 1}, {7, 63}, {65, 65}, {3, 1000}})
    for (int log : {0, 1}) {
      Floats x = randomFloats(rows * cols, seed++, -5, 5), y(rows * cols);
      expectOk(txrt_softmax_fwd(ctx_, 1, rows, cols, x.data(), y.data(), log));
      expectClose(y, referenceSoftmax(rows, cols, toDoubles(x), log), 1e-5,
                  1e-4, log ? "log_softmax" : "softmax");
    }
}

TEST_F(SoftmaxTest, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 3, cols = 7;
  for (int log : {0, 1}) {
    Floats x = randomFloats(rows * cols, 10 + log, -3, 3), y(rows * cols);
    Floats dy = randomFloats(rows * cols, 20 + log), dx(rows * cols);
    expectOk(txrt_softmax_fwd(ctx_, 2, rows, cols, x.data(), y.data(), log));
    expectOk(txrt_softmax_bwd(ctx_, 3, rows, cols, y.data(), dy.data(),
                              dx.data(), log));
    expectClose(dx,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) {
                      return referenceSoftmax(rows, cols, p, log);
                    },
                    toDoubles(x), dy),
                1e-5, 1e-3, log ? "log_softmax dx" : "softmax dx");
  }
}

TEST_F(SoftmaxTest, InPlace) {
  const int64_t rows = 7, cols = 65;
  for (int log : {0, 1}) {
    Floats x = randomFloats(rows * cols, 30 + log, -3, 3), y(rows * cols);
    Floats dy = randomFloats(rows * cols, 40 + log), dx(rows * cols);
    expectOk(txrt_softmax_fwd(ctx_, 4, rows, cols, x.data(), y.data(), log));
    expectOk(txrt_softmax_bwd(ctx_, 5, rows, cols, y.data(), dy.data(),
                              dx.data(), log));
    Floats inPlace = x, grad = dy;
    expectOk(txrt_softmax_fwd(ctx_, 6, rows, cols, inPlace.data(),
                              inPlace.data(), log));
    expectOk(txrt_softmax_bwd(ctx_, 7, rows, cols, inPlace.data(), grad.data(),
                              grad.data(), log));
    expectClose(inPlace, toDoubles(y), 0, 0, "y in place");
    expectClose(grad, toDoubles(dx), 0, 0, "dx over dy");
  }
}

TEST_F(SoftmaxTest, LogSoftmaxIsUnbiased) {
  // oneDNN's softmax_log put +1.43e-6 on log-probabilities that are 0 (a
  // row of one class, a dominant logit) and biased every row upward by
  // about that much; the gradient of a one-class row was noise, not 0.
  Floats one = {3.5f, -2.0f, 0.0f}, y(3), dy = {0.25f, -1.0f, 2.0f}, dx(3);
  expectOk(txrt_softmax_fwd(ctx_, 8, 3, 1, one.data(), y.data(), 1));
  expectOk(txrt_softmax_bwd(ctx_, 9, 3, 1, y.data(), dy.data(), dx.data(), 1));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(y[i], 0.0f) << "row " << i;
    EXPECT_EQ(dx[i], 0.0f) << "row " << i;
  }
  Floats dominant = {100.0f, 0.0f, 0.0f, 0.0f}, out(4);
  expectOk(txrt_softmax_fwd(ctx_, 10, 1, 4, dominant.data(), out.data(), 1));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], -100.0f);
  // Over many rows the error averages out (float rounding), and no
  // log-probability is positive.
  const int64_t rows = 4096, cols = 4;
  Floats x = randomFloats(rows * cols, 50, -3, 3), logp(rows * cols);
  expectOk(txrt_softmax_fwd(ctx_, 11, rows, cols, x.data(), logp.data(), 1));
  Doubles reference = referenceSoftmax(rows, cols, toDoubles(x), true);
  double bias = 0, worst = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    bias += (double(logp[i]) - reference[i]) / double(rows * cols);
    worst = std::max(worst, std::abs(double(logp[i]) - reference[i]));
    ASSERT_LE(logp[i], 0.0f) << "element " << i;
  }
  EXPECT_LT(std::abs(bias), 1e-7);
  EXPECT_LT(worst, 1e-6);
}

TEST_F(SoftmaxTest, LogSoftmaxOfNonFiniteRowsIsPyTorchs) {
  const float inf = std::numeric_limits<float>::infinity();
  Floats x = {-inf, -inf, 1.0f, NAN, 0.0f, -inf}, y(6);
  expectOk(txrt_softmax_fwd(ctx_, 12, 3, 2, x.data(), y.data(), 1));
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1])); // all masked: NaN
  EXPECT_TRUE(std::isnan(y[2]) && std::isnan(y[3])); // a NaN: all NaN
  EXPECT_EQ(y[4], 0.0f);                             // -inf is p = 0
  EXPECT_EQ(y[5], -inf);
}

// PyTorch's softmax of a row with a NaN or a +inf is NaN everywhere (x -
// max is NaN there, and so is the sum); oneDNN's gave [0, 0, nan, 0, 0],
// and a matmul after it then hid nothing, but a product with a masked row
// or a sum over some positions did. Log-softmax with +inf likewise.
TEST_F(SoftmaxTest, SoftmaxOfNonFiniteRowsIsPyTorchs) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int log : {0, 1})
    for (bool inPlace : {false, true}) {
      SCOPED_TRACE(std::string(log ? "log_softmax" : "softmax") +
                   (inPlace ? ", in place" : ""));
      Floats x = {1.0f, 2.0f, NAN,  0.0f, 1.0f, // a NaN: all NaN
                  1.0f, 2.0f, inf,  0.0f, 1.0f, // +inf: all NaN
                  1.0f, 2.0f, -inf, 0.0f, 1.0f, // -inf: p = 0 there
                  0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
      Floats out(x.size());
      float *y = inPlace ? x.data() : out.data();
      expectOk(txrt_softmax_fwd(ctx_, 13 + log, 4, 5, x.data(), y, log));
      for (int64_t j = 0; j < 10; ++j)
        EXPECT_TRUE(std::isnan(y[j])) << j << ": " << y[j];
      EXPECT_EQ(y[12], log ? -inf : 0.0f);
      for (int64_t j : {10, 11, 13, 14, 15, 19})
        EXPECT_TRUE(std::isfinite(y[j])) << j;
      EXPECT_NEAR(log ? std::exp(y[15]) : y[15], 0.2f, 1e-6f);
    }
}

TEST_F(SoftmaxTest, WideLogSoftmaxSumsInBlocks) {
  // A vocabulary of 50257 was 43x PyTorch's error (one float sum per
  // lane); 1M classes here, within float rounding of the log-probability.
  const int64_t cols = 1000000;
  Floats x = randomFloats(cols, 60, 99.0f, 101.0f), y(cols);
  expectOk(txrt_softmax_fwd(ctx_, 13, 1, cols, x.data(), y.data(), 1));
  expectClose(y, referenceSoftmax(1, cols, toDoubles(x), true), 0, 3e-7,
              "log_softmax");
}

} // namespace
