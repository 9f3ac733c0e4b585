//===- DropoutTest.cpp - Philox dropout: determinism, rate, backward ------===//
#include "TestUtil.h"

#include <cmath>

using namespace txrt_test;

namespace {

class DropoutTest : public RuntimeTest {};

TEST_F(DropoutTest, MaskIsAPureFunctionOfSeedStepSite) {
  const int64_t n = 1000;
  Floats x(n, 1.0f), a(n), b(n), c(n), d(n);
  expectOk(txrt_dropout_fwd(ctx_, 5, n, 0.3f, 42, 7, x.data(), a.data()));
  expectOk(txrt_dropout_fwd(ctx_, 5, n, 0.3f, 42, 7, x.data(), b.data()));
  EXPECT_EQ(a, b);
  expectOk(txrt_dropout_fwd(ctx_, 5, n, 0.3f, 42, 8, x.data(), c.data()));
  expectOk(txrt_dropout_fwd(ctx_, 6, n, 0.3f, 42, 7, x.data(), d.data()));
  EXPECT_NE(a, c) << "another step";
  EXPECT_NE(a, d) << "another site";
  // A prefix of the stream does not depend on n.
  Floats shorter(63);
  expectOk(
      txrt_dropout_fwd(ctx_, 5, 63, 0.3f, 42, 7, x.data(), shorter.data()));
  EXPECT_EQ(shorter, Floats(a.begin(), a.begin() + 63));
}

TEST_F(DropoutTest, KeepRateAndScale) {
  const int64_t n = 200000;
  const float p = 0.1f;
  Floats x = randomFloats(n, 1, 0.5f, 1.5f), y(n);
  expectOk(txrt_dropout_fwd(ctx_, 1, n, p, 123, 1, x.data(), y.data()));
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (y[i] != 0.0f) {
      ++kept;
      EXPECT_FLOAT_EQ(y[i], x[i] / (1 - p));
    }
  }
  double rate = double(kept) / n;
  EXPECT_NEAR(rate, 1 - p, 5 * std::sqrt(p * (1 - p) / n));
  // p = 0 copies.
  expectOk(txrt_dropout_fwd(ctx_, 1, n, 0.0f, 123, 1, x.data(), y.data()));
  EXPECT_EQ(x, y);
}

TEST_F(DropoutTest, BackwardRegeneratesTheMask) {
  for (int64_t n : {1, 7, 63, 65, 1000}) {
    Floats x = randomFloats(n, uint32_t(n), 0.5f, 1.5f), y(n);
    Floats dy = randomFloats(n, uint32_t(n + 1)), dx(n);
    expectOk(txrt_dropout_fwd(ctx_, 9, n, 0.5f, 3, 4, x.data(), y.data()));
    expectOk(txrt_dropout_bwd(ctx_, 9, n, 0.5f, 3, 4, dy.data(), dx.data()));
    // The forward is linear in x for a fixed (seed, step, site), so its
    // gradient is a finite difference of the kernel itself; the mask seen
    // by backward must equal the forward's.
    Doubles expected(n);
    for (int64_t i = 0; i < n; ++i)
      expected[i] = y[i] != 0.0f ? 2.0 * dy[i] : 0.0;
    expectClose(dx, expected, 1e-6, 1e-6, "dx");
    Doubles fd = vjpByFiniteDifferences(
        [&](const Doubles &p) {
          Floats in(p.begin(), p.end()), out(p.size());
          EXPECT_EQ(
              txrt_dropout_fwd(ctx_, 9, n, 0.5f, 3, 4, in.data(), out.data()),
              TXRT_OK);
          return toDoubles(out);
        },
        toDoubles(x), dy, 1e-2);
    expectClose(dx, fd, 1e-4, 1e-3, "dx vs finite differences");
  }
}

TEST_F(DropoutTest, RowsOfABatchDrawTheBatchMasks) {
  // Rows [first, first + count) of a batch, run alone with their place set
  // on the context, draw the masks the whole batch draws for them: what
  // lets a micro-batch or a rank train on a share of the batch with its
  // dropout. Rows of 37 and of 7001 elements: shares that start inside a
  // 64-element chunk of the stream, and the parallel path (n > 16384).
  for (int64_t rowSize : {37, 7001}) {
    const int64_t rows = 5, n = rows * rowSize;
    Floats x = randomFloats(n, 3, 0.5f, 1.5f), whole(n), wholeGrad(n);
    expectOk(txrt_dropout_fwd(ctx_, 4, n, 0.4f, 9, 2, x.data(), whole.data()));
    expectOk(
        txrt_dropout_bwd(ctx_, 4, n, 0.4f, 9, 2, x.data(), wholeGrad.data()));
    for (int64_t first : {0, 1, 3})
      for (int64_t count : {1, 2}) {
        const int64_t m = count * rowSize;
        Floats part(x.begin() + first * rowSize,
                    x.begin() + first * rowSize + m),
            y(m), dx(m);
        txrt_context_set_batch_rows(ctx_, first, count);
        expectOk(txrt_dropout_fwd(ctx_, 4, m, 0.4f, 9, 2, part.data(),
                                  y.data()));
        expectOk(txrt_dropout_bwd(ctx_, 4, m, 0.4f, 9, 2, part.data(),
                                  dx.data()));
        const Floats expected(whole.begin() + first * rowSize,
                              whole.begin() + first * rowSize + m);
        EXPECT_EQ(y, expected) << "rows " << first << "+" << count;
        EXPECT_EQ(dx, Floats(wholeGrad.begin() + first * rowSize,
                             wholeGrad.begin() + first * rowSize + m));
        // Without the rows set, the share draws the stream's first masks.
        txrt_context_set_batch_rows(ctx_, 0, 0);
        expectOk(txrt_dropout_fwd(ctx_, 4, m, 0.4f, 9, 2, part.data(),
                                  y.data()));
        if (first > 0) {
          EXPECT_NE(y, expected);
        }
      }
  }
  // A tensor whose size is not a multiple of the rows gets no offset.
  Floats x(10, 1.0f), a(10), b(10);
  expectOk(txrt_dropout_fwd(ctx_, 4, 10, 0.4f, 9, 2, x.data(), a.data()));
  txrt_context_set_batch_rows(ctx_, 2, 3);
  expectOk(txrt_dropout_fwd(ctx_, 4, 10, 0.4f, 9, 2, x.data(), b.data()));
  txrt_context_set_batch_rows(ctx_, 0, 0);
  EXPECT_EQ(a, b);
}

} // namespace
