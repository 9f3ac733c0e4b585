//===- Attention.cpp - fused flash-style attention, fwd and bwd -----------===//
//
// Scores never travel to memory in full: at most one block of blockQ
// queries x blockK keys exists at a time, in a per-thread buffer.
//
// Forward, per (batch, head, group of query blocks): K^T of the head is
// packed once (the only copy: it is the B operand of S = Q K^T); for each
// query block, key blocks are visited with an online softmax (running max m
// and sum l per query; the output accumulator is rescaled by
// exp(m_old - m_new) when the max grows). Only lse = m + log(l) per query
// is saved.
//
// Backward, per (batch, key/value head): K^T and V^T (and a dense K) are
// packed once;
// for each query block (Q and dO gathered densely, D = rowsum(dO * O) on
// the way) and key block it recomputes S = Q K^T and P = exp(S - lse), then
// dP = dO V^T and dS = P * (dP - D), and accumulates dV += P^T dO,
// dK += scale dS^T Q, dQ += scale dS K in place in the outputs (the first
// contribution overwrites, so nothing is zeroed first). One thread owns a
// (batch, key/value head), so there are no write races.
//
// Block products are tileGemm's register-blocked loops (TileGemm.h); the
// bf16 entry points (txrt_attention_fwd_bf16, _bwd_bf16) run the same code
// with tileGemmBf16 instead: every product's operands (Q, K, V, P, dO, dS)
// are rounded to bf16 as the product packs them and accumulate in f32,
// while the softmax statistics (m, l, lse), the rescaling, D, dS, masks
// and dropout stay f32 and the outputs are f32. The rare rows whose masked
// keys count (below) are computed whole in f32 in the forward; in the
// backward only their masked keys' share of dV is (backwardMaskedKeys),
// and their visible keys go through the block products as any row's. Q, K,
// V, O and the gradients are read and written in place through their leading
// dimensions ([B, T, h, d] with any row stride): no head-split copies. With
// grouped-query attention (kv_heads < heads) query head h reads key/value
// head h / (heads / kv_heads); the backward runs every query head of a
// key/value head in one task, which owns that head's dK and dV.
//
// Masks: causal is a flag; any other mask is an i1 keep mask with strides
// over (batch, head, query, key), 0 where it broadcasts. A mask that depends
// on the key only and keeps a prefix of the keys (right padding) becomes key
// lengths: keys past a query block's last visible key are never computed.
// Otherwise the mask is read key by key inside the tiles. Masked keys get
// the score `fill`: with -inf they drop out and a row with no visible key
// gives zeros; with a finite fill (what masked_fill wrote) a row whose
// masked keys have a probability that is not negligible, e.g. a row whose
// every key is masked (the mean of V), is computed whole, forward and
// backward, as the written program computes it.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Philox.h"
#include "Simd.h"
#include "TileGemm.h"
#include "VecMath.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace txrt;

namespace {

//===----------------------------------------------------------------------===//
// Geometry, masks, dropout
//===----------------------------------------------------------------------===//

/// A masked score below the row's log-sum-exp by more than this carries a
/// probability under e^-100 (about 4e-44): masked keys of such a row are left
/// out, as the unfused softmax's exp underflows them to 0.
constexpr float kNegligibleScore = 100.0f;

struct Geometry {
  int64_t batch, heads, kvHeads, group, tq, tk, d;
  int64_t blockQ, blockK;
  bool causal;
  /// The score of a masked key: -inf drops masked keys (a row with no visible
  /// key gives zeros); a finite value is what masked_fill wrote.
  float fill;
  /// The keep mask (NULL: none) and its element strides over (b, h, i, j).
  const uint8_t *mask;
  int64_t maskStride[4];
  /// Per batch: keys at or past keyEnd[b] are masked for every query, and
  /// general[b] says whether keys before it must be looked up in the mask
  /// (0: the mask keeps exactly the prefix, the key-length fast path).
  std::vector<int64_t> keyEnd;
  std::vector<uint8_t> general;

  int64_t kvHead(int64_t h) const { return h / group; }
  /// Query row i of batch b may see keys [0, visible(b, i)) (the mask may
  /// still drop some of them where general[b]).
  int64_t visible(int64_t b, int64_t i) const {
    int64_t end = keyEnd[b];
    if (causal)
      end = std::min(end, std::max<int64_t>(0, i + (tk - tq) + 1));
    return end;
  }
  /// The mask row of query i (head h, batch b): key j at row[j * stride].
  const uint8_t *maskRow(int64_t b, int64_t h, int64_t i) const {
    return mask + b * maskStride[0] + h * maskStride[1] + i * maskStride[2];
  }
  /// Whether query i of head h in batch b sees key j.
  bool sees(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (j >= visible(b, i))
      return false;
    return !mask || maskRow(b, h, i)[j * maskStride[3]] != 0;
  }
  bool exactFill() const { return fill > kNegInf; }
};

/// Where the keys a batch's mask keeps end, and whether they are a prefix.
/// Only masks that depend on the key alone are analysed; any other mask is
/// read key by key.
void analyseMask(Geometry &g) {
  g.keyEnd.assign(g.batch, g.tk);
  g.general.assign(g.batch, g.mask ? 1 : 0);
  if (!g.mask || g.maskStride[1] != 0 || g.maskStride[2] != 0)
    return;
  const int64_t sk = g.maskStride[3];
  for (int64_t b = 0; b < g.batch; ++b) {
    const uint8_t *row = g.mask + b * g.maskStride[0];
    int64_t prefix = 0;
    while (prefix < g.tk && row[prefix * sk])
      ++prefix;
    int64_t end = g.tk;
    while (end > prefix && !row[(end - 1) * sk])
      --end;
    g.keyEnd[b] = end;
    g.general[b] = end > prefix;
  }
}

struct MaskArgs {
  const uint8_t *keep;
  int64_t sb, sh, sq, sk;
  float fill;
};

Geometry makeGeometry(Context &ctx, int64_t batch, int64_t heads,
                      int64_t kvHeads, int64_t tq, int64_t tk, int64_t d,
                      const MaskArgs &mask, int32_t causal) {
  Geometry g;
  g.batch = batch;
  g.heads = heads;
  g.kvHeads = kvHeads;
  g.group = heads / kvHeads;
  g.tq = tq;
  g.tk = tk;
  g.d = d;
  g.blockQ = std::max<int64_t>(1, std::min(ctx.attentionBlockQ, tq));
  g.blockK = std::max<int64_t>(1, std::min(ctx.attentionBlockK, tk));
  g.causal = causal != 0;
  g.fill = mask.fill;
  g.mask = mask.keep;
  g.maskStride[0] = mask.sb;
  g.maskStride[1] = mask.sh;
  g.maskStride[2] = mask.sq;
  g.maskStride[3] = mask.sk;
  analyseMask(g);
  return g;
}

void validate(int64_t batch, int64_t heads, int64_t kvHeads, int64_t tq,
              int64_t tk, int64_t headDim, int64_t ldq, int64_t ldk,
              int64_t ldv, int64_t ldo, const MaskArgs &mask,
              float dropoutP) {
  require(batch >= 0 && heads >= 0 && tq >= 0 && tk >= 0 && headDim >= 0,
          "sizes must be non-negative");
  require(kvHeads >= 1 && heads % kvHeads == 0,
          "kv_heads = " + std::to_string(kvHeads) +
              " must be >= 1 and divide heads = " + std::to_string(heads));
  require(ldq >= heads * headDim && ldo >= heads * headDim,
          "ldq and ldo must be >= heads * head_dim");
  require(ldk >= kvHeads * headDim && ldv >= kvHeads * headDim,
          "ldk and ldv must be >= kv_heads * head_dim");
  require(dropoutP >= 0.0f && dropoutP < 1.0f, "dropout_p must be in [0, 1)");
  require(mask.sb >= 0 && mask.sh >= 0 && mask.sq >= 0 && mask.sk >= 0,
          "mask strides must be non-negative");
  require(!std::isnan(mask.fill) && mask.fill != -kNegInf,
          "fill must be a number or -inf");
}
struct Dropout {
  bool enabled;
  PhiloxKey key;
  uint32_t threshold;
  float keepScale;
  /// Where the call's probabilities start in the whole batch's stream
  /// (txrt_context_set_batch_rows), as txrt_dropout_fwd counts them.
  int64_t offset;
  Dropout(float p, uint64_t seed, int64_t step, int64_t site, int64_t offset)
      : enabled(p > 0.0f), key(philoxKey(seed, step, site)),
        threshold(dropoutThreshold(p)), keepScale(1.0f / (1.0f - p)),
        offset(offset) {}
  /// Scales of query i (of batch b, head h) for keys [k0, k0 + count).
  void scales(const Geometry &g, int64_t b, int64_t h, int64_t i, int64_t k0,
              int64_t count, float *out) const {
    uint64_t first =
        uint64_t(offset + ((b * g.heads + h) * g.tq + i) * g.tk + k0);
    dropoutScales(key, first, count, threshold, keepScale, out);
  }
};

/// The number of attention probabilities, [batch, heads, tq, tk].
int64_t probsElements(const Geometry &g) {
  return g.batch * g.heads * g.tq * g.tk;
}

/// Allocates every thread's workspace before a parallel region (nothing may
/// throw inside one) and returns the number of floats each holds.
size_t reserveWorkspaces(Context &ctx, size_t floats) {
  for (int t = 0; t < ctx.numThreads(); ++t)
    ctx.threadWorkspace(t).as<float>(floats);
  return floats;
}

void zeroRows(float *base, int64_t rows, int64_t ld, int64_t width) {
  for (int64_t i = 0; i < rows; ++i) {
    float *row = base + i * ld;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j)
      row[j] = 0.0f;
  }
}

/// A leading dimension for a buffer row of n floats: a multiple of 16
/// (whole cache lines) that is not a multiple of 128, so that a column of
/// rows does not fall into a handful of L1 sets.
int64_t paddedLd(int64_t n) {
  int64_t rounded = (n + 15) / 16 * 16;
  return rounded % 128 == 0 ? rounded + 16 : rounded;
}

/// dst[i * ldd + j] = src[i * lds + j] for i < rows, j < width: gathers a
/// head's rows (strided by the model width) into a dense block.
void copyRows(int64_t rows, int64_t width, const float *src, int64_t lds,
              float *dst, int64_t ldd) {
  constexpr int64_t kAhead = 8; // strided rows: prefetch ahead by hand
  for (int64_t i = 0; i < std::min(rows, kAhead); ++i)
    for (int64_t j = 0; j < width; j += 16)
      __builtin_prefetch(src + i * lds + j);
  for (int64_t i = 0; i < rows; ++i) {
    if (i + kAhead < rows)
      for (int64_t j = 0; j < width; j += 16)
        __builtin_prefetch(src + (i + kAhead) * lds + j);
    const float *from = src + i * lds;
    float *to = dst + i * ldd;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j)
      to[j] = from[j];
  }
}

/// Leading dimensions of the per-thread buffers.
struct Strides {
  int64_t keys; // rows of K^T / V^T: [d x keys]
  int64_t tile; // rows of [queries x keys] tiles
  int64_t dim;  // rows of [queries x d] accumulators
  explicit Strides(const Geometry &g)
      : keys(paddedLd(g.tk)), tile(paddedLd(g.blockK)), dim(paddedLd(g.d)) {}
};

//===----------------------------------------------------------------------===//
// Rows whose masked keys count (exact masked_fill semantics)
//===----------------------------------------------------------------------===//

/// Whether row i of head h (batch b), with `lse` the log-sum-exp of its
/// visible scores, gives its masked keys a probability that is not
/// negligible: only when the masked score is a number (g.fill) close enough
/// to the row's scores, e.g. every key of the row is masked. Such rows are
/// rare, and computed whole by the helpers below.
bool masksCount(const Geometry &g, int64_t b, int64_t h, int64_t i,
                float lse) {
  // A NaN lse (a NaN or +inf score) is a NaN row, computed in blocks.
  if (!g.exactFill() || std::isnan(lse) || g.fill - lse < -kNegligibleScore)
    return false;
  for (int64_t j = 0; j < g.tk; ++j)
    if (!g.sees(b, h, i, j))
      return true;
  return false;
}

float dot(const float *a, const float *b, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t x = 0; x < n; ++x)
    sum += a[x] * b[x];
  return sum;
}

/// The scores of row i of head h (batch b) over all tk keys as the written
/// program has them (masked keys at g.fill) into `scores`; returns their
/// max.
float wholeRowScores(const Geometry &g, const float *q, int64_t ldq,
                     const float *k, int64_t ldk, float scale, int64_t b,
                     int64_t h, int64_t i, float *scores) {
  const float *query = q + (b * g.tq + i) * ldq + h * g.d;
  const float *keys = k + b * g.tk * ldk + g.kvHead(h) * g.d;
  float top = kNegInf;
  for (int64_t j = 0; j < g.tk; ++j) {
    scores[j] = g.sees(b, h, i, j) ? scale * dot(query, keys + j * ldk, g.d)
                                   : g.fill;
    top = std::max(top, scores[j]);
  }
  return top;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// The block product: tileGemm (f32) or tileGemmBf16.
using BlockProduct = decltype(&tileGemm);

struct ForwardArgs {
  const float *q, *k, *v;
  int64_t ldq, ldk, ldv;
  float *o, *lse;
  int64_t ldo;
  float scale;
  BlockProduct product;
};

/// Per-thread buffers of the forward.
struct ForwardBuffers {
  Strides ld;
  float *keysT;           // [d x keys]  K^T of the head
  float *scores;          // [bq x tile] S, then P
  float *acc;             // [bq x dim]  unnormalised output
  float *rowMax, *rowSum; // [bq] each
  float *keep;            // [tile]      dropout scales of a row
  float *wholeRow;        // [tk] x 2    scores and scales of a whole row

  static size_t floats(const Geometry &g) {
    Strides ld(g);
    return size_t(g.d * ld.keys + g.blockQ * ld.tile + g.blockQ * ld.dim +
                  2 * g.blockQ + ld.tile + 2 * ld.keys);
  }
  ForwardBuffers(float *w, const Geometry &g) : ld(g) {
    keysT = w;
    scores = keysT + g.d * ld.keys;
    acc = scores + g.blockQ * ld.tile;
    rowMax = acc + g.blockQ * ld.dim;
    rowSum = rowMax + g.blockQ;
    keep = rowSum + g.blockQ;
    wholeRow = keep + ld.tile;
  }
};

/// Row i of head h (batch b) over all tk keys as the written program
/// computes it: masked scores are g.fill. Writes the output row and lse.
void forwardWholeRow(const Geometry &g, const ForwardArgs &x,
                     const Dropout &dropout, ForwardBuffers &w, int64_t b,
                     int64_t h, int64_t i) {
  float *scores = w.wholeRow, *keep = w.wholeRow + w.ld.keys;
  const float top =
      wholeRowScores(g, x.q, x.ldq, x.k, x.ldk, x.scale, b, h, i, scores);
  if (anyNanOrPosInf(scores, g.tk)) { // the softmax is NaN everywhere
    float *out = x.o + (b * g.tq + i) * x.ldo + h * g.d;
    std::fill(out, out + g.d, std::numeric_limits<float>::quiet_NaN());
    if (x.lse)
      x.lse[(b * g.heads + h) * g.tq + i] =
          std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float sum = expShiftedSum(scores, top, g.tk, scores);
  if (dropout.enabled)
    dropout.scales(g, b, h, i, 0, g.tk, keep);
  const float *values = x.v + b * g.tk * x.ldv + g.kvHead(h) * g.d;
  float *out = x.o + (b * g.tq + i) * x.ldo + h * g.d;
  std::fill(out, out + g.d, 0.0f);
  for (int64_t j = 0; j < g.tk; ++j) {
    const float p = scores[j] / sum * (dropout.enabled ? keep[j] : 1.0f);
    const float *value = values + j * x.ldv;
#pragma omp simd
    for (int64_t c = 0; c < g.d; ++c)
      out[c] += p * value[c];
  }
  if (x.lse)
    x.lse[(b * g.heads + h) * g.tq + i] = top + std::log(sum);
}

/// One query block [q0, q0 + rows) of head h in batch b; keysT holds K^T
/// of the head's key/value head for at least the keys this block sees.
void forwardQueryBlock(const Geometry &g, const ForwardArgs &x,
                       const Dropout &dropout, ForwardBuffers &w, int64_t b,
                       int64_t h, int64_t q0, int64_t rows) {
  const int64_t d = g.d, ldt = w.ld.tile, ldd = w.ld.dim;
  const int64_t keyStop = g.visible(b, q0 + rows - 1);
  const float *qBlock = x.q + (b * g.tq + q0) * x.ldq + h * d;
  const float *vHead = x.v + g.kvHead(h) * d;
  const bool general = g.general[b];

  for (int64_t i = 0; i < rows; ++i) {
    std::fill(w.acc + i * ldd, w.acc + i * ldd + d, 0.0f);
    w.rowMax[i] = kNegInf;
    w.rowSum[i] = 0.0f;
  }
  for (int64_t k0 = 0; k0 < keyStop; k0 += g.blockK) {
    const int64_t cols = std::min(g.blockK, keyStop - k0);
    // S [rows x cols] = scale * Q K_block^T.
    x.product(rows, cols, d, x.scale, qBlock, x.ldq, ALayout::RowMajor,
              w.keysT + k0, w.ld.keys, w.scores, ldt, false);
    // Online softmax over the visible keys of each row.
    for (int64_t i = 0; i < rows; ++i) {
      float *row = w.scores + i * ldt;
      const int64_t valid =
          std::clamp<int64_t>(g.visible(b, q0 + i) - k0, 0, cols);
      if (general && valid > 0) {
        const uint8_t *keep = g.maskRow(b, h, q0 + i) + k0 * g.maskStride[3];
        for (int64_t j = 0; j < valid; ++j)
          if (!keep[j * g.maskStride[3]])
            row[j] = kNegInf;
      }
      // A NaN or +inf score makes the row's softmax NaN everywhere (as the
      // unfused program and PyTorch compute it; rowMax skipped a NaN and
      // the row came out finite): a NaN sum marks the row, kept through
      // the later blocks (NaN * rescale + sum).
      bool nanOrPosInf = false;
      const float newMax =
          std::max(w.rowMax[i], rowMaxChecked(row, valid, nanOrPosInf));
      if (nanOrPosInf)
        w.rowSum[i] = std::numeric_limits<float>::quiet_NaN();
      if (newMax == kNegInf) { // nothing visible yet
        std::fill(row, row + cols, 0.0f);
        continue;
      }
      const float rescale = expApprox(w.rowMax[i] - newMax);
      const float sum = expShiftedSum(row, newMax, valid, row);
      std::fill(row + valid, row + cols, 0.0f);
      w.rowSum[i] = w.rowSum[i] * rescale + sum;
      w.rowMax[i] = newMax;
      if (rescale != 1.0f) {
        float *accRow = w.acc + i * ldd;
#pragma omp simd
        for (int64_t j = 0; j < d; ++j)
          accRow[j] *= rescale;
      }
      if (dropout.enabled) {
        dropout.scales(g, b, h, q0 + i, k0, valid, w.keep);
#pragma omp simd
        for (int64_t j = 0; j < valid; ++j)
          row[j] *= w.keep[j];
      }
    }
    // acc [rows x d] += P V_block.
    x.product(rows, d, cols, 1.0f, w.scores, ldt, ALayout::RowMajor,
              vHead + (b * g.tk + k0) * x.ldv, x.ldv, w.acc, ldd, true);
  }

  float *oBlock = x.o + (b * g.tq + q0) * x.ldo + h * d;
  for (int64_t i = 0; i < rows; ++i) {
    if (std::isnan(w.rowSum[i])) { // a NaN or +inf score: NaN, lse too
      float *out = oBlock + i * x.ldo;
      std::fill(out, out + d, std::numeric_limits<float>::quiet_NaN());
      if (x.lse)
        x.lse[(b * g.heads + h) * g.tq + q0 + i] =
            std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const bool any = w.rowSum[i] > 0.0f;
    const float lse = any ? w.rowMax[i] + std::log(w.rowSum[i]) : kNegInf;
    if (masksCount(g, b, h, q0 + i, lse)) {
      forwardWholeRow(g, x, dropout, w, b, h, q0 + i);
      continue;
    }
    float *out = oBlock + i * x.ldo;
    const float *accRow = w.acc + i * ldd;
    const float inverse = any ? 1.0f / w.rowSum[i] : 0.0f;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j)
      out[j] = accRow[j] * inverse;
    if (x.lse)
      x.lse[(b * g.heads + h) * g.tq + q0 + i] = lse;
  }
}

void attentionForward(Context &ctx, const Geometry &g, const ForwardArgs &x,
                      const Dropout &dropout) {
  const size_t floats = reserveWorkspaces(ctx, ForwardBuffers::floats(g));
  const int64_t qBlocks = (g.tq + g.blockQ - 1) / g.blockQ;
  // Enough tasks for every thread; K^T is packed once per task.
  const int64_t heads = g.batch * g.heads;
  const int64_t groups = std::clamp<int64_t>(
      (2 * ctx.numThreads() + heads - 1) / heads, 1, qBlocks);
  const int64_t blocksPerGroup = (qBlocks + groups - 1) / groups;
  const int64_t tasks = heads * groups;
#pragma omp parallel for num_threads(ctx.numThreads()) schedule(dynamic, 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t group = task % groups;
    const int64_t h = (task / groups) % g.heads;
    const int64_t b = task / (groups * g.heads);
    const int64_t firstBlock = group * blocksPerGroup;
    const int64_t lastBlock = std::min(qBlocks, firstBlock + blocksPerGroup);
    if (firstBlock >= lastBlock)
      continue;
    ForwardBuffers w(
        ctx.threadWorkspace(omp_get_thread_num()).as<float>(floats), g);
    const int64_t lastRow = std::min(g.tq, lastBlock * g.blockQ) - 1;
    transposeTile(g.visible(b, lastRow), g.d,
                  x.k + b * g.tk * x.ldk + g.kvHead(h) * g.d, x.ldk, w.keysT,
                  w.ld.keys);
    for (int64_t block = firstBlock; block < lastBlock; ++block) {
      const int64_t q0 = block * g.blockQ;
      forwardQueryBlock(g, x, dropout, w, b, h, q0,
                        std::min(g.blockQ, g.tq - q0));
    }
  }
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

struct BackwardArgs {
  const float *q, *k, *v, *o, *lse, *dO;
  int64_t ldq, ldk, ldv, ldo, lddo;
  float *dq, *dk, *dv;
  int64_t lddq, lddk, lddv;
  float scale;
  BlockProduct product;
};

/// Per-thread buffers of the backward.
struct BackwardBuffers {
  Strides ld;
  float *keysT, *valuesT; // [d x keys] each
  float *keys;            // [tk x dim] K of the head, dense
  float *query, *gradO;   // [bq x dim] Q and dO of the block, dense
  float *probs;           // [bq x tile] P
  float *dscores;         // [bq x tile] dP, then dS
  float *dropped;         // [bq x tile] P after dropout
  float *keep;            // [tile]      dropout scales of a row
  float *rowD, *rowLse;   // [bq] each
  float *rowCounts;       // [bq] 1 where the row's masked keys count
  float *rowScale;        // [bq] 1 / rowsum(exp(S - lse)) (longRowSums)
  float *wholeRow;        // [tk] x 2    scores and scales of a whole row

  static size_t floats(const Geometry &g) {
    Strides ld(g);
    return size_t(2 * g.d * ld.keys + g.tk * ld.dim + 2 * g.blockQ * ld.dim +
                  3 * g.blockQ * ld.tile + ld.tile + 4 * g.blockQ +
                  2 * ld.keys);
  }
  BackwardBuffers(float *w, const Geometry &g) : ld(g) {
    const int64_t tile = g.blockQ * ld.tile;
    keysT = w;
    valuesT = keysT + g.d * ld.keys;
    keys = valuesT + g.d * ld.keys;
    query = keys + g.tk * ld.dim;
    gradO = query + g.blockQ * ld.dim;
    probs = gradO + g.blockQ * ld.dim;
    dscores = probs + tile;
    dropped = dscores + tile;
    keep = dropped + tile;
    rowD = keep + ld.tile;
    rowLse = rowD + g.blockQ;
    rowCounts = rowLse + g.blockQ;
    rowScale = rowCounts + g.blockQ;
    wholeRow = rowScale + g.blockQ;
  }
};

/// copy[0, n) = a[0, n); returns sum(a[j] * b[j]) (D = rowsum(dO * O)).
float copyAndDot(int64_t n, const float *a, const float *b, float *copy) {
  int64_t j = 0;
#if TXRT_HAS_SIMD
  Simd::Vec acc = Simd::zero();
  for (; j + Simd::kLanes <= n; j += Simd::kLanes) {
    const Simd::Vec av = Simd::load(a + j);
    Simd::store(copy + j, av);
    acc = Simd::fmadd(av, Simd::load(b + j), acc);
  }
  if (j < n) {
    const Simd::Tail tail = Simd::tail(n - j);
    const Simd::Vec av = Simd::load(a + j, tail);
    Simd::store(copy + j, tail, av);
    acc = Simd::fmadd(av, Simd::load(b + j, tail), acc);
  }
  return Simd::sum(acc);
#else
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (j = 0; j < n; ++j) {
    copy[j] = a[j];
    sum += a[j] * b[j];
  }
  return sum;
#endif
}

/// C rows [0, rows) of a product over keys: the rows below `written` are
/// accumulated into, the others overwritten (dK and dV are not zeroed).
void keyRowsGemm(BlockProduct product, int64_t rows, int64_t written, int64_t n,
                 int64_t k, float alpha, const float *a, int64_t lda,
                 const float *b, int64_t ldb, float *c, int64_t ldc) {
  int64_t split = std::clamp<int64_t>(written, 0, rows);
  if (split > 0)
    product(split, n, k, alpha, a, lda, ALayout::ColumnMajor, b, ldb, c, ldc,
            true);
  if (split < rows)
    product(rows - split, n, k, alpha, a + split, lda, ALayout::ColumnMajor, b,
            ldb, c + split * ldc, ldc, false);
}

/// A saved lse of at least this size is rounded by more than about 1e-6
/// (half an ulp of 16 is 9.5e-7): P = exp(S - lse) then carries that
/// rounding as a common factor on its row.
constexpr float kRoundedLse = 16.0f;

/// P = exp(S - lse) of row i of a key block (`cols` keys from k0, S in p),
/// in place: 0 past the keys the row sees and where the mask drops one;
/// a NaN lse is a NaN row (as the unfused softmax's). Returns the number
/// of keys it sees in the block.
int64_t rowProbabilities(const Geometry &g, int64_t b, int64_t h, int64_t i,
                         int64_t k0, int64_t cols, float lse, float *p) {
  // A row with no visible key (lse = -inf) has P = 0.
  const int64_t valid =
      lse == kNegInf ? 0 : std::clamp<int64_t>(g.visible(b, i) - k0, 0, cols);
  if (std::isnan(lse))
    std::fill(p, p + valid, std::numeric_limits<float>::quiet_NaN());
  else
    expShifted(p, lse, valid, p);
  if (g.general[b]) {
    const uint8_t *keep = g.maskRow(b, h, i) + k0 * g.maskStride[3];
    for (int64_t j = 0; j < valid; ++j)
      if (!keep[j * g.maskStride[3]])
        p[j] = 0.0f;
  }
  std::fill(p + valid, p + cols, 0.0f);
  return valid;
}

/// Rows of a query block longer than a key block: their P cannot be
/// normalized from one block's tiles, and dV = P^T dO took the saved lse's
/// rounding as a common factor (D from O keeps dQ and dK right; dV was
/// 2.6e-3 off float64 at scores near 1e5). For rows with |lse| >=
/// kRoundedLse this pass computes S = Q K^T over the key blocks and sets
/// rowScale to 1 / rowsum(exp(S - lse)); other rows get 1. Returns whether
/// any row needs it. The products are the main pass's, so are their bits.
bool longRowSums(const Geometry &g, const BackwardArgs &x, BackwardBuffers &w,
                 int64_t b, int64_t h, int64_t q0, int64_t rows,
                 int64_t keyStop) {
  bool any = false;
  for (int64_t i = 0; i < rows; ++i) {
    w.rowScale[i] = 1.0f;
    // rowD holds the sums on the way.
    w.rowD[i] = std::isfinite(w.rowLse[i]) && w.rowCounts[i] == 0.0f &&
                        std::fabs(w.rowLse[i]) >= kRoundedLse
                    ? 0.0f
                    : -1.0f;
    any = any || w.rowD[i] == 0.0f;
  }
  if (!any)
    return false;
  const int64_t ldt = w.ld.tile;
  for (int64_t k0 = 0; k0 < keyStop; k0 += g.blockK) {
    const int64_t cols = std::min(g.blockK, keyStop - k0);
    x.product(rows, cols, g.d, x.scale, w.query, w.ld.dim, ALayout::RowMajor,
              w.keysT + k0, w.ld.keys, w.probs, ldt, false);
    for (int64_t i = 0; i < rows; ++i) {
      if (w.rowD[i] < 0.0f)
        continue;
      float *p = w.probs + i * ldt;
      const int64_t valid =
          rowProbabilities(g, b, h, q0 + i, k0, cols, w.rowLse[i], p);
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < valid; ++j)
        sum += p[j];
      w.rowD[i] += sum;
    }
  }
  for (int64_t i = 0; i < rows; ++i)
    if (w.rowD[i] > 0.0f)
      w.rowScale[i] = 1.0f / w.rowD[i];
  return true;
}

/// One query block of head h; returns the number of keys it saw (its dK /
/// dV rows [0, that) now hold values).
int64_t backwardQueryBlock(const Geometry &g, const BackwardArgs &x,
                           const Dropout &dropout, BackwardBuffers &w,
                           int64_t b, int64_t h, int64_t q0, int64_t rows,
                           int64_t keysWritten) {
  const int64_t d = g.d, bk = g.blockK, ldt = w.ld.tile;
  const int64_t headOffset = h * d, kvHeadOffset = g.kvHead(h) * d;
  const int64_t keyStop = g.visible(b, q0 + rows - 1);
  float *dqBlock = x.dq + (b * g.tq + q0) * x.lddq + headOffset;
  if (keyStop == 0) {
    zeroRows(dqBlock, rows, x.lddq, d);
    return 0;
  }
  bool anyWholeRow = false;
  for (int64_t i = 0; i < rows; ++i) {
    w.rowLse[i] = x.lse[(b * g.heads + h) * g.tq + q0 + i];
    const bool counts = masksCount(g, b, h, q0 + i, w.rowLse[i]);
    w.rowCounts[i] = counts ? 1.0f : 0.0f;
    anyWholeRow = anyWholeRow || counts;
  }
  const int64_t ldd = w.ld.dim;
  copyRows(rows, d, x.q + (b * g.tq + q0) * x.ldq + headOffset, x.ldq, w.query,
           ldd);
  // dO into a dense block. D = rowsum(dO * O) = rowsum(P * dP) (O = P V,
  // dP = dO V^T): when one key block holds every key the block sees (and
  // no masked key has a share of P), D comes from the P and dP tiles and O
  // is never read; otherwise from O on the way.
  const bool wholeRows = keyStop <= bk && !anyWholeRow;
  // Per row: one key block holds its keys and its masked keys have no
  // share, so it is normalized and takes D from its tiles (below). A row
  // whose every key is masked in the same block turned this off for the
  // block's other rows, whose saved lse then put the rounding of large
  // scores into dQ and dK (1.9e-3 where the exact gradient was 0).
  const bool oneKeyBlock = keyStop <= bk;
  const float *doBlock = x.dO + (b * g.tq + q0) * x.lddo + headOffset;
  const float *oBlock = x.o + (b * g.tq + q0) * x.ldo + headOffset;
  // Rows longer than a key block with a large lse: their sums first.
  const bool scaleRows =
      !oneKeyBlock && longRowSums(g, x, w, b, h, q0, rows, keyStop);
  if (wholeRows) {
    copyRows(rows, d, doBlock, x.lddo, w.gradO, ldd);
  } else {
    constexpr int64_t kAhead = 4;
    for (int64_t i = 0; i < rows; ++i) {
      if (i + kAhead < rows)
        for (int64_t j = 0; j < d; j += 16) {
          __builtin_prefetch(doBlock + (i + kAhead) * x.lddo + j);
          __builtin_prefetch(oBlock + (i + kAhead) * x.ldo + j);
        }
      w.rowD[i] = copyAndDot(d, doBlock + i * x.lddo, oBlock + i * x.ldo,
                             w.gradO + i * ldd);
    }
  }

  for (int64_t k0 = 0; k0 < keyStop; k0 += bk) {
    const int64_t cols = std::min(bk, keyStop - k0);
    // S = scale * Q K^T and dP = dO V^T, both [rows x cols].
    x.product(rows, cols, d, x.scale, w.query, ldd, ALayout::RowMajor,
              w.keysT + k0, w.ld.keys, w.probs, ldt, false);
    x.product(rows, cols, d, 1.0f, w.gradO, ldd, ALayout::RowMajor,
              w.valuesT + k0, w.ld.keys, w.dscores, ldt, false);
    for (int64_t i = 0; i < rows; ++i) {
      float *p = w.probs + i * ldt;
      float *ds = w.dscores + i * ldt;
      // P = exp(S - lse), 0 where the mask drops a key; with dropout, the
      // dropped P and the kept dP.
      const int64_t valid =
          rowProbabilities(g, b, h, q0 + i, k0, cols, w.rowLse[i], p);
      if (scaleRows && w.rowScale[i] != 1.0f) {
        const float rowScale = w.rowScale[i];
#pragma omp simd
        for (int64_t j = 0; j < valid; ++j)
          p[j] *= rowScale;
      }
      const bool normalize = oneKeyBlock && w.rowCounts[i] == 0.0f;
      if (normalize && valid > 0) {
        // The saved lse is rounded at the size of the scores: a large
        // constant in a row of S (an offset common to the keys, which the
        // softmax cancels) put a common factor of up to 1 + eps |S| on
        // exp(S - lse), so P summed to 1 +- 2e-5, sum(dS) = D (1 - sum P)
        // was not 0, and that constant's direction reached dQ and dK (Wq's
        // gradient 7e-3 off at an offset of 20, against 1e-4 unfused). A
        // row the block holds whole is normalized, as the unfused softmax's
        // rows are (a common factor is all the rounding of lse can put).
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < valid; ++j)
          sum += p[j];
        if (sum > 0.0f) {
          const float inverse = 1.0f / sum;
#pragma omp simd
          for (int64_t j = 0; j < valid; ++j)
            p[j] *= inverse;
        }
      }
      if (dropout.enabled) {
        float *droppedRow = w.dropped + i * ldt;
        dropout.scales(g, b, h, q0 + i, k0, valid, w.keep);
#pragma omp simd
        for (int64_t j = 0; j < valid; ++j) {
          droppedRow[j] = p[j] * w.keep[j];
          ds[j] *= w.keep[j];
        }
        std::fill(droppedRow + valid, droppedRow + cols, 0.0f);
      }
      float rowD = w.rowD[i];
      if (normalize) {
        // rowsum(P_dropped * dP) = rowsum(P * dP_kept).
        rowD = 0.0f;
#pragma omp simd reduction(+ : rowD)
        for (int64_t j = 0; j < valid; ++j)
          rowD += p[j] * ds[j];
      }
#pragma omp simd
      for (int64_t j = 0; j < valid; ++j)
        ds[j] = p[j] * (ds[j] - rowD);
      std::fill(ds + valid, ds + cols, 0.0f);
    }
    const float *dropped = dropout.enabled ? w.dropped : w.probs;
    // dV += P^T dO and dK += scale dS^T Q: P and dS are column-major as A^T.
    const int64_t written = keysWritten - k0;
    keyRowsGemm(x.product, cols, written, d, rows, 1.0f, dropped, ldt, w.gradO,
                ldd, x.dv + (b * g.tk + k0) * x.lddv + kvHeadOffset, x.lddv);
    keyRowsGemm(x.product, cols, written, d, rows, x.scale, w.dscores, ldt,
                w.query, ldd, x.dk + (b * g.tk + k0) * x.lddk + kvHeadOffset,
                x.lddk);
    // dQ += scale dS K.
    x.product(rows, d, cols, x.scale, w.dscores, ldt, ALayout::RowMajor,
              w.keys + k0 * ldd, ldd, dqBlock, x.lddq, k0 > 0);
  }
  return keyStop;
}

/// The masked keys' share of dV for the rows where it is not negligible:
/// dV[j] += P[i, j] * dO[i] (masked scores do not depend on Q or K, so dQ
/// and dK get nothing from them). P of a masked key is recomputed from the
/// whole row rather than from the saved lse, which a large fill such as
/// -1e9 leaves with no precision below about 100.
void backwardMaskedKeys(const Geometry &g, const BackwardArgs &x,
                        const Dropout &dropout, BackwardBuffers &w, int64_t b,
                        int64_t h) {
  const int64_t d = g.d;
  float *scores = w.wholeRow, *keep = w.wholeRow + w.ld.keys;
  float *values = x.dv + b * g.tk * x.lddv + g.kvHead(h) * d;
  for (int64_t i = 0; i < g.tq; ++i) {
    if (!masksCount(g, b, h, i, x.lse[(b * g.heads + h) * g.tq + i]))
      continue;
    const float top =
        wholeRowScores(g, x.q, x.ldq, x.k, x.ldk, x.scale, b, h, i, scores);
    const float p = expApprox(g.fill - top) / expShiftedSum(scores, top, g.tk,
                                                             scores);
    if (dropout.enabled)
      dropout.scales(g, b, h, i, 0, g.tk, keep);
    const float *gradO = x.dO + (b * g.tq + i) * x.lddo + h * d;
    for (int64_t j = 0; j < g.tk; ++j) {
      if (g.sees(b, h, i, j))
        continue;
      const float share = p * (dropout.enabled ? keep[j] : 1.0f);
      float *dv = values + j * x.lddv;
#pragma omp simd
      for (int64_t c = 0; c < d; ++c)
        dv[c] += share * gradO[c];
    }
  }
}

void attentionBackward(Context &ctx, const Geometry &g, const BackwardArgs &x,
                       const Dropout &dropout) {
  const size_t floats = reserveWorkspaces(ctx, BackwardBuffers::floats(g));
  // One task per (batch, key/value head): it owns that head's dK and dV and
  // runs every query head that reads it.
  const int64_t tasks = g.batch * g.kvHeads;
#pragma omp parallel for num_threads(ctx.numThreads()) schedule(dynamic, 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t kv = task % g.kvHeads;
    const int64_t b = task / g.kvHeads;
    const int64_t kvHeadOffset = kv * g.d;
    BackwardBuffers w(
        ctx.threadWorkspace(omp_get_thread_num()).as<float>(floats), g);
    const int64_t keyEnd = g.keyEnd[b];
    // K is gathered densely once (dQ = dS K reads it) and K^T is transposed
    // from that copy, so the strided rows of K are read only once.
    copyRows(keyEnd, g.d, x.k + b * g.tk * x.ldk + kvHeadOffset, x.ldk, w.keys,
             w.ld.dim);
    transposeTile(keyEnd, g.d, w.keys, w.ld.dim, w.keysT, w.ld.keys);
    transposeTile(keyEnd, g.d, x.v + b * g.tk * x.ldv + kvHeadOffset, x.ldv,
                  w.valuesT, w.ld.keys);
    int64_t keysWritten = 0;
    for (int64_t h = kv * g.group; h < (kv + 1) * g.group; ++h)
      for (int64_t q0 = 0; q0 < g.tq; q0 += g.blockQ)
        keysWritten = std::max(keysWritten,
                               backwardQueryBlock(g, x, dropout, w, b, h, q0,
                                                  std::min(g.blockQ, g.tq - q0),
                                                  keysWritten));
    // Keys no query saw get zero gradients.
    zeroRows(x.dk + (b * g.tk + keysWritten) * x.lddk + kvHeadOffset,
             g.tk - keysWritten, x.lddk, g.d);
    zeroRows(x.dv + (b * g.tk + keysWritten) * x.lddv + kvHeadOffset,
             g.tk - keysWritten, x.lddv, g.d);
    if (g.exactFill())
      for (int64_t h = kv * g.group; h < (kv + 1) * g.group; ++h)
        backwardMaskedKeys(g, x, dropout, w, b, h);
  }
}

/// txrt_attention_fwd and txrt_attention_fwd_bf16 (`name`), which differ in
/// their block product only.
txrt_status attentionForwardCall(
    const char *name, BlockProduct product, txrt_context *ctx, int64_t site,
    int64_t batch, int64_t heads, int64_t kv_heads, int64_t tq, int64_t tk,
    int64_t head_dim, const float *q, int64_t ldq, const float *k, int64_t ldk,
    const float *v, int64_t ldv, float *o, int64_t ldo, float *lse,
    const uint8_t *mask, int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return runKernel(
      ctx, site, name,
      [&] {
        return shapes("batch", batch, "heads", heads, "kv_heads", kv_heads,
                      "tq", tq, "tk", tk, "head_dim", head_dim, "ldq", ldq,
                      "ldk", ldk, "ldv", ldv, "ldo", ldo, "causal", causal);
      },
      [&](Context &c) {
        c.noteFlops(4.0 * double(batch) * double(heads) * double(tq) * double(tk) * double(head_dim) * (causal ? 0.5 : 1.0));
        MaskArgs maskArgs{mask,           mask_stride_batch, mask_stride_head,
                          mask_stride_query, mask_stride_key, fill};
        validate(batch, heads, kv_heads, tq, tk, head_dim, ldq, ldk, ldv, ldo,
                 maskArgs, dropout_p);
        if (batch == 0 || heads == 0 || tq == 0 || head_dim == 0)
          return;
        require(q && k && v && o, "q, k, v and o must not be NULL");
        Geometry g = makeGeometry(c, batch, heads, kv_heads, tq, tk, head_dim,
                                  maskArgs, causal);
        ForwardArgs args{q, k, v, ldq, ldk, ldv, o, lse, ldo, scale, product};
        attentionForward(c, g, args,
                         Dropout(dropout_p, seed, step, site,
                                 c.dropoutOffset(probsElements(g))));
      });
}

/// txrt_attention_bwd and txrt_attention_bwd_bf16 (`name`).
txrt_status attentionBackwardCall(
    const char *name, BlockProduct product, txrt_context *ctx, int64_t site,
    int64_t fwd_site, int64_t batch, int64_t heads, int64_t kv_heads,
    int64_t tq, int64_t tk, int64_t head_dim, const float *q, int64_t ldq,
    const float *k, int64_t ldk, const float *v, int64_t ldv, const float *o,
    int64_t ldo, const float *lse, const float *d_o, int64_t lddo, float *dq,
    int64_t lddq, float *dk, int64_t lddk, float *dv, int64_t lddv,
    const uint8_t *mask, int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return runKernel(
      ctx, site, name,
      [&] {
        return shapes("batch", batch, "heads", heads, "kv_heads", kv_heads,
                      "tq", tq, "tk", tk, "head_dim", head_dim, "ldq", ldq,
                      "ldk", ldk, "ldv", ldv, "ldo", ldo, "causal", causal);
      },
      [&](Context &c) {
        c.noteFlops(10.0 * double(batch) * double(heads) * double(tq) * double(tk) * double(head_dim) * (causal ? 0.5 : 1.0));
        MaskArgs maskArgs{mask,           mask_stride_batch, mask_stride_head,
                          mask_stride_query, mask_stride_key, fill};
        validate(batch, heads, kv_heads, tq, tk, head_dim, ldq, ldk, ldv, ldo,
                 maskArgs, dropout_p);
        require(lddo >= heads * head_dim && lddq >= heads * head_dim &&
                    lddk >= kv_heads * head_dim && lddv >= kv_heads * head_dim,
                "gradient leading dimensions must be >= heads * head_dim "
                "(lddo, lddq) and kv_heads * head_dim (lddk, lddv)");
        if (batch == 0 || heads == 0 || head_dim == 0)
          return;
        require(dk && dv, "dk and dv must not be NULL");
        if (tq == 0) {
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t h = 0; h < kv_heads; ++h) {
              zeroRows(dk + b * tk * lddk + h * head_dim, tk, lddk, head_dim);
              zeroRows(dv + b * tk * lddv + h * head_dim, tk, lddv, head_dim);
            }
          return;
        }
        require(q && k && v && o && lse && d_o && dq,
                "q, k, v, o, lse, d_o and dq must not be NULL");
        Geometry g = makeGeometry(c, batch, heads, kv_heads, tq, tk, head_dim,
                                  maskArgs, causal);
        BackwardArgs args{q,    k,    v,    o,     lse,    d_o, ldq,
                          ldk,  ldv,  ldo,  lddo,  dq,     dk,  dv,
                          lddq, lddk, lddv, scale, product};
        attentionBackward(c, g, args,
                          Dropout(dropout_p, seed, step, fwd_site,
                                  c.dropoutOffset(probsElements(g))));
      });
}

} // namespace

extern "C" {

txrt_status txrt_attention_fwd(
    txrt_context *ctx, int64_t site, int64_t batch, int64_t heads,
    int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim, const float *q,
    int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv,
    float *o, int64_t ldo, float *lse, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return attentionForwardCall(
      "txrt_attention_fwd", tileGemm, ctx, site, batch, heads, kv_heads, tq, tk,
      head_dim, q, ldq, k, ldk, v, ldv, o, ldo, lse, mask, mask_stride_batch,
      mask_stride_head, mask_stride_query, mask_stride_key, causal, scale, fill,
      dropout_p, seed, step);
}

txrt_status txrt_attention_fwd_bf16(
    txrt_context *ctx, int64_t site, int64_t batch, int64_t heads,
    int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim, const float *q,
    int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv,
    float *o, int64_t ldo, float *lse, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return attentionForwardCall(
      "txrt_attention_fwd_bf16", tileGemmBf16, ctx, site, batch, heads,
      kv_heads, tq, tk, head_dim, q, ldq, k, ldk, v, ldv, o, ldo, lse, mask,
      mask_stride_batch, mask_stride_head, mask_stride_query, mask_stride_key,
      causal, scale, fill, dropout_p, seed, step);
}

txrt_status txrt_attention_bwd(
    txrt_context *ctx, int64_t site, int64_t fwd_site, int64_t batch,
    int64_t heads, int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim,
    const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
    int64_t ldv, const float *o, int64_t ldo, const float *lse,
    const float *d_o, int64_t lddo, float *dq, int64_t lddq, float *dk,
    int64_t lddk, float *dv, int64_t lddv, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return attentionBackwardCall(
      "txrt_attention_bwd", tileGemm, ctx, site, fwd_site, batch, heads,
      kv_heads, tq, tk, head_dim, q, ldq, k, ldk, v, ldv, o, ldo, lse, d_o,
      lddo, dq, lddq, dk, lddk, dv, lddv, mask, mask_stride_batch,
      mask_stride_head, mask_stride_query, mask_stride_key, causal, scale, fill,
      dropout_p, seed, step);
}

txrt_status txrt_attention_bwd_bf16(
    txrt_context *ctx, int64_t site, int64_t fwd_site, int64_t batch,
    int64_t heads, int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim,
    const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
    int64_t ldv, const float *o, int64_t ldo, const float *lse,
    const float *d_o, int64_t lddo, float *dq, int64_t lddq, float *dk,
    int64_t lddk, float *dv, int64_t lddv, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step) {
  return attentionBackwardCall(
      "txrt_attention_bwd_bf16", tileGemmBf16, ctx, site, fwd_site, batch,
      heads, kv_heads, tq, tk, head_dim, q, ldq, k, ldk, v, ldv, o, ldo, lse,
      d_o, lddo, dq, lddq, dk, lddk, dv, lddv, mask, mask_stride_batch,
      mask_stride_head, mask_stride_query, mask_stride_key, causal, scale, fill,
      dropout_p, seed, step);
}

} // extern "C"
