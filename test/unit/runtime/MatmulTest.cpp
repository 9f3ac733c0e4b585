//===- MatmulTest.cpp - txrt_matmul, txrt_linear_fwd / _bwd ---------------===//
#include "MatmulPrimitive.h"
#include "TestUtil.h"

#include <array>
#include <cmath>
#include <limits>
#include <tuple>

using namespace txrt_test;

namespace {

using Strides = std::array<int64_t, 4>;

double activate(int32_t activation, double x) {
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

/// The naive strided batched product with epilogue, over C's buffer.
struct MatmulCase {
  int64_t batch0 = 1, batch1 = 1, m, n, k;
  Strides a, b, c;
  bool bias = false;
  int32_t activation = TXRT_ACTIVATION_NONE;
  bool residual = false;
  float alpha = 1.0f, beta = 0.0f;

  int64_t span(const Strides &s, int64_t rows, int64_t cols) const {
    return (batch0 - 1) * s[0] + (batch1 - 1) * s[1] + (rows - 1) * s[2] +
           (cols - 1) * s[3] + 1;
  }

  Doubles reference(const Floats &av, const Floats &bv, const Floats &biasv,
                    const Floats &resv, const Floats &cOld) const {
    Doubles out = toDoubles(cOld);
    for (int64_t b0 = 0; b0 < batch0; ++b0)
      for (int64_t b1 = 0; b1 < batch1; ++b1)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p)
              sum += double(av[b0 * a[0] + b1 * a[1] + i * a[2] + p * a[3]]) *
                     bv[b0 * b[0] + b1 * b[1] + p * b[2] + j * b[3]];
            int64_t at = b0 * c[0] + b1 * c[1] + i * c[2] + j * c[3];
            double value = alpha * sum + (bias ? biasv[j] : 0.0);
            value = activate(activation, value);
            if (residual)
              value += resv[at];
            out[at] = value + (beta != 0 ? beta * double(cOld[at]) : 0.0);
          }
    return out;
  }

  void check(txrt_context *ctx, uint32_t seed) const {
    Floats av = randomFloats(span(a, m, k), seed);
    Floats bv = randomFloats(span(b, k, n), seed + 1);
    int64_t cSize = span(c, m, n);
    Floats biasv = randomFloats(n, seed + 2);
    Floats resv = randomFloats(cSize, seed + 3);
    Floats cv = randomFloats(cSize, seed + 4);
    Doubles expected = reference(av, bv, biasv, resv, cv);
    ASSERT_EQ(txrt_matmul(ctx, seed, batch0, batch1, m, n, k, av.data(),
                          a.data(), bv.data(), b.data(), cv.data(), c.data(),
                          bias ? biasv.data() : nullptr, activation,
                          residual ? resv.data() : nullptr, alpha, beta),
              TXRT_OK)
        << txrt_last_error(ctx);
    expectClose(cv, expected, 1e-4, 1e-4,
                "matmul m=" + std::to_string(m) + " n=" + std::to_string(n) +
                    " k=" + std::to_string(k));
  }
};

class MatmulTest : public RuntimeTest {};

TEST_F(MatmulTest, TransposesByStrides) {
  uint32_t seed = 10;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                         {7, 63, 65},
                         {65, 7, 63},
                         {63, 65, 7},
                         {1, 65, 7}}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        MatmulCase mc;
        mc.m = m;
        mc.n = n;
        mc.k = k;
        mc.a = ta ? Strides{0, 0, 1, m} : Strides{0, 0, k, 1};
        mc.b = tb ? Strides{0, 0, 1, k} : Strides{0, 0, n, 1};
        mc.c = {0, 0, n, 1};
        SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
        mc.check(ctx_, seed++);
      }
  }
}

TEST_F(MatmulTest, BatchedAndBroadcast) {
  MatmulCase mc;
  mc.batch0 = 2;
  mc.batch1 = 3;
  mc.m = 7;
  mc.n = 5;
  mc.k = 9;
  mc.a = {3 * 7 * 9, 7 * 9, 9, 1};
  mc.b = {3 * 9 * 5, 9 * 5, 5, 1};
  mc.c = {3 * 7 * 5, 7 * 5, 5, 1};
  mc.check(ctx_, 100);
  mc.b = {0, 0, 5, 1}; // one B for every batch
  mc.check(ctx_, 101);
  mc.b = {9 * 5, 0, 5, 1}; // B per batch0, shared over batch1
  mc.check(ctx_, 102);
}

TEST_F(MatmulTest, HeadSplitViewsWithoutCopies) {
  // scores[b, h, i, j] = sum_d Q[b, i, h, d] K[b, j, h, d] on [B, T, h*d].
  const int64_t B = 2, T = 7, S = 65, h = 3, d = 5;
  MatmulCase mc;
  mc.batch0 = B;
  mc.batch1 = h;
  mc.m = T;
  mc.n = S;
  mc.k = d;
  mc.a = {T * h * d, d, h * d, 1};
  mc.b = {S * h * d, d, 1, h * d};
  mc.c = {h * T * S, T * S, S, 1};
  mc.alpha = 0.125f;
  mc.check(ctx_, 200);
  // out[b, i, h, :] = P[b, h, i, :] . V[b, :, h, :], written merged.
  MatmulCase pv;
  pv.batch0 = B;
  pv.batch1 = h;
  pv.m = T;
  pv.n = d;
  pv.k = S;
  pv.a = {h * T * S, T * S, S, 1};
  pv.b = {S * h * d, d, h * d, 1};
  pv.c = {T * h * d, d, h * d, 1};
  pv.check(ctx_, 201);
}

TEST_F(MatmulTest, Epilogues) {
  uint32_t seed = 300;
  for (int32_t act : {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_RELU,
                      TXRT_ACTIVATION_GELU, TXRT_ACTIVATION_GELU_TANH,
                      TXRT_ACTIVATION_SILU})
    for (bool bias : {false, true})
      for (bool residual : {false, true})
        for (auto [alpha, beta] :
             {std::pair<float, float>{1.0f, 0.0f}, {0.5f, 1.0f}}) {
          MatmulCase mc;
          mc.batch1 = 2;
          mc.m = 7;
          mc.n = 65;
          mc.k = 63;
          mc.a = {0, 7 * 63, 63, 1};
          mc.b = {0, 0, 1, 63};
          mc.c = {0, 7 * 65, 65, 1};
          mc.bias = bias;
          mc.activation = act;
          mc.residual = residual;
          mc.alpha = alpha;
          mc.beta = beta;
          SCOPED_TRACE("act=" + std::to_string(act) +
                       " bias=" + std::to_string(bias) +
                       " residual=" + std::to_string(residual) +
                       " alpha=" + std::to_string(alpha));
          mc.check(ctx_, seed++);
        }
}

TEST_F(MatmulTest, BackwardIsTransposedProducts) {
  // C[b] = A[b] B[b] with A [2, 3, 4], B [2, 4, 5]; the gradients are
  // txrt_matmul calls on the same buffers with swapped strides.
  const int64_t batch = 2, m = 3, k = 4, n = 5;
  Floats a = randomFloats(batch * m * k, 700),
         b = randomFloats(batch * k * n, 701);
  Floats dc = randomFloats(batch * m * n, 702);
  Floats da(a.size(), 0.5f), db(b.size());
  // dA = dC . B^T: dC [m x n] dense, B^T [n x k] is B with strides swapped.
  int64_t dcStrides[4] = {0, m * n, n, 1}, bT[4] = {0, k * n, 1, n},
          daStrides[4] = {0, m * k, k, 1};
  expectOk(txrt_matmul(ctx_, 1, 1, batch, m, k, n, dc.data(), dcStrides,
                       b.data(), bT, da.data(), daStrides, nullptr,
                       TXRT_ACTIVATION_NONE, nullptr, 1.0f, 1.0f));
  // dB = A^T . dC: A^T [k x m] is A with strides swapped.
  int64_t aT[4] = {0, m * k, 1, k}, dbStrides[4] = {0, k * n, n, 1};
  expectOk(txrt_matmul(ctx_, 2, 1, batch, k, n, m, a.data(), aT, dc.data(),
                       dcStrides, db.data(), dbStrides, nullptr,
                       TXRT_ACTIVATION_NONE, nullptr, 1.0f, 0.0f));
  auto product = [&](const Doubles &av, const Doubles &bv) {
    Doubles c(batch * m * n, 0.0);
    for (int64_t t = 0; t < batch; ++t)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t p = 0; p < k; ++p)
            c[(t * m + i) * n + j] +=
                av[(t * m + i) * k + p] * bv[(t * k + p) * n + j];
    return c;
  };
  Doubles ad = toDoubles(a), bd = toDoubles(b);
  Doubles daExpected = vjpByFiniteDifferences(
      [&](const Doubles &p) { return product(p, bd); }, ad, dc);
  for (double &v : daExpected)
    v += 0.5; // beta = 1 accumulated onto 0.5
  expectClose(da, daExpected, 1e-5, 1e-4, "dA");
  expectClose(db,
              vjpByFiniteDifferences(
                  [&](const Doubles &p) { return product(ad, p); }, bd, dc),
              1e-5, 1e-4, "dB");
}

TEST_F(MatmulTest, LongReductionsSplitOverThreads) {
  // k far larger than m and n: the product is split over k across threads
  // (partials summed), with beta and a strided output.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 1100},
                         {63, 65, 2049}}) {
    MatmulCase mc;
    mc.m = m;
    mc.n = n;
    mc.k = k;
    mc.a = {0, 0, k, 1};
    mc.b = {0, 0, 1, k};
    mc.c = {0, 0, n + 3, 1};
    mc.beta = 1.0f;
    mc.alpha = 0.5f;
    mc.check(ctx_, uint32_t(800 + m));
  }
}

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

Doubles referenceLinear(int64_t m, int64_t n, int64_t k, const Doubles &x,
                        const Doubles &w, const Doubles &bias) {
  Doubles y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias.empty() ? 0.0 : bias[j];
      for (int64_t p = 0; p < k; ++p)
        sum += x[i * k + p] * w[j * k + p];
      y[i * n + j] = sum;
    }
  return y;
}

TEST_F(MatmulTest, LinearForwardWithEpilogue) {
  uint32_t seed = 400;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 7, 63},
                         {65, 63, 7},
                         {63, 65, 65}})
    for (int32_t act :
         {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_RELU, TXRT_ACTIVATION_GELU})
      for (bool residual : {false, true}) {
        Floats x = randomFloats(m * k, seed++), w = randomFloats(n * k, seed++),
               bias = randomFloats(n, seed++), r = randomFloats(m * n, seed++);
        Floats y(m * n);
        expectOk(txrt_linear_fwd(ctx_, seed, m, n, k, x.data(), w.data(),
                                 bias.data(), act,
                                 residual ? r.data() : nullptr, y.data()));
        Doubles expected = referenceLinear(m, n, k, toDoubles(x), toDoubles(w),
                                           toDoubles(bias));
        for (int64_t i = 0; i < m * n; ++i)
          expected[i] = activate(act, expected[i]) + (residual ? r[i] : 0.0);
        expectClose(y, expected, 1e-4, 1e-4, "linear");
      }
}

// The relu epilogue computes torch.relu: a NaN pre-activation stays NaN
// (oneDNN's relu post-op is max(s, 0), which gave 0 there: a tester's NaN
// input row trained to a finite loss fused and NaN unfused), and a negative
// one is +0. Through every form that takes an activation: the linear, the
// gated linear and the strided matmul with alpha != 1.
TEST_F(MatmulTest, ReluEpilogueKeepsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t m = 70, n = 65, k = 33;
  Floats x = randomFloats(m * k, 71), w = randomFloats(n * k, 72),
         bias = randomFloats(n, 73), gate = randomFloats(m * n, 74);
  x[5 * k + 3] = nan; // row 5: every output NaN
  x[9 * k] = inf;     // row 9: +-inf, or NaN where w is 0
  w[4 * k] = 0.0f;
  Doubles pre =
      referenceLinear(m, n, k, toDoubles(x), toDoubles(w), toDoubles(bias));
  auto check = [&](const Floats &y, bool gated, const char *what) {
    SCOPED_TRACE(what);
    for (int64_t i = 0; i < m * n; ++i) {
      double expected = pre[i] < 0 ? 0.0 : pre[i];
      if (gated)
        expected *= gate[i];
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(y[i])) << "at " << i << ": " << y[i];
      } else if (std::isinf(expected)) {
        EXPECT_EQ(y[i], expected) << "at " << i;
      } else {
        EXPECT_NEAR(y[i], expected, 1e-4 * (1 + std::fabs(expected)))
            << "at " << i;
        if (pre[i] < 0 && !gated)
          EXPECT_FALSE(std::signbit(y[i])) << "-0 at " << i;
      }
      if (HasFailure())
        break;
    }
  };
  ASSERT_TRUE(std::isnan(pre[5 * n]) && std::isnan(pre[9 * n + 4]));
  Floats y(m * n);
  expectOk(txrt_linear_fwd(ctx_, 1, m, n, k, x.data(), w.data(), bias.data(),
                           TXRT_ACTIVATION_RELU, nullptr, y.data()));
  check(y, false, "linear");
  expectOk(txrt_linear_gated_fwd(ctx_, 2, m, n, k, x.data(), w.data(),
                                 bias.data(), TXRT_ACTIVATION_RELU, gate.data(),
                                 nullptr, y.data()));
  check(y, true, "gated linear");
  // alpha = 2 with x halved: the bias becomes a post-op before the relu.
  Floats half = x;
  for (float &v : half)
    v *= 0.5f;
  const int64_t aStrides[4] = {0, 0, k, 1}, bStrides[4] = {0, 0, 1, k},
                cStrides[4] = {0, 0, n, 1};
  expectOk(txrt_matmul(ctx_, 3, 1, 1, m, n, k, half.data(), aStrides, w.data(),
                       bStrides, y.data(), cStrides, bias.data(),
                       TXRT_ACTIVATION_RELU, nullptr, 2.0f, 0.0f));
  check(y, false, "matmul, alpha 2"); // 2 * (x / 2)·wᵀ + bias: the same
}

// The bias gradient sums dy's rows in double: a running f32 sum was 1 %
// off over 2^20 rows of a constant 0.1 (a reduce_mean loss gives constant
// gradients; torch's f32 cascade is within 1e-6). Four columns (the rows
// split among the threads) and 600 (column chunks), also accumulated.
TEST_F(MatmulTest, BiasGradientOfManyRowsIsExact) {
  for (int64_t n : {4, 600}) {
    const int64_t m = (int64_t(1) << 22) / n, k = 1;
    Floats x(size_t(m * k), 0.0f), w(size_t(n * k), 0.0f), dx(size_t(m * k));
    Floats dw(size_t(n * k)), dy(size_t(m * n), 0.1f), db(size_t(n), 0.0f);
    expectOk(txrt_linear_bwd(ctx_, 60, m, n, k, x.data(), w.data(), dy.data(),
                             dx.data(), dw.data(), db.data(), 0, 0));
    const double exact = double(m) * double(0.1f);
    for (int64_t j = 0; j < n; ++j)
      ASSERT_NEAR(db[size_t(j)], exact, 1e-6 * exact)
          << "n " << n << " j " << j;
    expectOk(txrt_linear_bwd(ctx_, 61, m, n, k, x.data(), w.data(), dy.data(),
                             dx.data(), dw.data(), db.data(), 0, 1));
    for (int64_t j = 0; j < n; ++j)
      ASSERT_NEAR(db[size_t(j)], 2 * exact, 2e-6 * exact)
          << "accumulated, n " << n << " j " << j;
  }
}

// GLU epilogues: act(x·wᵀ + bias) * gate + residual, also accumulated in
// place (y is the residual).
TEST_F(MatmulTest, GatedLinearForward) {
  uint32_t seed = 450;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 7, 63},
                         {65, 63, 7},
                         {63, 130, 65}})
    for (int32_t act : {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_SILU,
                        TXRT_ACTIVATION_GELU, TXRT_ACTIVATION_GELU_TANH,
                        TXRT_ACTIVATION_RELU})
      for (int residual : {0, 1, 2}) { // none, separate, in place
        for (bool bias : {false, true}) {
          SCOPED_TRACE("m=" + std::to_string(m) + " act=" +
                       std::to_string(act) + " residual=" +
                       std::to_string(residual) + " bias=" +
                       std::to_string(bias));
          Floats x = randomFloats(m * k, seed++),
                 w = randomFloats(n * k, seed++), b = randomFloats(n, seed++),
                 g = randomFloats(m * n, seed++),
                 r = randomFloats(m * n, seed++);
          Floats y = residual == 2 ? r : Floats(m * n);
          const float *res = residual == 0   ? nullptr
                             : residual == 1 ? r.data()
                                             : y.data();
          expectOk(txrt_linear_gated_fwd(ctx_, seed, m, n, k, x.data(),
                                         w.data(), bias ? b.data() : nullptr,
                                         act, g.data(), res, y.data()));
          Floats zero(n, 0.0f);
          Doubles expected =
              referenceLinear(m, n, k, toDoubles(x), toDoubles(w),
                              toDoubles(bias ? b : zero));
          for (int64_t i = 0; i < m * n; ++i)
            expected[i] = activate(act, expected[i]) * g[i] +
                          (residual ? r[i] : 0.0);
          expectClose(y, expected, 1e-4, 1e-4, "gated linear");
        }
      }
}

TEST_F(MatmulTest, GatedLinearRejectsBadGates) {
  Floats x(4 * 3, 1.0f), w(2 * 3, 1.0f), y(4 * 2);
  EXPECT_EQ(txrt_linear_gated_fwd(ctx_, 0, 4, 2, 3, x.data(), w.data(),
                                  nullptr, TXRT_ACTIVATION_SILU, nullptr,
                                  nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_linear_gated_fwd(ctx_, 0, 4, 2, 3, x.data(), w.data(),
                                  nullptr, TXRT_ACTIVATION_SILU, y.data(),
                                  nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_linear_gated_fwd(ctx_, 0, 4, 2, 3, x.data(), w.data(),
                                  nullptr, 99, x.data(), nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(MatmulTest, LinearBackwardMatchesFiniteDifferences) {
  const int64_t m = 3, n = 4, k = 5;
  Floats x = randomFloats(m * k, 500), w = randomFloats(n * k, 501),
         bias = randomFloats(n, 502), dy = randomFloats(m * n, 503);
  Floats dx(m * k), dw(n * k), db(n);
  expectOk(txrt_linear_bwd(ctx_, 1, m, n, k, x.data(), w.data(), dy.data(),
                           dx.data(), dw.data(), db.data(), 0, 0));
  Doubles xd = toDoubles(x), wd = toDoubles(w), bd = toDoubles(bias);
  expectClose(
      dx,
      vjpByFiniteDifferences(
          [&](const Doubles &p) { return referenceLinear(m, n, k, p, wd, bd); },
          xd, dy),
      1e-5, 1e-4, "dx");
  expectClose(
      dw,
      vjpByFiniteDifferences(
          [&](const Doubles &p) { return referenceLinear(m, n, k, xd, p, bd); },
          wd, dy),
      1e-5, 1e-4, "dw");
  expectClose(
      db,
      vjpByFiniteDifferences(
          [&](const Doubles &p) { return referenceLinear(m, n, k, xd, wd, p); },
          bd, dy),
      1e-5, 1e-4, "dbias");
}

TEST_F(MatmulTest, LinearBackwardLargeShapesAndAccumulation) {
  const int64_t m = 65, n = 63, k = 7;
  Floats x = randomFloats(m * k, 600), w = randomFloats(n * k, 601),
         dy = randomFloats(m * n, 602);
  Floats dx = randomFloats(m * k, 603), dw = randomFloats(n * k, 604),
         db = randomFloats(n, 605);
  Doubles dxExpected = toDoubles(dx), dwExpected = toDoubles(dw),
          dbExpected = toDoubles(db);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      dbExpected[j] += dy[i * n + j];
      for (int64_t p = 0; p < k; ++p) {
        dxExpected[i * k + p] += double(dy[i * n + j]) * w[j * k + p];
        dwExpected[j * k + p] += double(dy[i * n + j]) * x[i * k + p];
      }
    }
  expectOk(txrt_linear_bwd(ctx_, 2, m, n, k, x.data(), w.data(), dy.data(),
                           dx.data(), dw.data(), db.data(), 1, 1));
  expectClose(dx, dxExpected, 1e-4, 1e-4, "dx accumulated");
  expectClose(dw, dwExpected, 1e-4, 1e-4, "dw accumulated");
  expectClose(db, dbExpected, 1e-4, 1e-4, "dbias accumulated");

  // Only dw requested: dx and db untouched.
  Floats dxUntouched = dx, dbUntouched = db;
  expectOk(txrt_linear_bwd(ctx_, 2, m, n, k, x.data(), nullptr, dy.data(),
                           nullptr, dw.data(), nullptr, 0, 0));
  EXPECT_EQ(dx, dxUntouched);
  EXPECT_EQ(db, dbUntouched);
}

} // namespace

//===----------------------------------------------------------------------===//
// Which products split over k
//===----------------------------------------------------------------------===//

TEST_F(MatmulTest, LargeOutputsKeepTheWholeProductOnBrgemm) {
  // base.tx's data gradient dx = dy . W of the first FFN linear (512 tokens,
  // d_ff 2048, d_model 512): k is 4x the sides, but the 512x512 output has
  // blocks enough for every thread; split, its k slices (A with row stride
  // 2048) fell back to gemm:jit. A small output with a long k still splits.
  txrt::MatmulSpec large;
  large.m = 512;
  large.n = 512;
  large.k = 2048;
  large.aStrides = {0, 0, 2048, 1};
  large.bStrides = {0, 0, 512, 1};
  large.cStrides = {0, 0, 512, 1};
  txrt::MatmulPlan whole(*ctx_, large);
  EXPECT_FALSE(whole.splitsOverK());
  // The same product dense and square picks oneDNN's best; the large one
  // must get the same (brgemm where the CPU has AVX-512).
  txrt::MatmulSpec square = large;
  square.k = 512;
  square.aStrides = {0, 0, 512, 1};
  txrt::MatmulPlan reference(*ctx_, square);
  EXPECT_STREQ(whole.implementation(), reference.implementation());

  txrt::MatmulSpec small = large;
  small.m = 63;
  small.n = 65;
  small.aStrides = {0, 0, 2048, 1};
  small.bStrides = {0, 0, 65, 1};
  small.cStrides = {0, 0, 65, 1};
  EXPECT_TRUE(txrt::MatmulPlan(*ctx_, small).splitsOverK());
}

// A product over an empty contraction (k = 0, an empty sequence in
// `matmul(transpose(x), x)`) is the epilogue of zeros: alpha . 0 + bias,
// activated, plus the residual and beta . c. The kernel returned early and
// left c holding whatever it held.
TEST_F(MatmulTest, EmptyContractionIsTheEpilogueOfZeros) {
  uint32_t seed = 900;
  for (int32_t act : {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_GELU})
    for (bool bias : {false, true})
      for (bool residual : {false, true})
        for (float beta : {0.0f, 1.0f}) {
          MatmulCase mc;
          mc.batch1 = 2;
          mc.m = 3;
          mc.n = 5;
          mc.k = 0;
          mc.a = {0, 3, 1, 1};
          mc.b = {0, 5, 5, 1};
          mc.c = {0, 15, 5, 1};
          mc.bias = bias;
          mc.activation = act;
          mc.residual = residual;
          mc.beta = beta;
          SCOPED_TRACE("act=" + std::to_string(act) +
                       " bias=" + std::to_string(bias) +
                       " residual=" + std::to_string(residual) +
                       " beta=" + std::to_string(beta));
          mc.check(ctx_, seed++);
        }
}

// A linear over k = 0 features: y = act(bias) + residual (and the gate).
TEST_F(MatmulTest, LinearOverNoFeaturesIsItsEpilogue) {
  const int64_t m = 3, n = 5;
  Floats bias = randomFloats(n, 1), r = randomFloats(m * n, 2),
         gate = randomFloats(m * n, 3), one(1, 0.5f);
  Floats y(m * n, 7.0f), gated(m * n, 7.0f);
  expectOk(txrt_linear_fwd(ctx_, 1, m, n, 0, one.data(), one.data(),
                           bias.data(), TXRT_ACTIVATION_SILU, r.data(),
                           y.data()));
  expectOk(txrt_linear_gated_fwd(ctx_, 2, m, n, 0, one.data(), one.data(),
                                 bias.data(), TXRT_ACTIVATION_NONE, gate.data(),
                                 nullptr, gated.data()));
  Doubles expected(m * n), expectedGated(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      expected[i * n + j] =
          activate(TXRT_ACTIVATION_SILU, bias[j]) + r[i * n + j];
      expectedGated[i * n + j] = double(bias[j]) * gate[i * n + j];
    }
  expectClose(y, expected, 1e-6, 1e-6, "y");
  expectClose(gated, expectedGated, 1e-6, 1e-6, "gated");
}

// A linear's backward when a size is 0: a gradient summed over nothing is
// zeros (an empty batch, m = 0: dw and dbias; no outputs, n = 0: dx), left
// as it is when accumulating; with k = 0 dbias still sums dy's rows. The
// kernel returned early, leaving each gradient as the buffer held it.
TEST_F(MatmulTest, LinearBackwardOverEmptySizes) {
  const int64_t m = 3, n = 5, k = 4;
  const float stale = 3.0f;
  Floats one(1, 0.5f), dy = randomFloats(m * n, 4);
  for (bool accumulate : {false, true}) {
    SCOPED_TRACE(accumulate ? "accumulating" : "overwriting");
    const float kept = accumulate ? stale : 0.0f;
    // m = 0: no rows.
    Floats dw(n * k, stale), dbias(n, stale);
    expectOk(txrt_linear_bwd(ctx_, 1, 0, n, k, one.data(), one.data(),
                             one.data(), one.data(), dw.data(), dbias.data(),
                             accumulate, accumulate));
    expectClose(dw, Doubles(n * k, kept), 0, 0, "dw, m = 0");
    expectClose(dbias, Doubles(n, kept), 0, 0, "dbias, m = 0");
    // n = 0: no outputs.
    Floats dx(m * k, stale);
    expectOk(txrt_linear_bwd(ctx_, 2, m, 0, k, one.data(), one.data(),
                             one.data(), dx.data(), one.data(), nullptr,
                             accumulate, accumulate));
    expectClose(dx, Doubles(m * k, kept), 0, 0, "dx, n = 0");
    // k = 0: no features; the bias gradient sums dy's rows.
    Floats db(n, stale);
    expectOk(txrt_linear_bwd(ctx_, 3, m, n, 0, one.data(), one.data(),
                             dy.data(), one.data(), one.data(), db.data(),
                             accumulate, accumulate));
    Doubles sums(n, kept);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        sums[j] += dy[i * n + j];
    expectClose(db, sums, 1e-6, 1e-6, "dbias, k = 0");
  }
}
