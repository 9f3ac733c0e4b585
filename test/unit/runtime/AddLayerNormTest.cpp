//===- AddLayerNormTest.cpp - fused residual add + layer norm -------------===//
#include "TestUtil.h"

#include <cmath>
#include <string>

using namespace txrt_test;

namespace {

Doubles referenceAddLayerNorm(int64_t rows, int64_t cols, const Doubles &x,
                              const Doubles &r, const Doubles &gamma,
                              const Doubles &beta, double eps,
                              Doubles *mean = nullptr, Doubles *var = nullptr) {
  Doubles y(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double mu = 0, sq = 0;
    for (int64_t j = 0; j < cols; ++j)
      mu += x[i * cols + j] + r[i * cols + j];
    mu /= cols;
    for (int64_t j = 0; j < cols; ++j) {
      double d = x[i * cols + j] + r[i * cols + j] - mu;
      sq += d * d;
    }
    double v = sq / cols;
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = (x[i * cols + j] + r[i * cols + j] - mu) /
                            std::sqrt(v + eps) * gamma[j] +
                        beta[j];
    if (mean)
      (*mean)[i] = mu, (*var)[i] = v;
  }
  return y;
}

class AddLayerNormTest : public RuntimeTest {};

TEST_F(AddLayerNormTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{1, 1}, {7, 63}, {65, 65}, {4, 512}}) {
    Floats x = randomFloats(rows * cols, seed++, -2, 2),
           r = randomFloats(rows * cols, seed++, -1, 3);
    Floats gamma = randomFloats(cols, seed++),
           beta = randomFloats(cols, seed++);
    Floats y(rows * cols), sum(rows * cols), mean(rows), var(rows);
    expectOk(txrt_add_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                     gamma.data(), beta.data(), 1e-5f, y.data(),
                                     sum.data(), mean.data(), var.data()));
    Doubles meanRef(rows), varRef(rows);
    Doubles expected = referenceAddLayerNorm(
        rows, cols, toDoubles(x), toDoubles(r), toDoubles(gamma),
        toDoubles(beta), 1e-5, &meanRef, &varRef);
    expectClose(y, expected, 1e-4, 1e-4, "y");
    Doubles sumRef(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      sumRef[i] = double(x[i] + r[i]);
    expectClose(sum, sumRef, 0, 0, "sum");
    expectClose(mean, meanRef, 1e-5, 1e-5, "mean");
    expectClose(var, varRef, 1e-5, 1e-4, "var");

    // No bias (nn.LayerNorm(bias=False)): beta NULL.
    Floats noShift(rows * cols);
    expectOk(txrt_add_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                     gamma.data(), nullptr, 1e-5f,
                                     noShift.data(), nullptr, nullptr,
                                     nullptr));
    Doubles unshifted = referenceAddLayerNorm(
        rows, cols, toDoubles(x), toDoubles(r), toDoubles(gamma),
        Doubles(cols, 0.0), 1e-5);
    expectClose(noShift, unshifted, 1e-4, 1e-4, "y without bias");

    // In place over x, no sum, inference.
    Floats inPlace = x;
    expectOk(txrt_add_layer_norm_fwd(
        ctx_, 1, rows, cols, inPlace.data(), r.data(), gamma.data(),
        beta.data(), 1e-5f, inPlace.data(), nullptr, nullptr, nullptr));
    expectClose(inPlace, expected, 1e-4, 1e-4, "y in place");
  }
}

TEST_F(AddLayerNormTest, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 3, cols = 7;
  const float eps = 1e-5f;
  Floats x = randomFloats(rows * cols, 20, -2, 2),
         r = randomFloats(rows * cols, 21);
  Floats gamma = randomFloats(cols, 22), beta = randomFloats(cols, 23);
  Floats dy = randomFloats(rows * cols, 24),
         dsum = randomFloats(rows * cols, 25);
  Floats y(rows * cols), sum(rows * cols), mean(rows), var(rows);
  expectOk(txrt_add_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                   gamma.data(), beta.data(), eps, y.data(),
                                   sum.data(), mean.data(), var.data()));
  Doubles xd = toDoubles(x), rd = toDoubles(r), gd = toDoubles(gamma),
          bd = toDoubles(beta);
  auto f = [&](const Doubles &xs, const Doubles &gs, const Doubles &bs) {
    return referenceAddLayerNorm(rows, cols, xs, rd, gs, bs, eps);
  };
  Doubles dxExpected = vjpByFiniteDifferences(
      [&](const Doubles &p) { return f(p, gd, bd); }, xd, dy);
  Doubles dgExpected = vjpByFiniteDifferences(
      [&](const Doubles &p) { return f(xd, p, bd); }, gd, dy);
  Doubles dbExpected = vjpByFiniteDifferences(
      [&](const Doubles &p) { return f(xd, gd, p); }, bd, dy);

  for (bool useSum : {false, true})
    for (bool saved : {true, false}) { // saved statistics, or recomputed
      SCOPED_TRACE(useSum ? "from sum" : "from x + r");
      SCOPED_TRACE(saved ? "saved mean/var" : "recomputed mean/var");
      Floats dx(rows * cols), dgamma(cols), dbeta(cols);
      expectOk(txrt_add_layer_norm_bwd(
          ctx_, 2, rows, cols, useSum ? nullptr : x.data(),
          useSum ? nullptr : r.data(), useSum ? sum.data() : nullptr,
          gamma.data(), saved ? mean.data() : nullptr,
          saved ? var.data() : nullptr, eps, dy.data(), nullptr, dx.data(),
          dgamma.data(), dbeta.data(), 0, 0));
      expectClose(dx, dxExpected, 1e-4, 1e-3, "dx");
      expectClose(dgamma, dgExpected, 1e-4, 1e-3, "dgamma");
      expectClose(dbeta, dbExpected, 1e-4, 1e-3, "dbeta");
    }

  // The gradient of the returned sum adds to ds; accumulation adds to dx.
  Floats dx = randomFloats(rows * cols, 26), dgamma(cols, 1.0f),
         dbeta(cols, -1.0f);
  Doubles expected(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    expected[i] = dx[i] + dxExpected[i] + dsum[i];
  expectOk(txrt_add_layer_norm_bwd(
      ctx_, 2, rows, cols, x.data(), r.data(), nullptr, gamma.data(),
      mean.data(), var.data(), eps, dy.data(), dsum.data(), dx.data(),
      dgamma.data(), dbeta.data(), 1, 1));
  expectClose(dx, expected, 1e-4, 1e-3, "dx with dsum, accumulated");
  Doubles g1(cols), b1(cols);
  for (int64_t j = 0; j < cols; ++j)
    g1[j] = 1.0 + dgExpected[j], b1[j] = -1.0 + dbExpected[j];
  expectClose(dgamma, g1, 1e-4, 1e-3, "dgamma accumulated");
  expectClose(dbeta, b1, 1e-4, 1e-3, "dbeta accumulated");
}

// Without saved statistics the backward recomputes the forward's own mean
// and variance, bit for bit, so its gradients are those of the forward that
// ran: identical to the backward given the saved ones. Widths around the
// vector blocks (1, 15, 16, 17, 33 ... 1000) and values of mixed size,
// whose sums depend on the order they are added in.
TEST_F(AddLayerNormTest, RecomputedStatisticsAreTheForwards) {
  const float eps = 1e-5f;
  for (int64_t cols : {1, 7, 15, 16, 17, 31, 32, 33, 63, 512, 1000}) {
    SCOPED_TRACE("cols " + std::to_string(cols));
    const int64_t rows = 5;
    Floats x = randomFloats(rows * cols, 30, -300, 300),
           r = randomFloats(rows * cols, 31, -1e-3f, 1e-3f);
    Floats gamma = randomFloats(cols, 32), beta = randomFloats(cols, 33);
    Floats dy = randomFloats(rows * cols, 34);
    Floats y(rows * cols), sum(rows * cols), mean(rows), var(rows);
    expectOk(txrt_add_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                     gamma.data(), beta.data(), eps, y.data(),
                                     sum.data(), mean.data(), var.data()));
    Floats dxSaved(rows * cols), dgSaved(cols), dbSaved(cols);
    expectOk(txrt_add_layer_norm_bwd(
        ctx_, 2, rows, cols, x.data(), r.data(), nullptr, gamma.data(),
        mean.data(), var.data(), eps, dy.data(), nullptr, dxSaved.data(),
        dgSaved.data(), dbSaved.data(), 0, 0));
    for (bool useSum : {false, true}) {
      SCOPED_TRACE(useSum ? "from sum" : "from x + r");
      Floats dx(rows * cols), dgamma(cols), dbeta(cols);
      expectOk(txrt_add_layer_norm_bwd(
          ctx_, 2, rows, cols, useSum ? nullptr : x.data(),
          useSum ? nullptr : r.data(), useSum ? sum.data() : nullptr,
          gamma.data(), nullptr, nullptr, eps, dy.data(), nullptr, dx.data(),
          dgamma.data(), dbeta.data(), 0, 0));
      EXPECT_EQ(dx, dxSaved);
      EXPECT_EQ(dgamma, dgSaved);
      EXPECT_EQ(dbeta, dbSaved);
    }
  }
}

TEST_F(AddLayerNormTest, AgreesWithAddThenLayerNorm) {
  const int64_t rows = 65, cols = 63;
  Floats x = randomFloats(rows * cols, 30), r = randomFloats(rows * cols, 31);
  Floats gamma = randomFloats(cols, 32), beta = randomFloats(cols, 33),
         dy = randomFloats(rows * cols, 34);
  Floats y(rows * cols), mean(rows), var(rows);
  expectOk(txrt_add_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                   gamma.data(), beta.data(), 1e-5f, y.data(),
                                   nullptr, mean.data(), var.data()));
  Floats s(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    s[i] = x[i] + r[i];
  Floats yRef(rows * cols), meanRef(rows), varRef(rows);
  expectOk(txrt_layer_norm_fwd(ctx_, 2, rows, cols, s.data(), gamma.data(),
                               beta.data(), 1e-5f, yRef.data(), meanRef.data(),
                               varRef.data()));
  expectClose(y, toDoubles(yRef), 1e-5, 1e-4, "y vs oneDNN");
  Floats dx(rows * cols), dg(cols), db(cols), dxRef(rows * cols), dgRef(cols),
      dbRef(cols);
  expectOk(txrt_add_layer_norm_bwd(ctx_, 3, rows, cols, x.data(), r.data(),
                                   nullptr, gamma.data(), mean.data(),
                                   var.data(), 1e-5f, dy.data(), nullptr,
                                   dx.data(), dg.data(), db.data(), 0, 0));
  expectOk(txrt_layer_norm_bwd(ctx_, 4, rows, cols, s.data(), gamma.data(),
                               meanRef.data(), varRef.data(), 1e-5f, dy.data(),
                               dxRef.data(), dgRef.data(), dbRef.data(), 0, 0));
  expectClose(dx, toDoubles(dxRef), 1e-4, 1e-3, "dx vs oneDNN");
  expectClose(dg, toDoubles(dgRef), 1e-4, 1e-3, "dgamma vs oneDNN");
  expectClose(db, toDoubles(dbRef), 1e-4, 1e-3, "dbeta vs oneDNN");
}

TEST_F(AddLayerNormTest, ParameterGradientsSumManyRowsInBlocks) {
  // dgamma and dbeta sum over every row: a float accumulator per column
  // over a thread's 65536 rows drifted (dbeta 7e-6 off float64 here, with
  // a gradient of one sign). Now float for 128 rows, then double.
  const int64_t rows = 131072, cols = 8;
  Floats x = randomFloats(rows * cols, 21), r = randomFloats(rows * cols, 22);
  Floats gamma = randomFloats(cols, 23);
  Floats dy = randomFloats(rows * cols, 24, 0.5f, 1.5f);
  Floats dx(rows * cols), dgamma(cols), dbeta(cols);
  expectOk(txrt_add_layer_norm_bwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                   nullptr, gamma.data(), nullptr, nullptr,
                                   1e-5f, dy.data(), nullptr, dx.data(),
                                   dgamma.data(), dbeta.data(), 0, 0));
  Doubles mean(rows), var(rows);
  referenceAddLayerNorm(rows, cols, toDoubles(x), toDoubles(r),
                        Doubles(cols, 1.0), Doubles(cols, 0.0), 1e-5, &mean,
                        &var);
  for (int64_t j = 0; j < cols; ++j) {
    double g = 0, gScale = 0, b = 0, bScale = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const double s = double(x[i * cols + j]) + r[i * cols + j];
      const double term =
          dy[i * cols + j] * (s - mean[i]) / std::sqrt(var[i] + 1e-5);
      g += term, gScale += std::fabs(term);
      b += dy[i * cols + j], bScale += std::fabs(dy[i * cols + j]);
    }
    EXPECT_LT(std::fabs(dgamma[j] - g), 2e-6 * gScale)
        << "dgamma column " << j << ": " << dgamma[j] << " against " << g;
    EXPECT_LT(std::fabs(dbeta[j] - b), 2e-6 * bScale)
        << "dbeta column " << j << ": " << dbeta[j] << " against " << b;
  }
}

} // namespace

// No rows: zero parameter gradients (kept when accumulating), as
// LayerNormTest checks of the plain norm.
TEST_F(AddLayerNormTest, BackwardOverNoRowsZeroesTheParameterGradients) {
  const int64_t cols = 6;
  Floats one(1, 0.5f), gamma(cols, 1.0f);
  for (bool accumulate : {false, true}) {
    Floats dgamma(cols, 3.0f), dbeta(cols, 3.0f);
    expectOk(txrt_add_layer_norm_bwd(
        ctx_, 1, 0, cols, one.data(), one.data(), nullptr, gamma.data(),
        nullptr, nullptr, 1e-5f, one.data(), nullptr, one.data(), dgamma.data(),
        dbeta.data(), accumulate, accumulate));
    Doubles kept(cols, accumulate ? 3.0 : 0.0);
    expectClose(dgamma, kept, 0, 0, "dgamma");
    expectClose(dbeta, kept, 0, 0, "dbeta");
  }
}

// Rows wider than a float accumulator's reach: the mean and variance of a
// row of 2^17 values sum in blocks, the blocks' sums in double (as rms_norm
// and the reductions sum, VecMath.h's blockedSum). Each vector lane summed
// cols / 16 values in float: here the mean was 1.4e-7 off float64 and y
// 7.5e-7 (now 1.9e-8 and 4.0e-7), dx 4.5e-6 of its largest (now 9e-7).
// A tester's rows of 65536 were 8x torch's error.
TEST_F(AddLayerNormTest, LongRowsSumInBlocks) {
  const int64_t rows = 2, cols = 131072;
  Floats x = randomFloats(rows * cols, 31, 0.5f, 1.5f),
         r = randomFloats(rows * cols, 32, 0.0f, 1.0f);
  Floats gamma(cols, 1.0f), beta(cols, 0.0f);
  Floats y(rows * cols), mean(rows), var(rows);
  expectOk(txrt_add_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), r.data(),
                                   gamma.data(), beta.data(), 0.0f, y.data(),
                                   nullptr, mean.data(), var.data()));
  Doubles meanRef(rows), varRef(rows);
  Doubles expected = referenceAddLayerNorm(
      rows, cols, toDoubles(x), toDoubles(r), toDoubles(gamma), toDoubles(beta),
      0.0, &meanRef, &varRef);
  double worst = 0;
  for (int64_t i = 0; i < rows * cols; ++i)
    worst = std::max(worst, std::fabs(y[i] - expected[i]) /
                                std::max(1.0, std::fabs(expected[i])));
  EXPECT_LT(worst, 5e-7);
  for (int64_t i = 0; i < rows; ++i) {
    EXPECT_LT(std::fabs(mean[i] - meanRef[i]), 2e-7 * meanRef[i]);
    EXPECT_LT(std::fabs(var[i] - varRef[i]), 4e-7 * varRef[i]);
  }
  // The backward: dy of one sign, so the row sums of dy * gamma drift too.
  Floats dy = randomFloats(rows * cols, 33, 0.5f, 1.5f);
  Floats dx(rows * cols);
  expectOk(txrt_add_layer_norm_bwd(
      ctx_, 2, rows, cols, x.data(), r.data(), nullptr, gamma.data(), nullptr,
      nullptr, 0.0f, dy.data(), nullptr, dx.data(), nullptr, nullptr, 0, 0));
  double worstDx = 0, scale = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const double rstd = 1.0 / std::sqrt(varRef[i]);
    double a = 0, b = 0;
    for (int64_t j = 0; j < cols; ++j) {
      a += dy[i * cols + j];
      b += dy[i * cols + j] * expected[i * cols + j]; // xhat
    }
    a /= cols, b /= cols;
    for (int64_t j = 0; j < cols; ++j) {
      const double ds =
          rstd * (dy[i * cols + j] - a - expected[i * cols + j] * b);
      worstDx = std::max(worstDx, std::fabs(dx[i * cols + j] - ds));
      scale = std::max(scale, std::fabs(ds));
    }
  }
  EXPECT_LT(worstDx, 2e-6 * scale);
}
