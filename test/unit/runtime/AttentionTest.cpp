//===- AttentionTest.cpp - fused attention fwd / bwd against references ---===//
//
// The reference materialises the full B x h x T x S scores in double
// precision; the kernel must agree with it for padding (key lengths), causal,
// both, empty rows, dropout, packed QKV layouts and block sizes that split
// the sequences into several blocks with tails. Backward is checked against
// finite differences of the reference on small shapes and against the
// reference's analytic gradient on larger ones.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace txrt_test;

namespace {

struct AttentionCase {
  int64_t batch = 1, heads = 1, tq = 1, tk = 1, d = 1;
  int64_t pad = 0; // extra floats per row: ld = heads * d + pad
  std::vector<int32_t> keyLengths;
  bool causal = false;
  float dropout = 0.0f;
  int64_t site = 11;
  uint64_t seed = 1234;
  int64_t step = 3;

  int64_t ld() const { return heads * d + pad; }
  float scale() const { return 1.0f / std::sqrt(float(d)); }
  const int32_t *lengths() const {
    return keyLengths.empty() ? nullptr : keyLengths.data();
  }
  bool visible(int64_t b, int64_t i, int64_t j) const {
    if (!keyLengths.empty() && j >= keyLengths[b])
      return false;
    return !causal || j <= i + (tk - tq);
  }
  std::string name() const {
    return "B=" + std::to_string(batch) + " h=" + std::to_string(heads) +
           " tq=" + std::to_string(tq) + " tk=" + std::to_string(tk) +
           " d=" + std::to_string(d) + " causal=" + std::to_string(causal) +
           " lengths=" + std::to_string(!keyLengths.empty()) +
           " dropout=" + std::to_string(dropout);
  }
};

/// Dropout scales of every (b, h, i, j), from the dropout kernel: the
/// attention kernel documents the same stream at the same counters.
Doubles dropoutScales(txrt_context *ctx, const AttentionCase &c) {
  int64_t n = c.batch * c.heads * c.tq * c.tk;
  Doubles scales(n, 1.0);
  if (c.dropout == 0.0f)
    return scales;
  Floats ones(n, 1.0f), out(n);
  EXPECT_EQ(txrt_dropout_fwd(ctx, c.site, n, c.dropout, c.seed, c.step,
                             ones.data(), out.data()),
            TXRT_OK);
  return toDoubles(out);
}

/// O (in a [B, tq, ld] buffer, pad columns 0) and lse of the reference.
Doubles referenceAttention(const AttentionCase &c, const Doubles &q,
                           const Doubles &k, const Doubles &v,
                           const Doubles &drop, Doubles *lse = nullptr) {
  const int64_t ld = c.ld();
  Doubles o(c.batch * c.tq * ld, 0.0);
  std::vector<double> scores(c.tk);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.tq; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < c.tk; ++j) {
          if (!c.visible(b, i, j))
            continue;
          double s = 0;
          for (int64_t x = 0; x < c.d; ++x)
            s += q[(b * c.tq + i) * ld + h * c.d + x] *
                 k[(b * c.tk + j) * ld + h * c.d + x];
          scores[j] = s * c.scale();
          m = std::max(m, scores[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < c.tk; ++j)
          if (c.visible(b, i, j))
            sum += std::exp(scores[j] - m);
        if (lse)
          (*lse)[(b * c.heads + h) * c.tq + i] =
              sum > 0 ? m + std::log(sum)
                      : -std::numeric_limits<double>::infinity();
        if (sum == 0)
          continue;
        for (int64_t j = 0; j < c.tk; ++j) {
          if (!c.visible(b, i, j))
            continue;
          double p = std::exp(scores[j] - m) / sum *
                     drop[((b * c.heads + h) * c.tq + i) * c.tk + j];
          for (int64_t x = 0; x < c.d; ++x)
            o[(b * c.tq + i) * ld + h * c.d + x] +=
                p * v[(b * c.tk + j) * ld + h * c.d + x];
        }
      }
  return o;
}

struct Gradients {
  Doubles dq, dk, dv;
};

/// The analytic gradient of the reference (materialised probabilities).
Gradients referenceAttentionBackward(const AttentionCase &c, const Doubles &q,
                                     const Doubles &k, const Doubles &v,
                                     const Doubles &drop, const Doubles &dO) {
  const int64_t ld = c.ld();
  Gradients g{Doubles(q.size(), 0.0), Doubles(k.size(), 0.0),
              Doubles(v.size(), 0.0)};
  std::vector<double> p(c.tk), dp(c.tk);
  auto qAt = [&](int64_t b, int64_t h, int64_t i, int64_t x) {
    return (b * c.tq + i) * ld + h * c.d + x;
  };
  auto kAt = [&](int64_t b, int64_t h, int64_t j, int64_t x) {
    return (b * c.tk + j) * ld + h * c.d + x;
  };
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.tq; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < c.tk; ++j) {
          p[j] = 0;
          if (!c.visible(b, i, j))
            continue;
          double s = 0;
          for (int64_t x = 0; x < c.d; ++x)
            s += q[qAt(b, h, i, x)] * k[kAt(b, h, j, x)];
          p[j] = s * c.scale();
          m = std::max(m, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < c.tk; ++j)
          if (c.visible(b, i, j))
            sum += std::exp(p[j] - m);
        if (sum == 0)
          continue;
        double rowD = 0;
        for (int64_t j = 0; j < c.tk; ++j) {
          if (!c.visible(b, i, j)) {
            p[j] = dp[j] = 0;
            continue;
          }
          p[j] = std::exp(p[j] - m) / sum;
          double keep = drop[((b * c.heads + h) * c.tq + i) * c.tk + j];
          double dotDoV = 0;
          for (int64_t x = 0; x < c.d; ++x) {
            dotDoV += dO[qAt(b, h, i, x)] * v[kAt(b, h, j, x)];
            g.dv[kAt(b, h, j, x)] += p[j] * keep * dO[qAt(b, h, i, x)];
          }
          dp[j] = dotDoV * keep;
          rowD += p[j] * dp[j];
        }
        for (int64_t j = 0; j < c.tk; ++j) {
          if (!c.visible(b, i, j))
            continue;
          double ds = p[j] * (dp[j] - rowD) * c.scale();
          for (int64_t x = 0; x < c.d; ++x) {
            g.dq[qAt(b, h, i, x)] += ds * k[kAt(b, h, j, x)];
            g.dk[kAt(b, h, j, x)] += ds * q[qAt(b, h, i, x)];
          }
        }
      }
  return g;
}

class AttentionTest : public RuntimeTest {
protected:
  struct Run {
    Floats q, k, v, o, lse, dO, dq, dk, dv;
  };

  /// Runs the kernels forward (and backward) on random data.
  static Run run(txrt_context *ctx, const AttentionCase &c, bool backward,
                 uint32_t seed) {
    const int64_t ld = c.ld();
    Run r;
    r.q = randomFloats(c.batch * c.tq * ld, seed, -1.5f, 1.5f);
    r.k = randomFloats(c.batch * c.tk * ld, seed + 1, -1.5f, 1.5f);
    r.v = randomFloats(c.batch * c.tk * ld, seed + 2);
    r.o.assign(c.batch * c.tq * ld, 0.0f);
    r.lse.assign(c.batch * c.heads * c.tq, 0.0f);
    EXPECT_EQ(txrt_attention_fwd(ctx, c.site, c.batch, c.heads, c.tq, c.tk, c.d,
                                 r.q.data(), ld, r.k.data(), ld, r.v.data(), ld,
                                 r.o.data(), ld, r.lse.data(), c.lengths(),
                                 c.causal, c.scale(), c.dropout, c.seed,
                                 c.step),
              TXRT_OK)
        << txrt_last_error(ctx);
    if (!backward)
      return r;
    r.dO = randomFloats(c.batch * c.tq * ld, seed + 3);
    r.dq.assign(r.q.size(), 0.0f);
    r.dk.assign(r.k.size(), 0.0f);
    r.dv.assign(r.v.size(), 0.0f);
    EXPECT_EQ(txrt_attention_bwd(
                  ctx, c.site + 1, c.site, c.batch, c.heads, c.tq, c.tk, c.d,
                  r.q.data(), ld, r.k.data(), ld, r.v.data(), ld, r.o.data(),
                  ld, r.lse.data(), r.dO.data(), ld, r.dq.data(), ld,
                  r.dk.data(), ld, r.dv.data(), ld, c.lengths(), c.causal,
                  c.scale(), c.dropout, c.seed, c.step),
              TXRT_OK)
        << txrt_last_error(ctx);
    return r;
  }

  static void checkForward(txrt_context *ctx, const AttentionCase &c,
                           uint32_t seed) {
    SCOPED_TRACE(c.name());
    Run r = run(ctx, c, false, seed);
    Doubles lse(c.batch * c.heads * c.tq);
    Doubles expected =
        referenceAttention(c, toDoubles(r.q), toDoubles(r.k), toDoubles(r.v),
                           dropoutScales(ctx, c), &lse);
    expectClose(r.o, expected, 2e-5, 1e-4, "o");
    for (size_t i = 0; i < lse.size(); ++i) {
      if (std::isinf(lse[i]))
        EXPECT_TRUE(std::isinf(r.lse[i]) && r.lse[i] < 0) << "lse " << i;
      else
        EXPECT_NEAR(r.lse[i], lse[i], 1e-4) << "lse " << i;
    }
  }

  static void checkBackward(txrt_context *ctx, const AttentionCase &c,
                            uint32_t seed, bool finiteDifferencesToo) {
    SCOPED_TRACE(c.name());
    Run r = run(ctx, c, true, seed);
    Doubles q = toDoubles(r.q), k = toDoubles(r.k), v = toDoubles(r.v);
    Doubles drop = dropoutScales(ctx, c);
    Gradients g = referenceAttentionBackward(c, q, k, v, drop, toDoubles(r.dO));
    expectClose(r.dq, g.dq, 1e-4, 1e-3, "dq");
    expectClose(r.dk, g.dk, 1e-4, 1e-3, "dk");
    expectClose(r.dv, g.dv, 1e-4, 1e-3, "dv");
    if (!finiteDifferencesToo)
      return;
    auto f = [&](const Doubles &qs, const Doubles &ks, const Doubles &vs) {
      return referenceAttention(c, qs, ks, vs, drop);
    };
    expectClose(r.dq,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) { return f(p, k, v); }, q, r.dO),
                1e-4, 1e-3, "dq (finite differences)");
    expectClose(r.dk,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) { return f(q, p, v); }, k, r.dO),
                1e-4, 1e-3, "dk (finite differences)");
    expectClose(r.dv,
                vjpByFiniteDifferences(
                    [&](const Doubles &p) { return f(q, k, p); }, v, r.dO),
                1e-4, 1e-3, "dv (finite differences)");
  }

  /// A context whose blocks are small, so sequences of 63 / 65 span several
  /// query and key blocks with tails.
  static txrt_context *smallBlocks() {
    txrt_context *ctx = nullptr;
    EXPECT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
    EXPECT_EQ(txrt_context_set_option(ctx, TXRT_OPTION_ATTENTION_BLOCK_Q, 16),
              TXRT_OK);
    EXPECT_EQ(txrt_context_set_option(ctx, TXRT_OPTION_ATTENTION_BLOCK_K, 24),
              TXRT_OK);
    return ctx;
  }
};

/// Shapes x masks, used by the forward and backward tests.
std::vector<AttentionCase> maskCases(int64_t batch, int64_t heads, int64_t tq,
                                     int64_t tk, int64_t d) {
  std::vector<AttentionCase> cases;
  for (int mask = 0; mask < 4; ++mask) {
    AttentionCase c;
    c.batch = batch;
    c.heads = heads;
    c.tq = tq;
    c.tk = tk;
    c.d = d;
    c.causal = mask & 1;
    if (mask & 2)
      for (int64_t b = 0; b < batch; ++b)
        c.keyLengths.push_back(int32_t(std::max<int64_t>(1, tk - 3 * b - 1)));
    cases.push_back(c);
  }
  return cases;
}

TEST_F(AttentionTest, ForwardMatchesReference) {
  uint32_t seed = 1;
  for (auto [b, h, tq, tk, d] :
       std::vector<std::array<int64_t, 5>>{{1, 1, 1, 1, 1},
                                           {2, 3, 7, 7, 5},
                                           {1, 2, 63, 65, 16},
                                           {2, 1, 65, 63, 8},
                                           {1, 1, 65, 65, 64}})
    for (const AttentionCase &c : maskCases(b, h, tq, tk, d))
      checkForward(ctx_, c, seed++);
}

TEST_F(AttentionTest, ForwardAcrossManyBlocks) {
  txrt_context *ctx = smallBlocks();
  uint32_t seed = 100;
  for (auto [b, h, tq, tk, d] : std::vector<std::array<int64_t, 5>>{
           {2, 2, 63, 65, 8}, {1, 2, 65, 63, 4}, {1, 1, 7, 65, 3}})
    for (const AttentionCase &c : maskCases(b, h, tq, tk, d))
      checkForward(ctx, c, seed++);
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, PackedLayoutsAndDropout) {
  txrt_context *ctx = smallBlocks();
  AttentionCase c;
  c.batch = 2;
  c.heads = 2;
  c.tq = 33;
  c.tk = 33;
  c.d = 8;
  c.pad = 5; // rows longer than heads * d, as inside a packed QKV buffer
  c.causal = true;
  c.keyLengths = {33, 20};
  checkForward(ctx, c, 200);
  c.dropout = 0.25f;
  checkForward(ctx, c, 201);
  checkForward(ctx_, c, 202);
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, EmptyRowsGiveZerosNotNaN) {
  // Batch 1 has no keys at all; with causal and tq > tk the first queries
  // see no key either.
  AttentionCase c;
  c.batch = 2;
  c.heads = 2;
  c.tq = 9;
  c.tk = 5;
  c.d = 4;
  c.causal = true;
  c.keyLengths = {5, 0};
  Run r = run(ctx_, c, true, 300);
  const int64_t ld = c.ld();
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.tq; ++i) {
      bool empty = b == 1 || i < c.tq - c.tk;
      for (int64_t x = 0; x < ld; ++x) {
        float value = r.o[(b * c.tq + i) * ld + x];
        EXPECT_TRUE(std::isfinite(value));
        if (empty) {
          EXPECT_EQ(value, 0.0f) << "b=" << b << " i=" << i;
          EXPECT_EQ(r.dq[(b * c.tq + i) * ld + x], 0.0f);
        }
      }
      for (int64_t h = 0; h < c.heads; ++h) {
        if (empty) {
          EXPECT_TRUE(std::isinf(r.lse[(b * c.heads + h) * c.tq + i]));
        }
      }
    }
  for (float g : r.dk)
    EXPECT_TRUE(std::isfinite(g));
  for (int64_t j = 0; j < c.tk * ld; ++j) {
    EXPECT_EQ(r.dk[c.tk * ld + j], 0.0f) << "keys of the empty batch";
    EXPECT_EQ(r.dv[c.tk * ld + j], 0.0f);
  }
  checkForward(ctx_, c, 300);
  checkBackward(ctx_, c, 301, true);
}

TEST_F(AttentionTest, BackwardMatchesFiniteDifferences) {
  uint32_t seed = 400;
  for (AttentionCase c : maskCases(2, 2, 5, 6, 3)) {
    checkBackward(ctx_, c, seed++, true);
    c.dropout = 0.3f;
    checkBackward(ctx_, c, seed++, true);
  }
}

TEST_F(AttentionTest, BackwardLargeShapes) {
  uint32_t seed = 500;
  for (auto [b, h, tq, tk, d] : std::vector<std::array<int64_t, 5>>{
           {1, 2, 63, 65, 16}, {2, 1, 65, 63, 8}, {1, 1, 1, 7, 4}})
    for (const AttentionCase &c : maskCases(b, h, tq, tk, d))
      checkBackward(ctx_, c, seed++, false);
  txrt_context *ctx = smallBlocks();
  for (AttentionCase c : maskCases(2, 2, 63, 65, 8)) {
    checkBackward(ctx, c, seed++, false);
    c.dropout = 0.2f;
    checkBackward(ctx, c, seed++, false);
  }
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, KeyLengthsFromRightPaddedIds) {
  std::vector<int32_t> ids = {5, 6, 7, 0, 0, //
                              0, 0, 0, 0, 0, //
                              1, 0, 2, 3, 4};
  std::vector<int32_t> lengths(3);
  expectOk(txrt_key_lengths(ctx_, 3, 5, ids.data(), 0, lengths.data()));
  EXPECT_EQ(lengths, (std::vector<int32_t>{3, 0, 5}));
}

TEST_F(AttentionTest, BadKeyLengthIsAnError) {
  Floats q(2 * 4), o(2 * 4), lse(2);
  int32_t lengths[1] = {3};
  EXPECT_EQ(txrt_attention_fwd(ctx_, 1, 1, 1, 2, 2, 4, q.data(), 4, q.data(), 4,
                               q.data(), 4, o.data(), 4, lse.data(), lengths, 0,
                               0.5f, 0.0f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("key_lengths[0] = 3"),
            std::string::npos);
}

} // namespace
