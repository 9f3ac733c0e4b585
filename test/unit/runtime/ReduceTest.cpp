//===- ReduceTest.cpp - txrt_reduce and txrt_argmax -----------------------===//
#include "TestUtil.h"

#include <limits>
#include <vector>

using namespace txrt_test;

namespace {

Doubles referenceReduce(int32_t op, const std::vector<int64_t> &xDims,
                        const Floats &x, const std::vector<int64_t> &yDims) {
  size_t rank = xDims.size();
  int64_t yCount = 1, reduced = 1;
  for (size_t i = 0; i < rank; ++i) {
    yCount *= yDims[i];
    if (yDims[i] != xDims[i])
      reduced *= xDims[i];
  }
  double init = op == TXRT_REDUCE_MAX ? -std::numeric_limits<double>::infinity()
                : op == TXRT_REDUCE_MIN
                    ? std::numeric_limits<double>::infinity()
                    : 0.0;
  Doubles y(yCount, init);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t rest = int64_t(flat), yIndex = 0, yScale = 1;
    for (int i = int(rank) - 1; i >= 0; --i) {
      int64_t index = rest % xDims[i];
      rest /= xDims[i];
      yIndex += (yDims[i] == 1 ? 0 : index) * yScale;
      yScale *= yDims[i];
    }
    double v = x[flat];
    double &acc = y[yIndex];
    if (op == TXRT_REDUCE_MAX)
      acc = std::max(acc, v);
    else if (op == TXRT_REDUCE_MIN)
      acc = std::min(acc, v);
    else
      acc += v;
  }
  if (op == TXRT_REDUCE_MEAN)
    for (double &v : y)
      v /= double(reduced);
  return y;
}

class ReduceTest : public RuntimeTest {};

TEST_F(ReduceTest, PatternsAndOps) {
  using Shape = std::vector<int64_t>;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{65}, {1}},                  // everything
      {{7, 63}, {7, 1}},            // rows (innermost)
      {{65, 63}, {1, 63}},          // columns: a bias gradient
      {{2, 7, 65}, {2, 1, 65}},     // middle
      {{2, 7, 65}, {1, 1, 65}},     // outer two
      {{2, 7, 5, 3}, {2, 1, 5, 1}}, // two runs (oneDNN)
      {{3, 1, 7}, {3, 1, 1}},       // with a size-1 dim
      {{4, 5}, {4, 5}},             // nothing reduced
  };
  uint32_t seed = 1;
  for (const auto &[xDims, yDims] : cases)
    for (int32_t op = TXRT_REDUCE_SUM; op <= TXRT_REDUCE_MIN; ++op) {
      int64_t count = 1;
      for (int64_t d : xDims)
        count *= d;
      Floats x = randomFloats(count, seed++);
      Doubles expected = referenceReduce(op, xDims, x, yDims);
      Floats y(expected.size());
      expectOk(txrt_reduce(ctx_, seed, op, int32_t(xDims.size()), xDims.data(),
                           x.data(), yDims.data(), y.data()));
      expectClose(y, expected, 1e-5, 1e-5, "reduce op " + std::to_string(op));
    }
}

TEST_F(ReduceTest, ArgmaxTakesTheFirstMaximum) {
  const int64_t rows = 7, cols = 65;
  Floats x = randomFloats(rows * cols, 5);
  x[3 * cols + 10] = 5.0f;
  x[3 * cols + 20] = 5.0f;
  std::vector<int32_t> out(rows);
  expectOk(txrt_argmax(ctx_, 1, rows, cols, x.data(), out.data()));
  for (int64_t i = 0; i < rows; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < cols; ++j)
      if (x[i * cols + j] > x[i * cols + best])
        best = j;
    EXPECT_EQ(out[i], best) << "row " << i;
  }
  EXPECT_EQ(out[3], 10);
}

TEST_F(ReduceTest, LongAxesSumInBlocks) {
  // One float accumulator over millions of values near 100: the mean of
  // 30M came out 1.1 % low (oneDNN, innermost) and a middle axis stalled
  // at 2^31 / T (107.37 at T = 20M). 6M values of 100 + noise here.
  const int64_t n = 6000000;
  Floats x = randomFloats(n, 7, 99.5f, 100.5f);
  double exact = 0;
  for (float v : x)
    exact += v;
  for (int32_t op : {TXRT_REDUCE_SUM, TXRT_REDUCE_MEAN}) {
    const double want = op == TXRT_REDUCE_MEAN ? exact / double(n) : exact;
    // innermost: [1, n] -> [1, 1]
    const std::vector<int64_t> row = {1, n}, one = {1, 1};
    Floats y(1);
    expectOk(txrt_reduce(ctx_, 1, op, 2, row.data(), x.data(), one.data(),
                         y.data()));
    EXPECT_NEAR(double(y[0]), want, 1e-6 * std::abs(want)) << "op " << op;
    // middle: [1, n / 4, 4] -> [1, 1, 4]
    const std::vector<int64_t> mid = {1, n / 4, 4}, kept = {1, 1, 4};
    Floats columns(4);
    expectOk(txrt_reduce(ctx_, 2, op, 3, mid.data(), x.data(), kept.data(),
                         columns.data()));
    for (int64_t j = 0; j < 4; ++j) {
      double column = 0;
      for (int64_t r = 0; r < n / 4; ++r)
        column += x[r * 4 + j];
      if (op == TXRT_REDUCE_MEAN)
        column /= double(n / 4);
      EXPECT_NEAR(double(columns[j]), column, 1e-6 * std::abs(column))
          << "op " << op << " column " << j;
    }
  }
}

TEST_F(ReduceTest, ColumnSumsOfConstantRows) {
  // 8192 rows of 0.1 down a column (a bias gradient over B*T rows) were one
  // float running sum per column: 819.147, 6.5e-5 off.
  const int64_t rows = 8192, cols = 3;
  Floats x(rows * cols, 0.1f), y(cols);
  const std::vector<int64_t> xDims = {rows, cols}, yDims = {1, cols};
  expectOk(txrt_reduce(ctx_, 3, TXRT_REDUCE_SUM, 2, xDims.data(), x.data(),
                       yDims.data(), y.data()));
  const double exact = double(rows) * double(0.1f);
  for (float v : y)
    EXPECT_NEAR(double(v), exact, 2e-6 * exact);
}

} // namespace
