//===- SoftmaxTest.cpp - txrt_softmax_fwd / _bwd (softmax, log-softmax) ---===//
#include "TestUtil.h"

#include <cmath>

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

} // namespace
