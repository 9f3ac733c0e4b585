//===- AttentionTest.cpp - fused attention fwd / bwd against references ---===//
//
// The reference materialises the full B x h x T x S scores in double
// precision, with the masked scores at `fill` (or left out when fill is
// -inf), as softmax(masked_fill(...)) computes them; the kernel must agree
// with it for right padding (the key-length path), left and inner padding,
// rows and batches with no visible key, query-row and per-head masks,
// causal, both, dropout, grouped-query heads, packed QKV layouts and block
// sizes that split the sequences into several blocks with tails. Backward is
// checked against finite differences of the reference on small shapes and
// against the reference's analytic gradient on larger ones.
//
// The bf16 kernels (txrt_attention_fwd_bf16, _bwd_bf16) run the same cases
// against the same double-precision reference on the unrounded inputs, and
// against the f32 kernel, held to a bound relative to each output's scale
// (kBf16ForwardBound below says where it comes from), on both paths of
// their block products (vdpbf16ps and rounded copies); rows the f32 kernel
// computes whole (fully masked rows) equal the f32 kernel's bit for bit.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "TileGemm.h"

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

using namespace txrt_test;

namespace {

constexpr float kNoFill = -std::numeric_limits<float>::infinity();

/// How a case's keep mask is laid out.
enum class MaskKind {
  None,
  RightPadding, // [B, 1, 1, S], a prefix of each row kept
  LeftPadding,  // [B, 1, 1, S], a suffix kept
  InnerPadding, // [B, 1, 1, S], holes inside
  QueryRows,    // [B, 1, T, 1]: some queries see nothing
  PerHead,      // [B, h, T, S], random
};

struct AttentionCase {
  int64_t batch = 1, heads = 1, kvHeads = 0, tq = 1, tk = 1, d = 1;
  int64_t pad = 0; // extra floats per row: ld = heads * d + pad
  MaskKind maskKind = MaskKind::None;
  bool causal = false;
  float fill = kNoFill;
  float dropout = 0.0f;
  int64_t site = 11;
  uint64_t seed = 1234;
  int64_t step = 3;
  /// The keep mask and its strides over (b, h, i, j), made by makeMask().
  std::vector<uint8_t> mask;
  int64_t stride[4] = {0, 0, 0, 0};

  int64_t kvh() const { return kvHeads ? kvHeads : heads; }
  int64_t ld() const { return heads * d + pad; }
  int64_t kvLd() const { return kvh() * d + pad; }
  int64_t kvHead(int64_t h) const { return h / (heads / kvh()); }
  float scale() const { return 1.0f / std::sqrt(float(d)); }
  const uint8_t *maskData() const { return mask.empty() ? nullptr : mask.data(); }

  /// Fills `mask`: batch b of a padding mask keeps tk - 2b keys (at least
  /// one, batch 2 none when there are 3 or more batches).
  void makeMask() {
    auto kept = [&](int64_t b) {
      if (b == 2)
        return int64_t(0);
      return std::max<int64_t>(1, tk - 2 * b);
    };
    switch (maskKind) {
    case MaskKind::None:
      return;
    case MaskKind::RightPadding:
    case MaskKind::LeftPadding:
    case MaskKind::InnerPadding:
      mask.assign(batch * tk, 0);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < tk; ++j) {
          bool keep = maskKind == MaskKind::RightPadding ? j < kept(b)
                      : maskKind == MaskKind::LeftPadding
                          ? j >= tk - kept(b)
                          : (b != 2 && (j + b) % 3 != 1);
          mask[b * tk + j] = keep;
        }
      stride[0] = tk;
      stride[3] = 1;
      return;
    case MaskKind::QueryRows:
      mask.assign(batch * tq, 0);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < tq; ++i)
          mask[b * tq + i] = (i + b) % 4 != 0;
      stride[0] = tq;
      stride[2] = 1;
      return;
    case MaskKind::PerHead: {
      Floats coin = randomFloats(batch * heads * tq * tk, 77);
      mask.assign(coin.size(), 0);
      for (size_t n = 0; n < coin.size(); ++n)
        mask[n] = coin[n] > -0.4f;
      stride[0] = heads * tq * tk;
      stride[1] = tq * tk;
      stride[2] = tk;
      stride[3] = 1;
      return;
    }
    }
  }

  bool visible(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (causal && j > i + (tk - tq))
      return false;
    if (mask.empty())
      return true;
    return mask[b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3]];
  }
  std::string name() const {
    return "B=" + std::to_string(batch) + " h=" + std::to_string(heads) +
           " kvh=" + std::to_string(kvh()) + " tq=" + std::to_string(tq) +
           " tk=" + std::to_string(tk) + " d=" + std::to_string(d) +
           " causal=" + std::to_string(causal) +
           " mask=" + std::to_string(int(maskKind)) +
           " fill=" + std::to_string(fill) +
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

/// Where the reference finds elements of Q / O (rows of ld) and K / V (rows
/// of kvLd).
struct Index {
  const AttentionCase &c;
  int64_t q(int64_t b, int64_t h, int64_t i, int64_t x) const {
    return (b * c.tq + i) * c.ld() + h * c.d + x;
  }
  int64_t k(int64_t b, int64_t h, int64_t j, int64_t x) const {
    return (b * c.tk + j) * c.kvLd() + c.kvHead(h) * c.d + x;
  }
  int64_t drop(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return ((b * c.heads + h) * c.tq + i) * c.tk + j;
  }
};

/// The probabilities of row (b, h, i) before dropout (0 for left-out keys)
/// and their log-sum-exp; false when every key is left out.
bool referenceRow(const AttentionCase &c, const Doubles &q, const Doubles &k,
                  int64_t b, int64_t h, int64_t i, std::vector<double> &p,
                  double &lse) {
  Index at{c};
  const bool dropMasked = c.fill == kNoFill;
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < c.tk; ++j) {
    if (!c.visible(b, h, i, j)) {
      p[j] = c.fill; // -inf: left out
    } else {
      double s = 0;
      for (int64_t x = 0; x < c.d; ++x)
        s += q[at.q(b, h, i, x)] * k[at.k(b, h, j, x)];
      p[j] = s * c.scale();
    }
    m = std::max(m, p[j]);
  }
  if (dropMasked && m == -std::numeric_limits<double>::infinity()) {
    lse = m;
    std::fill(p.begin(), p.end(), 0.0);
    return false;
  }
  double sum = 0;
  for (int64_t j = 0; j < c.tk; ++j)
    sum += std::exp(p[j] - m);
  for (int64_t j = 0; j < c.tk; ++j)
    p[j] = std::exp(p[j] - m) / sum;
  lse = m + std::log(sum);
  return true;
}

/// O (in a [B, tq, ld] buffer, pad columns 0) and lse of the reference.
Doubles referenceAttention(const AttentionCase &c, const Doubles &q,
                           const Doubles &k, const Doubles &v,
                           const Doubles &drop, Doubles *lse = nullptr) {
  Index at{c};
  Doubles o(c.batch * c.tq * c.ld(), 0.0);
  std::vector<double> p(c.tk);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.tq; ++i) {
        double rowLse;
        bool any = referenceRow(c, q, k, b, h, i, p, rowLse);
        if (lse)
          (*lse)[(b * c.heads + h) * c.tq + i] = rowLse;
        if (!any)
          continue;
        for (int64_t j = 0; j < c.tk; ++j)
          for (int64_t x = 0; x < c.d; ++x)
            o[at.q(b, h, i, x)] +=
                p[j] * drop[at.drop(b, h, i, j)] * v[at.k(b, h, j, x)];
      }
  return o;
}

struct Gradients {
  Doubles dq, dk, dv;
};

/// The analytic gradient of the reference (materialised probabilities):
/// masked scores are constants, so only visible keys pass gradient to Q and
/// K, while every kept key with a share of P gets its share of dV.
Gradients referenceAttentionBackward(const AttentionCase &c, const Doubles &q,
                                     const Doubles &k, const Doubles &v,
                                     const Doubles &drop, const Doubles &dO) {
  Index at{c};
  Gradients g{Doubles(q.size(), 0.0), Doubles(k.size(), 0.0),
              Doubles(v.size(), 0.0)};
  std::vector<double> p(c.tk), dp(c.tk);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.tq; ++i) {
        double lse;
        if (!referenceRow(c, q, k, b, h, i, p, lse))
          continue;
        double rowD = 0;
        for (int64_t j = 0; j < c.tk; ++j) {
          double keep = drop[at.drop(b, h, i, j)];
          double dotDoV = 0;
          for (int64_t x = 0; x < c.d; ++x) {
            dotDoV += dO[at.q(b, h, i, x)] * v[at.k(b, h, j, x)];
            g.dv[at.k(b, h, j, x)] += p[j] * keep * dO[at.q(b, h, i, x)];
          }
          dp[j] = dotDoV * keep;
          rowD += p[j] * dp[j];
        }
        for (int64_t j = 0; j < c.tk; ++j) {
          if (!c.visible(b, h, i, j))
            continue;
          double ds = p[j] * (dp[j] - rowD) * c.scale();
          for (int64_t x = 0; x < c.d; ++x) {
            g.dq[at.q(b, h, i, x)] += ds * k[at.k(b, h, j, x)];
            g.dk[at.k(b, h, j, x)] += ds * q[at.q(b, h, i, x)];
          }
        }
      }
  return g;
}

/// Which entry points a run calls.
enum class Precision { F32, Bf16 };

class AttentionTest : public RuntimeTest {
protected:
  struct Run {
    Floats q, k, v, o, lse, dO, dq, dk, dv;
  };

  static txrt_status forward(txrt_context *ctx, const AttentionCase &c, Run &r,
                             Precision precision = Precision::F32) {
    return (precision == Precision::Bf16 ? txrt_attention_fwd_bf16
                                         : txrt_attention_fwd)(
        ctx, c.site, c.batch, c.heads, c.kvh(), c.tq, c.tk, c.d, r.q.data(),
        c.ld(), r.k.data(), c.kvLd(), r.v.data(), c.kvLd(), r.o.data(), c.ld(),
        r.lse.data(), c.maskData(), c.stride[0], c.stride[1], c.stride[2],
        c.stride[3], c.causal, c.scale(), c.fill, c.dropout, c.seed, c.step);
  }

  /// Runs the kernels forward (and backward) on random data.
  /// `keyOffset` is added to every key (a constant in each row of the
  /// scores, which the softmax cancels).
  /// `prepare` may change the inputs before the forward runs.
  static Run run(txrt_context *ctx, const AttentionCase &c, bool backward,
                 uint32_t seed, Precision precision = Precision::F32,
                 float keyOffset = 0.0f,
                 const std::function<void(Run &)> &prepare = nullptr) {
    Run r;
    r.q = randomFloats(c.batch * c.tq * c.ld(), seed, -1.5f, 1.5f);
    r.k = randomFloats(c.batch * c.tk * c.kvLd(), seed + 1, -1.5f, 1.5f);
    for (float &key : r.k)
      key += keyOffset;
    r.v = randomFloats(c.batch * c.tk * c.kvLd(), seed + 2);
    if (prepare)
      prepare(r);
    r.o.assign(c.batch * c.tq * c.ld(), 0.0f);
    r.lse.assign(c.batch * c.heads * c.tq, 0.0f);
    EXPECT_EQ(forward(ctx, c, r, precision), TXRT_OK) << txrt_last_error(ctx);
    if (!backward)
      return r;
    r.dO = randomFloats(c.batch * c.tq * c.ld(), seed + 3);
    // Garbage in the outputs: the kernel must overwrite, not accumulate.
    r.dq.assign(r.q.size(), 7.0f);
    r.dk.assign(r.k.size(), 7.0f);
    r.dv.assign(r.v.size(), 7.0f);
    EXPECT_EQ((precision == Precision::Bf16 ? txrt_attention_bwd_bf16
                                            : txrt_attention_bwd)(
                  ctx, c.site + 1, c.site, c.batch, c.heads, c.kvh(), c.tq,
                  c.tk, c.d, r.q.data(), c.ld(), r.k.data(), c.kvLd(),
                  r.v.data(), c.kvLd(), r.o.data(), c.ld(), r.lse.data(),
                  r.dO.data(), c.ld(), r.dq.data(), c.ld(), r.dk.data(),
                  c.kvLd(), r.dv.data(), c.kvLd(), c.maskData(), c.stride[0],
                  c.stride[1], c.stride[2], c.stride[3], c.causal, c.scale(),
                  c.fill, c.dropout, c.seed, c.step),
              TXRT_OK)
        << txrt_last_error(ctx);
    // Pad columns are not the kernel's: restore them for the comparison.
    for (Floats *grad : {&r.dq, &r.dk, &r.dv}) {
      int64_t width = grad == &r.dq ? c.heads * c.d : c.kvh() * c.d;
      int64_t ld = grad == &r.dq ? c.ld() : c.kvLd();
      for (size_t n = 0; n < grad->size(); ++n)
        if (int64_t(n) % ld >= width)
          (*grad)[n] = 0.0f;
    }
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
        EXPECT_NEAR(r.lse[i], lse[i], 1e-4 * std::max(1.0, std::fabs(lse[i])))
            << "lse " << i;
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

AttentionCase makeCase(int64_t batch, int64_t heads, int64_t tq, int64_t tk,
                       int64_t d, MaskKind kind, bool causal,
                       float fill = kNoFill) {
  AttentionCase c;
  c.batch = batch;
  c.heads = heads;
  c.tq = tq;
  c.tk = tk;
  c.d = d;
  c.maskKind = kind;
  c.causal = causal;
  c.fill = fill;
  c.makeMask();
  return c;
}

/// Shapes x {no mask, right padding} x {causal or not}: the cases of the
/// key-length fast path.
std::vector<AttentionCase> maskCases(int64_t batch, int64_t heads, int64_t tq,
                                     int64_t tk, int64_t d) {
  std::vector<AttentionCase> cases;
  for (int mask = 0; mask < 4; ++mask)
    cases.push_back(makeCase(batch, heads, tq, tk, d,
                             mask & 2 ? MaskKind::RightPadding : MaskKind::None,
                             mask & 1));
  return cases;
}

/// Every mask kind, causal or not, dropping masked keys (fill -inf) or
/// with masked_fill's -1e9 or a fill close to the scores (-2, where masked
/// keys keep a real share of P).
std::vector<AttentionCase> generalCases(int64_t batch, int64_t heads,
                                        int64_t tq, int64_t tk, int64_t d) {
  std::vector<AttentionCase> cases;
  for (MaskKind kind :
       {MaskKind::LeftPadding, MaskKind::InnerPadding, MaskKind::QueryRows,
        MaskKind::PerHead, MaskKind::RightPadding})
    for (bool causal : {false, true})
      for (float fill : {kNoFill, -1e9f, -2.0f})
        cases.push_back(makeCase(batch, heads, tq, tk, d, kind, causal, fill));
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

TEST_F(AttentionTest, GeneralMasksForward) {
  txrt_context *ctx = smallBlocks();
  uint32_t seed = 600;
  for (const AttentionCase &c : generalCases(3, 2, 9, 9, 4))
    checkForward(ctx_, c, seed++);
  for (const AttentionCase &c : generalCases(3, 2, 40, 50, 8))
    checkForward(ctx, c, seed++);
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, GeneralMasksBackward) {
  uint32_t seed = 700;
  for (AttentionCase c : generalCases(3, 2, 5, 6, 3)) {
    checkBackward(ctx_, c, seed++, true);
    c.dropout = 0.3f;
    checkBackward(ctx_, c, seed++, false);
  }
  txrt_context *ctx = smallBlocks();
  for (const AttentionCase &c : generalCases(3, 2, 40, 50, 8))
    checkBackward(ctx, c, seed++, false);
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, FullyMaskedRowsAsWritten) {
  // masked_fill(-1e9) then softmax: a row whose keys are all masked has
  // equal scores, so its output is the mean of V over every key; dropping
  // masked keys instead (fill -inf) gives zeros.
  AttentionCase c = makeCase(3, 2, 4, 5, 4, MaskKind::RightPadding, false,
                             -1e9f); // batch 2 keeps no key
  Run r = run(ctx_, c, false, 800);
  for (int64_t h = 0; h < c.heads; ++h)
    for (int64_t x = 0; x < c.d; ++x) {
      double mean = 0;
      for (int64_t j = 0; j < c.tk; ++j)
        mean += r.v[(2 * c.tk + j) * c.ld() + h * c.d + x] / c.tk;
      for (int64_t i = 0; i < c.tq; ++i)
        EXPECT_NEAR(r.o[(2 * c.tq + i) * c.ld() + h * c.d + x], mean, 1e-5);
    }
  c.fill = kNoFill;
  r = run(ctx_, c, false, 800);
  for (int64_t n = 2 * c.tq * c.ld(); n < 3 * c.tq * c.ld(); ++n)
    EXPECT_EQ(r.o[n], 0.0f);
}

TEST_F(AttentionTest, GroupedQueryHeads) {
  txrt_context *ctx = smallBlocks();
  uint32_t seed = 900;
  for (int64_t kvHeads : {1, 2}) {
    for (AttentionCase c : maskCases(2, 4, 9, 7, 3)) {
      c.kvHeads = kvHeads;
      checkForward(ctx_, c, seed++);
      checkBackward(ctx_, c, seed++, true);
    }
    for (AttentionCase c : generalCases(3, 4, 33, 41, 8)) {
      c.kvHeads = kvHeads;
      c.pad = 3;
      checkForward(ctx, c, seed++);
      checkBackward(ctx, c, seed++, false);
    }
  }
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, PackedLayoutsAndDropout) {
  txrt_context *ctx = smallBlocks();
  AttentionCase c = makeCase(2, 2, 33, 33, 8, MaskKind::RightPadding, true);
  c.pad = 5; // rows longer than heads * d, as inside a packed QKV buffer
  checkForward(ctx, c, 200);
  c.dropout = 0.25f;
  checkForward(ctx, c, 201);
  checkForward(ctx_, c, 202);
  txrt_context_destroy(ctx);
}

TEST_F(AttentionTest, EmptyRowsGiveZerosNotNaN) {
  // Batch 2 has no keys at all; with causal and tq > tk the first queries
  // see no key either.
  AttentionCase c = makeCase(3, 2, 9, 5, 4, MaskKind::RightPadding, true);
  Run r = run(ctx_, c, true, 300);
  const int64_t ld = c.ld();
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.tq; ++i) {
      bool empty = b == 2 || i < c.tq - c.tk;
      for (int64_t x = 0; x < ld; ++x) {
        float value = r.o[(b * c.tq + i) * ld + x];
        EXPECT_TRUE(std::isfinite(value));
        if (empty) {
          EXPECT_EQ(value, 0.0f) << "b=" << b << " i=" << i;
          EXPECT_EQ(r.dq[(b * c.tq + i) * ld + x], 0.0f);
        }
      }
      for (int64_t h = 0; h < c.heads; ++h) {
        if (empty)
          EXPECT_TRUE(std::isinf(r.lse[(b * c.heads + h) * c.tq + i]));
      }
    }
  for (float g : r.dk)
    EXPECT_TRUE(std::isfinite(g));
  for (int64_t j = 0; j < c.tk * ld; ++j) {
    EXPECT_EQ(r.dk[2 * c.tk * ld + j], 0.0f) << "keys of the empty batch";
    EXPECT_EQ(r.dv[2 * c.tk * ld + j], 0.0f);
  }
  checkForward(ctx_, c, 300);
  checkBackward(ctx_, c, 301, true);
}

// A NaN score makes its row's softmax NaN (PyTorch, and the unfused
// program): the fused kernel's running max skipped it and its exp clamped
// it, so a NaN in K came out as finite outputs and gradients, hiding a
// diverged model from the driver's finiteness checks. Now the rows that see
// the NaN key are NaN (output, lse, dQ), forward and backward, in f32 and
// bf16, through the block path and the whole-row path (a finite fill); the
// other heads and batches are untouched.
TEST_F(AttentionTest, ANaNScoreIsANaNRow) {
  for (Precision precision : {Precision::F32, Precision::Bf16})
    for (float fill : {kNoFill, -1e9f}) {
      AttentionCase c =
          makeCase(2, 2, 6, 7, 4, MaskKind::RightPadding, false, fill);
      SCOPED_TRACE(c.name() +
                   (precision == Precision::Bf16 ? " bf16" : " f32"));
      const int64_t nanHead = 1, nanKey = 3;
      Run r = run(ctx_, c, true, 500, precision, 0.0f, [&](Run &in) {
        in.k[(0 * c.tk + nanKey) * c.kvLd() + nanHead * c.d + 1] = NAN;
      });
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t i = 0; i < c.tq; ++i)
          for (int64_t h = 0; h < c.heads; ++h) {
            const bool nan = b == 0 && h == nanHead;
            EXPECT_EQ(std::isnan(r.lse[(b * c.heads + h) * c.tq + i]), nan)
                << "b=" << b << " h=" << h << " i=" << i;
            for (int64_t x = 0; x < c.d; ++x) {
              const int64_t at = (b * c.tq + i) * c.ld() + h * c.d + x;
              EXPECT_EQ(std::isnan(r.o[at]), nan)
                  << "o b=" << b << " h=" << h << " i=" << i;
              EXPECT_EQ(std::isnan(r.dq[at]), nan)
                  << "dq b=" << b << " h=" << h << " i=" << i;
            }
          }
      for (size_t n = size_t(c.tk * c.kvLd()); n < r.dk.size(); ++n) {
        EXPECT_TRUE(std::isfinite(r.dk[n]) && std::isfinite(r.dv[n])) << n;
      }
      EXPECT_TRUE(std::isnan(r.dv[(0 * c.tk + 0) * c.kvLd() + nanHead * c.d]));
    }
}

TEST_F(AttentionTest, BackwardMatchesFiniteDifferences) {
  uint32_t seed = 400;
  for (AttentionCase c : maskCases(2, 2, 5, 6, 3)) {
    checkBackward(ctx_, c, seed++, true);
    c.dropout = 0.3f;
    checkBackward(ctx_, c, seed++, true);
  }
}

TEST_F(AttentionTest, BackwardCancelsAConstantInTheScores) {
  // Keys with a common offset give each row of S a large constant the
  // softmax cancels; the saved lse, rounded at that size, put a common
  // factor on P = exp(S - lse), rowsum(dS) was not 0, and dQ took that
  // constant's direction (Wq's gradient 7e-3 off in a spec, 1e-4 unfused).
  // One key block holds the rows of 16 and 200 keys whole: P is
  // normalized there. Rows of 300 and 700 keys (two and three blocks)
  // take D = rowsum(dO * O), which carries the forward's normalization:
  // the common factor cancels in rowsum(dS) without it.
  for (int64_t tk : {16, 200, 300, 700}) {
    AttentionCase c = makeCase(1, 2, 16, tk, 16, MaskKind::None, false);
    SCOPED_TRACE(c.name());
    Run r = run(ctx_, c, true, 900, Precision::F32, 60.0f);
    Gradients g = referenceAttentionBackward(
        c, toDoubles(r.q), toDoubles(r.k), toDoubles(r.v),
        dropoutScales(ctx_, c), toDoubles(r.dO));
    double worst = 0, largest = 0;
    for (size_t n = 0; n < g.dq.size(); ++n) {
      worst = std::max(worst, std::fabs(double(r.dq[n]) - g.dq[n]));
      largest = std::max(largest, std::fabs(g.dq[n]));
    }
    EXPECT_LT(worst, 1e-4 * largest) << "worst " << worst << " of " << largest;
  }
}

TEST_F(AttentionTest, BackwardDvCancelsAConstantInLongRows) {
  // dV = P^T dO in rows longer than a key block took P = exp(S - lse) with
  // the saved lse's rounding as a common factor of up to 1 + eps |lse| on
  // the row, which the softmax's normalization removes: the sum of dV over
  // the keys (what a bias of V gets) is sum_i dO_i rowsum(P_i) = sum_i dO_i.
  // It was 1.8e-3 of sum |dO| off at a key offset of 1e5 here (now 1.3e-7;
  // a tester's W_v bias
  // gradient: 2.6e-3 off float64, 4 % at 1e7). Such rows are now
  // normalized with their sums over the key blocks. (dV's single entries
  // keep the rounding of S itself, eps |S|, as any float32 softmax.)
  for (int64_t tk : {300, 700})
    for (float offset : {60.0f, 3000.0f, 1e5f}) {
      AttentionCase c = makeCase(1, 2, 16, tk, 16, MaskKind::None, false);
      SCOPED_TRACE(c.name() + " offset " + std::to_string(offset));
      Run r = run(ctx_, c, true, 920, Precision::F32, offset);
      ASSERT_EQ(c.pad, 0);
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t col = 0; col < c.d; ++col) {
          double dv = 0, dO = 0, scale = 0;
          for (int64_t j = 0; j < c.tk; ++j)
            dv += r.dv[size_t(j * c.kvLd() + h * c.d + col)];
          for (int64_t i = 0; i < c.tq; ++i) {
            dO += r.dO[size_t(i * c.ld() + h * c.d + col)];
            scale += std::fabs(r.dO[size_t(i * c.ld() + h * c.d + col)]);
          }
          EXPECT_LT(std::fabs(dv - dO), 1e-6 * scale)
              << "head " << h << " column " << col << ": " << dv << " against "
              << dO;
        }
    }
}

TEST_F(AttentionTest, AFullyMaskedRowLeavesTheOtherRowsNormalized) {
  // A query row that sees no key (a -1e9 fill: it averages V, its masked
  // keys count) turned the per-row normalization above off for every row
  // of its query block, which then took D from O: another order of the
  // sums than the tiles' dP, so a row with a one-hot P (exact dQ and dK 0)
  // got P (dP - D) != 0, times large keys (1.9e-3 against a dV of 73, in a
  // differential tester's random spec).
  // V = K = Q with row i near 30 e_i: each row's own key wins by ~450.
  AttentionCase c = makeCase(1, 1, 4, 4, 4, MaskKind::QueryRows, false, -1e9f);
  Run r = run(ctx_, c, true, 910, Precision::F32, 0.0f, [](Run &r) {
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j)
        r.q[size_t(i * 4 + j)] =
            30.0f * ((i == j ? 1.0f : 0.0f) + 0.01f * r.q[size_t(i * 4 + j)]);
    r.k = r.q;
    r.v = r.q;
  });
  for (const Floats *gradient : {&r.dq, &r.dk})
    for (float value : *gradient)
      EXPECT_EQ(value, 0.0f);
  // Query row 0 sees no key: its output is the mean of V, and dV gets it.
  float largest = 0;
  for (float value : r.dv)
    largest = std::max(largest, std::fabs(value));
  EXPECT_GT(largest, 0.1f);
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

TEST_F(AttentionTest, BadArgumentsAreErrors) {
  Floats q(2 * 8), o(2 * 8), lse(4);
  // 2 query heads over 3 key/value heads.
  EXPECT_EQ(txrt_attention_fwd(ctx_, 1, 1, 2, 3, 2, 2, 4, q.data(), 8,
                               q.data(), 12, q.data(), 12, o.data(), 8,
                               lse.data(), nullptr, 0, 0, 0, 0, 0, 0.5f,
                               kNoFill, 0.0f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("kv_heads = 3"),
            std::string::npos)
      << txrt_last_error(ctx_);
  uint8_t keep[2] = {1, 1};
  EXPECT_EQ(txrt_attention_fwd(ctx_, 1, 1, 2, 2, 2, 2, 4, q.data(), 8,
                               q.data(), 8, q.data(), 8, o.data(), 8,
                               lse.data(), keep, 2, 0, 0, -1, 0, 0.5f, kNoFill,
                               0.0f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_attention_fwd(ctx_, 1, 1, 2, 2, 2, 2, 4, q.data(), 8,
                               q.data(), 8, q.data(), 8, o.data(), 8,
                               lse.data(), keep, 2, 0, 0, 1, 0, 0.5f, NAN,
                               0.0f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(AttentionTest, RowsOfABatchDrawTheBatchDropout) {
  // Batches 1..2 of a batch of 3, run alone with their place set on the
  // context (txrt_context_set_batch_rows), give the outputs and gradients
  // the whole batch gives them: the same dropout masks.
  AttentionCase c = makeCase(3, 2, 9, 9, 8, MaskKind::None, true);
  c.dropout = 0.3f;
  Run whole = run(ctx_, c, true, 300);
  AttentionCase share = c;
  share.batch = 2;
  auto rows = [](const Floats &all, int64_t perBatch) {
    return Floats(all.begin() + perBatch, all.begin() + 3 * perBatch);
  };
  const int64_t qRow = c.tq * c.ld(), kRow = c.tk * c.kvLd();
  Run r;
  r.q = rows(whole.q, qRow);
  r.k = rows(whole.k, kRow);
  r.v = rows(whole.v, kRow);
  r.dO = rows(whole.dO, qRow);
  r.o.assign(r.q.size(), 0.0f);
  r.lse.assign(2 * c.heads * c.tq, 0.0f);
  r.dq.assign(r.q.size(), 0.0f);
  r.dk.assign(r.k.size(), 0.0f);
  r.dv.assign(r.v.size(), 0.0f);
  txrt_context_set_batch_rows(ctx_, 1, 2);
  ASSERT_EQ(forward(ctx_, share, r), TXRT_OK) << txrt_last_error(ctx_);
  ASSERT_EQ(txrt_attention_bwd(
                ctx_, share.site + 1, share.site, share.batch, share.heads,
                share.kvh(), share.tq, share.tk, share.d, r.q.data(),
                share.ld(), r.k.data(), share.kvLd(), r.v.data(),
                share.kvLd(), r.o.data(), share.ld(), r.lse.data(),
                r.dO.data(), share.ld(), r.dq.data(), share.ld(),
                r.dk.data(), share.kvLd(), r.dv.data(), share.kvLd(),
                nullptr, 0, 0, 0, 0, share.causal, share.scale(), share.fill,
                share.dropout, share.seed, share.step),
            TXRT_OK)
      << txrt_last_error(ctx_);
  txrt_context_set_batch_rows(ctx_, 0, 0);
  EXPECT_EQ(r.o, rows(whole.o, qRow));
  EXPECT_EQ(r.dq, rows(whole.dq, qRow));
  EXPECT_EQ(r.dk, rows(whole.dk, kRow));
  EXPECT_EQ(r.dv, rows(whole.dv, kRow));
}

} // namespace

//===----------------------------------------------------------------------===//
// bf16 block products
//===----------------------------------------------------------------------===//

namespace {

/// The bound on |bf16 kernel - reference| relative to the output's scale
/// (its largest magnitude). bf16 keeps 8 significant bits: rounding to
/// nearest errs by at most u = 2^-8 ~ 3.9e-3 of the value, so a product of
/// two rounded operands by at most 2u ~ 7.8e-3 of |a b| (the product itself
/// is exact in f32; the f32 sums add ~1e-7). A score errs by that much of
/// scale * sum |q k| at worst, much less with head_dim terms of random
/// sign, and shifts P by its error relatively; P and V are rounded again for
/// P V (2u more per term, averaged over the keys). So the output's error is
/// about u of its scale: 1e-2 (1.3 times 2u, the error of a single product)
/// bounds it; the cases below reach 4.7e-3, and the f32 kernel is held to
/// 1e-4. Gradients pass through two rounded products each (dS from
/// dP = dO V^T and the recomputed P, then dS K, dS^T Q; P^T dO), and
/// dS = P (dP - D) subtracts the row's mean, leaving the larger terms'
/// rounding in a smaller difference: 2e-2 of each gradient's scale (the
/// cases reach 6.8e-3).
constexpr double kBf16ForwardBound = 1e-2;
constexpr double kBf16GradientBound = 2e-2;

/// max |actual - expected| / max(1e-6, max |expected|): the error in units
/// of the output's scale.
double errorOfScale(const Floats &actual, const Doubles &expected) {
  double worst = 0, scale = 1e-6;
  for (size_t n = 0; n < expected.size(); ++n) {
    scale = std::max(scale, std::fabs(expected[n]));
    worst = std::max(worst, std::fabs(double(actual[n]) - expected[n]));
  }
  return worst / scale;
}

double errorOfScale(const Floats &actual, const Floats &expected) {
  return errorOfScale(actual, toDoubles(expected));
}

class AttentionBf16Test : public AttentionTest,
                          public ::testing::WithParamInterface<bool> {
protected:
  /// The parameter: vdpbf16ps (true) or the rounded copies (false).
  void SetUp() override {
    AttentionTest::SetUp();
    if (GetParam() && !txrt::nativeBf16Products())
      GTEST_SKIP() << "this CPU has no AVX512_BF16 (vdpbf16ps)";
    txrt::useNativeBf16Products(GetParam());
  }
  void TearDown() override {
    txrt::useNativeBf16Products(true);
    AttentionTest::TearDown();
  }

  /// Forward and (when `backward`) backward in bf16 against the reference
  /// and the f32 kernel; returns the forward's error against the reference.
  static double checkBf16(txrt_context *ctx, const AttentionCase &c,
                          uint32_t seed, bool backward) {
    SCOPED_TRACE(c.name());
    Run bf16 = run(ctx, c, backward, seed, Precision::Bf16);
    Run f32 = run(ctx, c, backward, seed, Precision::F32);
    Doubles q = toDoubles(bf16.q), k = toDoubles(bf16.k), v = toDoubles(bf16.v),
            drop = dropoutScales(ctx, c);
    Doubles lse(c.batch * c.heads * c.tq);
    Doubles o = referenceAttention(c, q, k, v, drop, &lse);
    const double error = errorOfScale(bf16.o, o);
    EXPECT_LE(error, kBf16ForwardBound) << "o against the reference";
    EXPECT_LE(errorOfScale(bf16.o, f32.o), kBf16ForwardBound)
        << "o against the f32 kernel";
    for (size_t i = 0; i < lse.size(); ++i) {
      if (std::isinf(lse[i]))
        EXPECT_TRUE(std::isinf(bf16.lse[i]) && bf16.lse[i] < 0) << "lse " << i;
      else // the scores' error, absolute: lse is a score
        EXPECT_NEAR(bf16.lse[i], lse[i],
                    kBf16ForwardBound * std::max(1.0, std::fabs(lse[i])))
            << "lse " << i;
    }
    if (!backward)
      return error;
    Gradients g =
        referenceAttentionBackward(c, q, k, v, drop, toDoubles(bf16.dO));
    EXPECT_LE(errorOfScale(bf16.dq, g.dq), kBf16GradientBound) << "dq";
    EXPECT_LE(errorOfScale(bf16.dk, g.dk), kBf16GradientBound) << "dk";
    EXPECT_LE(errorOfScale(bf16.dv, g.dv), kBf16GradientBound) << "dv";
    EXPECT_LE(errorOfScale(bf16.dq, f32.dq), kBf16GradientBound) << "dq f32";
    EXPECT_LE(errorOfScale(bf16.dk, f32.dk), kBf16GradientBound) << "dk f32";
    EXPECT_LE(errorOfScale(bf16.dv, f32.dv), kBf16GradientBound) << "dv f32";
    return error;
  }
};

TEST_P(AttentionBf16Test, EveryMaskFormForwardAndBackward) {
  txrt_context *ctx = smallBlocks();
  uint32_t seed = 2000;
  double largest = 0;
  for (const AttentionCase &c : maskCases(2, 3, 37, 29, 24))
    largest = std::max(largest, checkBf16(ctx_, c, seed++, true));
  for (const AttentionCase &c : generalCases(3, 2, 33, 41, 16))
    largest = std::max(largest, checkBf16(ctx, c, seed++, true));
  // The products did run in bf16: an f32 kernel is within 1e-4.
  EXPECT_GT(largest, 1e-4);
  txrt_context_destroy(ctx);
}

TEST_P(AttentionBf16Test, GroupedQueryHeadsDropoutAndTails) {
  txrt_context *ctx = smallBlocks();
  uint32_t seed = 2100;
  for (int64_t kvHeads : {1, 2})
    for (AttentionCase c : maskCases(2, 4, 33, 19, 9)) {
      c.kvHeads = kvHeads;
      c.pad = 3;
      c.dropout = 0.2f;
      checkBf16(ctx, c, seed++, true);
    }
  // One key block of 65 keys and head_dim 64 in the default blocks (the
  // model's shapes), odd sizes elsewhere.
  for (AttentionCase c : maskCases(1, 2, 65, 65, 64))
    checkBf16(ctx_, c, seed++, true);
  for (AttentionCase c : maskCases(2, 1, 7, 5, 3))
    checkBf16(ctx_, c, seed++, true);
  txrt_context_destroy(ctx);
}

TEST_P(AttentionBf16Test, FullyMaskedRowsAsTheF32Kernel) {
  // Batch 2 keeps no key: with fill -inf its rows are zeros, with -1e9 the
  // mean of V, both computed as the f32 kernel computes them (bit for bit).
  for (float fill : {kNoFill, -1e9f})
    for (bool causal : {false, true}) {
      AttentionCase c =
          makeCase(3, 2, 6, 5, 4, MaskKind::RightPadding, causal, fill);
      SCOPED_TRACE(c.name());
      Run bf16 = run(ctx_, c, true, 810, Precision::Bf16);
      Run f32 = run(ctx_, c, true, 810, Precision::F32);
      const int64_t first = 2 * c.tq * c.ld(), last = 3 * c.tq * c.ld();
      for (int64_t n = first; n < last; ++n) {
        EXPECT_EQ(bf16.o[n], f32.o[n]) << "o " << n;
        EXPECT_EQ(bf16.dq[n], f32.dq[n]) << "dq " << n;
        if (fill == kNoFill) {
          EXPECT_EQ(bf16.o[n], 0.0f) << "o " << n;
          EXPECT_EQ(bf16.dq[n], 0.0f) << "dq " << n;
        }
      }
      for (int64_t n = 2 * c.tk * c.kvLd(); n < 3 * c.tk * c.kvLd(); ++n) {
        EXPECT_EQ(bf16.dk[n], f32.dk[n]) << "dk " << n;
        EXPECT_EQ(bf16.dv[n], f32.dv[n]) << "dv " << n;
      }
    }
}

TEST_F(AttentionTest, Bf16BadArgumentsAreErrors) {
  // The bf16 entry points check their arguments as the f32 ones do, and
  // their messages name them.
  Floats q(2 * 8), o(2 * 8), lse(4), dq(2 * 8), dk(2 * 12), dv(2 * 12);
  EXPECT_EQ(txrt_attention_fwd_bf16(ctx_, 1, 1, 2, 3, 2, 2, 4, q.data(), 8,
                                    q.data(), 12, q.data(), 12, o.data(), 8,
                                    lse.data(), nullptr, 0, 0, 0, 0, 0, 0.5f,
                                    kNoFill, 0.0f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  std::string message = txrt_last_error(ctx_);
  EXPECT_NE(message.find("txrt_attention_fwd_bf16"), std::string::npos)
      << message;
  EXPECT_NE(message.find("kv_heads = 3"), std::string::npos) << message;
  EXPECT_EQ(txrt_attention_bwd_bf16(
                ctx_, 2, 1, 1, 2, 2, 2, 2, 4, q.data(), 8, q.data(), 8,
                q.data(), 8, o.data(), 8, lse.data(), o.data(), 8, dq.data(),
                8, dk.data(), 8, dv.data(), 8, nullptr, 0, 0, 0, 0, 0, 0.5f,
                kNoFill, 1.5f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  message = txrt_last_error(ctx_);
  EXPECT_NE(message.find("txrt_attention_bwd_bf16"), std::string::npos)
      << message;
  EXPECT_NE(message.find("dropout_p"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Products, AttentionBf16Test,
                         ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "DotProducts"
                                                         : "RoundedCopies");
                         });

} // namespace
