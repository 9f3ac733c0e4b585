//===- LayerNormTest.cpp - txrt_layer_norm_fwd / _bwd ---------------------===//
#include "TestUtil.h"

#include <cmath>

using namespace txrt_test;

namespace {

/// The reference layer norm (biased variance); mean/var out when given.
Doubles referenceLayerNorm(int64_t rows, int64_t cols, const Doubles &x,
                           const Doubles &gamma, const Doubles &beta,
                           double eps, Doubles *mean = nullptr,
                           Doubles *var = nullptr) {
  Doubles y(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double mu = 0, sq = 0;
    for (int64_t j = 0; j < cols; ++j)
      mu += x[i * cols + j];
    mu /= cols;
    for (int64_t j = 0; j < cols; ++j)
      sq += (x[i * cols + j] - mu) * (x[i * cols + j] - mu);
    double v = sq / cols;
    for (int64_t j = 0; j < cols; ++j) {
      double value = (x[i * cols + j] - mu) / std::sqrt(v + eps);
      if (!gamma.empty())
        value *= gamma[j];
      if (!beta.empty())
        value += beta[j];
      y[i * cols + j] = value;
    }
    if (mean)
      (*mean)[i] = mu, (*var)[i] = v;
  }
  return y;
}

class LayerNormTest : public RuntimeTest {};

TEST_F(LayerNormTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{1, 7}, {7, 63}, {65, 65}, {3, 512}})
    for (bool affine : {false, true}) {
      Floats x = randomFloats(rows * cols, seed++, -2, 3);
      Floats gamma = randomFloats(cols, seed++),
             beta = randomFloats(cols, seed++);
      Floats y(rows * cols), mean(rows), var(rows);
      expectOk(txrt_layer_norm_fwd(ctx_, seed, rows, cols, x.data(),
                                   affine ? gamma.data() : nullptr,
                                   affine ? beta.data() : nullptr, 1e-5f,
                                   y.data(), mean.data(), var.data()));
      Doubles meanRef(rows), varRef(rows);
      Doubles expected = referenceLayerNorm(
          rows, cols, toDoubles(x), affine ? toDoubles(gamma) : Doubles(),
          affine ? toDoubles(beta) : Doubles(), 1e-5, &meanRef, &varRef);
      expectClose(y, expected, 1e-4, 1e-4, "y");
      expectClose(mean, meanRef, 1e-5, 1e-5, "mean");
      expectClose(var, varRef, 1e-5, 1e-4, "var");
      // Inference: no statistics.
      Floats yInfer(rows * cols);
      expectOk(txrt_layer_norm_fwd(ctx_, seed, rows, cols, x.data(),
                                   affine ? gamma.data() : nullptr,
                                   affine ? beta.data() : nullptr, 1e-5f,
                                   yInfer.data(), nullptr, nullptr));
      expectClose(yInfer, expected, 1e-4, 1e-4, "y (inference)");
    }
}

TEST_F(LayerNormTest, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 3, cols = 7;
  const float eps = 1e-5f;
  Floats x = randomFloats(rows * cols, 10, -2, 2);
  Floats gamma = randomFloats(cols, 11), beta = randomFloats(cols, 12);
  Floats dy = randomFloats(rows * cols, 13);
  Floats y(rows * cols), mean(rows), var(rows);
  expectOk(txrt_layer_norm_fwd(ctx_, 1, rows, cols, x.data(), gamma.data(),
                               beta.data(), eps, y.data(), mean.data(),
                               var.data()));
  Doubles xd = toDoubles(x), gd = toDoubles(gamma), bd = toDoubles(beta);
  auto f = [&](const Doubles &xs, const Doubles &gs, const Doubles &bs) {
    return referenceLayerNorm(rows, cols, xs, gs, bs, eps);
  };
  // With none of the forward's statistics (recomputed from x), then with
  // the saved ones, whose results the accumulation check below reuses.
  Floats dx(rows * cols), dgamma(cols), dbeta(cols);
  for (bool saved : {false, true}) {
    SCOPED_TRACE(saved ? "saved mean/var" : "recomputed mean/var");
    expectOk(txrt_layer_norm_bwd(ctx_, 2, rows, cols, x.data(), gamma.data(),
                                 saved ? mean.data() : nullptr,
                                 saved ? var.data() : nullptr, eps, dy.data(),
                                 dx.data(), dgamma.data(), dbeta.data(), 0, 0));
    expectClose(dx,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) { return f(p, gd, bd); }, xd, dy),
                1e-4, 1e-3, "dx");
    expectClose(dgamma,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) { return f(xd, p, bd); }, gd, dy),
                1e-4, 1e-3, "dgamma");
    expectClose(dbeta,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) { return f(xd, gd, p); }, bd, dy),
                1e-4, 1e-3, "dbeta");
  }

  // Accumulation adds exactly the same gradients once more.
  Floats dx2 = dx, dgamma2 = dgamma, dbeta2 = dbeta;
  expectOk(txrt_layer_norm_bwd(
      ctx_, 3, rows, cols, x.data(), gamma.data(), mean.data(), var.data(), eps,
      dy.data(), dx2.data(), dgamma2.data(), dbeta2.data(), 1, 1));
  Doubles twice(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    twice[i] = 2.0 * dx[i];
  expectClose(dx2, twice, 1e-5, 1e-5, "dx accumulated");
  Doubles g2(cols), b2(cols);
  for (int64_t j = 0; j < cols; ++j)
    g2[j] = 2.0 * dgamma[j], b2[j] = 2.0 * dbeta[j];
  expectClose(dgamma2, g2, 1e-5, 1e-5, "dgamma accumulated");
  expectClose(dbeta2, b2, 1e-5, 1e-5, "dbeta accumulated");

  // Data gradient only, and no scale at all.
  Floats dxOnly(rows * cols);
  expectOk(txrt_layer_norm_bwd(ctx_, 4, rows, cols, x.data(), gamma.data(),
                               mean.data(), var.data(), eps, dy.data(),
                               dxOnly.data(), nullptr, nullptr, 0, 0));
  expectClose(dxOnly, toDoubles(dx), 1e-5, 1e-5, "dx without params");
  Floats dxPlain(rows * cols);
  expectOk(txrt_layer_norm_bwd(ctx_, 5, rows, cols, x.data(), nullptr,
                               mean.data(), var.data(), eps, dy.data(),
                               dxPlain.data(), nullptr, nullptr, 0, 0));
  expectClose(dxPlain,
              vjpByFiniteDifferences(
                  [&](const Doubles &p) { return f(p, {}, {}); }, xd, dy),
              1e-4, 1e-3, "dx without scale");
}

TEST_F(LayerNormTest, ParameterGradientsSumManyRowsInBlocks) {
  // dgamma and dbeta sum over every row (131072 here) within a few float
  // roundings of float64, not one float accumulator's drift over the rows.
  const int64_t rows = 131072, cols = 8;
  Floats x = randomFloats(rows * cols, 21), gamma = randomFloats(cols, 23);
  Floats beta = randomFloats(cols, 25);
  Floats dy = randomFloats(rows * cols, 24, 0.5f, 1.5f);
  Floats dx(rows * cols), dgamma(cols), dbeta(cols);
  expectOk(txrt_layer_norm_bwd(ctx_, 1, rows, cols, x.data(), gamma.data(),
                               nullptr, nullptr, 1e-5f, dy.data(), dx.data(),
                               dgamma.data(), dbeta.data(), 0, 0));
  Doubles mean(rows), var(rows);
  referenceLayerNorm(rows, cols, toDoubles(x), {}, {}, 1e-5, &mean, &var);
  for (int64_t j = 0; j < cols; ++j) {
    double g = 0, gScale = 0, b = 0, bScale = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const double term = dy[i * cols + j] * (x[i * cols + j] - mean[i]) /
                          std::sqrt(var[i] + 1e-5);
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

// No rows (an empty batch): the parameter gradients sum over none, so they
// are zeros (kept when accumulating). They were left as the buffers held
// them, and the whole train step's gradients with them.
TEST_F(LayerNormTest, BackwardOverNoRowsZeroesTheParameterGradients) {
  const int64_t cols = 6;
  Floats one(1, 0.5f), gamma(cols, 1.0f);
  for (bool accumulate : {false, true}) {
    Floats dgamma(cols, 3.0f), dbeta(cols, 3.0f);
    expectOk(txrt_layer_norm_bwd(ctx_, 1, 0, cols, one.data(), gamma.data(),
                                 nullptr, nullptr, 1e-5f, one.data(),
                                 one.data(), dgamma.data(), dbeta.data(),
                                 accumulate, accumulate));
    Doubles kept(cols, accumulate ? 3.0 : 0.0);
    expectClose(dgamma, kept, 0, 0, "dgamma");
    expectClose(dbeta, kept, 0, 0, "dbeta");
  }
}
