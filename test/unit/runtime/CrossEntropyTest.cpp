//===- CrossEntropyTest.cpp - fused log-softmax + NLL, smoothing, ignore --===//
#include "TestUtil.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace txrt_test;

namespace {

/// PyTorch's F.cross_entropy(logits, targets, ignore_index, label_smoothing,
/// reduction) in double precision.
double referenceCrossEntropy(int64_t n, int64_t classes, const Doubles &z,
                             const std::vector<int32_t> &targets,
                             int32_t ignore, double eps, bool mean,
                             Doubles *rowLoss = nullptr) {
  double total = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (rowLoss)
      (*rowLoss)[i] = 0;
    if (targets[i] == ignore)
      continue;
    double m = z[i * classes];
    for (int64_t j = 1; j < classes; ++j)
      m = std::max(m, z[i * classes + j]);
    double sum = 0, smooth = 0;
    for (int64_t j = 0; j < classes; ++j)
      sum += std::exp(z[i * classes + j] - m);
    double lse = m + std::log(sum);
    for (int64_t j = 0; j < classes; ++j)
      smooth += lse - z[i * classes + j];
    double loss = (1 - eps) * (lse - z[i * classes + targets[i]]) +
                  eps * smooth / double(classes);
    if (rowLoss)
      (*rowLoss)[i] = loss;
    total += loss;
    ++count;
  }
  return mean ? (count ? total / double(count) : 0.0) : total;
}

class CrossEntropyTest : public RuntimeTest {};

TEST_F(CrossEntropyTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (auto [n, classes] :
       {std::pair<int64_t, int64_t>{1, 1}, {7, 63}, {65, 65}, {33, 8000}})
    for (float eps : {0.0f, 0.1f})
      for (int32_t reduction : {TXRT_LOSS_MEAN, TXRT_LOSS_SUM}) {
        Floats z = randomFloats(n * classes, seed++, -4, 4);
        std::vector<int32_t> targets(n);
        for (int64_t i = 0; i < n; ++i)
          targets[i] = int32_t((i * 7 + 3) % classes);
        const int32_t ignore = 0; // the padding id: some rows ignored
        if (n > 2)
          targets[2] = ignore;
        float loss = -1;
        int64_t count = -1;
        Floats lse(n), rowLoss(n);
        expectOk(txrt_cross_entropy_fwd(
            ctx_, 1, n, classes, z.data(), targets.data(), ignore, eps,
            reduction, &loss, lse.data(), rowLoss.data(), &count));
        Doubles rowRef(n);
        double expected =
            referenceCrossEntropy(n, classes, toDoubles(z), targets, ignore,
                                  eps, reduction == TXRT_LOSS_MEAN, &rowRef);
        int64_t expectedCount = 0;
        for (int32_t t : targets)
          expectedCount += t != ignore;
        EXPECT_EQ(count, expectedCount);
        EXPECT_NEAR(loss, expected, 1e-5 + 1e-5 * std::fabs(expected))
            << "n=" << n << " classes=" << classes << " eps=" << eps;
        expectClose(rowLoss, rowRef, 1e-5, 1e-5, "row losses");
      }
}

TEST_F(CrossEntropyTest, BackwardMatchesFiniteDifferences) {
  const int64_t n = 5, classes = 7;
  for (float eps : {0.0f, 0.1f})
    for (int32_t reduction : {TXRT_LOSS_MEAN, TXRT_LOSS_SUM}) {
      Floats z = randomFloats(n * classes, 10, -3, 3);
      std::vector<int32_t> targets = {1, 6, -100, 0, 3};
      const int32_t ignore = -100;
      float loss = 0;
      Floats lse(n), dz(n * classes);
      expectOk(txrt_cross_entropy_fwd(ctx_, 1, n, classes, z.data(),
                                      targets.data(), ignore, eps, reduction,
                                      &loss, lse.data(), nullptr, nullptr));
      const float dloss = 1.5f;
      Doubles expected = finiteDifferences(
          [&](const Doubles &p) {
            return dloss * referenceCrossEntropy(n, classes, p, targets, ignore,
                                                 eps,
                                                 reduction == TXRT_LOSS_MEAN);
          },
          toDoubles(z));
      // From the saved log-sum-exp, and with none (recomputed).
      for (bool saved : {true, false}) {
        SCOPED_TRACE(saved ? "saved lse" : "recomputed lse");
        expectOk(txrt_cross_entropy_bwd(
            ctx_, 2, n, classes, z.data(), targets.data(),
            saved ? lse.data() : nullptr, ignore, eps, reduction, &dloss,
            dz.data()));
        expectClose(dz, expected, 1e-5, 1e-3, "dlogits");
      }
    }
}

// A backward without the saved lse recomputes the forward's own, so the
// gradient is the same bits either way (it was a double-precision
// log-sum-exp, close but not equal, and a scalar pass over the whole batch).
TEST_F(CrossEntropyTest, RecomputedLseGivesTheSavedLsesGradientBitForBit) {
  const int64_t n = 6;
  for (int64_t classes : {1, 7, 33, 1000}) {
    SCOPED_TRACE("classes " + std::to_string(classes));
    Floats z = randomFloats(n * classes, 11, -8, 8);
    std::vector<int32_t> targets(n);
    for (int64_t i = 0; i < n; ++i)
      targets[i] = int32_t((i * 5) % classes);
    targets[2] = -100;
    float loss = 0, dloss = 0.75f;
    Floats lse(n), saved(n * classes), recomputed(n * classes);
    expectOk(txrt_cross_entropy_fwd(ctx_, 1, n, classes, z.data(),
                                    targets.data(), -100, 0.1f, TXRT_LOSS_MEAN,
                                    &loss, lse.data(), nullptr, nullptr));
    expectOk(txrt_cross_entropy_bwd(ctx_, 2, n, classes, z.data(),
                                    targets.data(), lse.data(), -100, 0.1f,
                                    TXRT_LOSS_MEAN, &dloss, saved.data()));
    expectOk(txrt_cross_entropy_bwd(ctx_, 3, n, classes, z.data(),
                                    targets.data(), nullptr, -100, 0.1f,
                                    TXRT_LOSS_MEAN, &dloss, recomputed.data()));
    for (int64_t k = 0; k < n * classes; ++k)
      ASSERT_EQ(saved[k], recomputed[k]) << "element " << k;
  }
}

TEST_F(CrossEntropyTest, AllRowsIgnoredGiveZero) {
  Floats z = randomFloats(3 * 4, 20), lse(3), dz(12, 7.0f);
  std::vector<int32_t> targets = {0, 0, 0};
  float loss = -1, dloss = 1;
  int64_t count = -1;
  expectOk(txrt_cross_entropy_fwd(ctx_, 1, 3, 4, z.data(), targets.data(), 0,
                                  0.1f, TXRT_LOSS_MEAN, &loss, lse.data(),
                                  nullptr, &count));
  EXPECT_EQ(loss, 0.0f);
  EXPECT_EQ(count, 0);
  expectOk(txrt_cross_entropy_bwd(ctx_, 2, 3, 4, z.data(), targets.data(),
                                  lse.data(), 0, 0.1f, TXRT_LOSS_MEAN, &dloss,
                                  dz.data()));
  for (float g : dz)
    EXPECT_EQ(g, 0.0f);
}

// Large logits keep their precision, as in PyTorch, whose log_softmax is
// (z - max) - log sum exp(z - max): the kernel added max + log first, so at
// 1e7 the log (0.69) rounded away (loss 1.0 for log 2), at 1e8 the loss was
// 0 and the gradient [0, 1, 0, 0], and at 2e38 the loss was NaN (the plain
// sum of the row overflowed, times a label smoothing of 0).
TEST_F(CrossEntropyTest, LargeLogitsKeepTheirPrecision) {
  for (float big : {1e5f, 1e7f, 1e8f, 2e38f}) {
    SCOPED_TRACE("logits " + std::to_string(big));
    Floats z = {big, big, 0.0f, 0.0f}, lse(1), dz(4);
    std::vector<int32_t> targets = {0};
    float loss = 0, dloss = 1.0f;
    expectOk(txrt_cross_entropy_fwd(ctx_, 1, 1, 4, z.data(), targets.data(),
                                    -100, 0.0f, TXRT_LOSS_MEAN, &loss,
                                    lse.data(), nullptr, nullptr));
    EXPECT_NEAR(loss, std::log(2.0), 1e-6);
    for (bool saved : {true, false}) {
      expectOk(txrt_cross_entropy_bwd(ctx_, 2, 1, 4, z.data(), targets.data(),
                                      saved ? lse.data() : nullptr, -100, 0.0f,
                                      TXRT_LOSS_MEAN, &dloss, dz.data()));
      expectClose(dz, Doubles{-0.5, 0.5, 0.0, 0.0}, 1e-6, 1e-6, "dz");
    }
  }
}

// A -inf logit outside the target's class is a finite loss without label
// smoothing (it was NaN: 0 * the row's -inf mean) and +inf with it, as in
// PyTorch; a -inf target logit is +inf.
TEST_F(CrossEntropyTest, MinusInfinityLogits) {
  const float inf = std::numeric_limits<float>::infinity();
  Floats z = {1.0f, -inf, 0.5f, 2.0f};
  std::vector<int32_t> targets = {0};
  float loss = 0;
  expectOk(txrt_cross_entropy_fwd(ctx_, 1, 1, 4, z.data(), targets.data(), -100,
                                  0.0f, TXRT_LOSS_MEAN, &loss, nullptr, nullptr,
                                  nullptr));
  const double expected =
      std::log(std::exp(1.0) + std::exp(0.5) + std::exp(2.0)) - 1.0;
  EXPECT_NEAR(loss, expected, 1e-6);
  expectOk(txrt_cross_entropy_fwd(ctx_, 2, 1, 4, z.data(), targets.data(), -100,
                                  0.1f, TXRT_LOSS_MEAN, &loss, nullptr, nullptr,
                                  nullptr));
  EXPECT_EQ(loss, inf);
  targets = {1};
  expectOk(txrt_cross_entropy_fwd(ctx_, 3, 1, 4, z.data(), targets.data(), -100,
                                  0.0f, TXRT_LOSS_MEAN, &loss, nullptr, nullptr,
                                  nullptr));
  EXPECT_EQ(loss, inf);
}

// A NaN or +inf logit in any class makes the row's loss NaN, as in
// PyTorch: the row max skipped a NaN, and a NaN outside the target's class
// gave a finite loss (a diverged model trained on unnoticed).
TEST_F(CrossEntropyTest, ANonFiniteLogitIsANaNLoss) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {float(NAN), inf}) {
    Floats z = randomFloats(2 * 4, 21), lse(2), rowLoss(2);
    z[2] = bad; // row 0, class 2; its target is class 0
    std::vector<int32_t> targets = {0, 1};
    float loss = 0;
    int64_t count = 0;
    expectOk(txrt_cross_entropy_fwd(ctx_, 1, 2, 4, z.data(), targets.data(), -1,
                                    0.0f, TXRT_LOSS_MEAN, &loss, lse.data(),
                                    rowLoss.data(), &count));
    EXPECT_TRUE(std::isnan(loss)) << loss;
    EXPECT_TRUE(std::isnan(lse[0]));
    EXPECT_TRUE(std::isfinite(lse[1]) && std::isfinite(rowLoss[1]));
    Floats dz(8, 7.0f);
    float dloss = 1.0f;
    expectOk(txrt_cross_entropy_bwd(ctx_, 2, 2, 4, z.data(), targets.data(),
                                    nullptr, -1, 0.0f, TXRT_LOSS_MEAN, &dloss,
                                    dz.data()));
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_TRUE(std::isnan(dz[j])) << j;
  }
}

TEST_F(CrossEntropyTest, BadTargetIsAnError) {
  Floats z(2 * 3), lse(2);
  std::vector<int32_t> targets = {1, 3};
  float loss;
  EXPECT_EQ(txrt_cross_entropy_fwd(ctx_, 1, 2, 3, z.data(), targets.data(), -1,
                                   0, TXRT_LOSS_MEAN, &loss, lse.data(),
                                   nullptr, nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("targets[1] = 3"),
            std::string::npos);
}

} // namespace
