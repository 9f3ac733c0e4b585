//===- AttentionKernels.cuh - attention's device code --------*- CUDA -*-===//
//
// The device code of txrt_cuda_attention_{fwd,bwd} (Attention.cu launches
// it): the function's description (Attention), the per-row reference
// kernels and the tiled kernels. It includes no CUDA header, so the same
// code also compiles for the host under test/unit/cuda/emulated/
// CudaEmulation.h, which runs a kernel's threads as host threads: the
// kernels are checked against the CPU kernel in every build, GPU or not.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ATTENTIONKERNELS_CUH
#define TXRT_CUDA_KERNELS_ATTENTIONKERNELS_CUH

#include "BlockReduce.cuh"
#include "KernelLaunch.cuh"
#include "PhiloxDevice.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
/// A kernel's dynamic shared memory: `name` points at it.
#define TXRT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

namespace txrt::cuda::attention {

constexpr int kThreads = 128;
constexpr int64_t kMaxKeys = 8192;

/// A saved lse of at least this size is rounded by more than about 1e-6
/// (half an ulp of 16 is 9.5e-7): P = exp(S - lse), recomputed from it,
/// then carries that rounding as a common factor on its row (rowScale).
constexpr float kRoundedLse = 16.0f;
/// Where fill - lse >= -kMaskedCountMargin, the masked keys of a row with a
/// finite fill count in its softmax (maskedP).
constexpr float kMaskedCountMargin = 100.0f;

struct Attention {
  int64_t heads, kvHeads, tq, tk, headDim;
  const uint8_t *mask;
  int64_t maskBatch, maskHead, maskQuery, maskKey;
  bool causal;
  float scale, fill;
  bool dropout;
  PhiloxStream key;
  /// Inside a captured step (CUDA graphs): the key is derived on the device
  /// from the training state `state` points at (site: the call's), so each
  /// replay draws its step's masks; nullptr: `key` as the host derived it.
  const DeviceTrainState *state;
  int64_t site;
  uint32_t threshold;
  float keepScale;
  /// Where P starts in the whole batch's dropout stream
  /// (txrt_cuda_context_set_batch_rows), as the CPU kernel counts it.
  int64_t offset;
  /// The backward's exact probability of a masked key, per row ((b * heads
  /// + h) * tq + i), where a finite fill makes masked keys count
  /// (attentionBackwardRows; a negative value or nullptr: exp(fill -
  /// lse) is exact enough). A row whose every key is masked gives each
  /// probability 1 / tk, but its lse = fill + log(tk) is not a float when
  /// the fill is -1e9 (lse rounds to the fill, and exp(fill - lse) to 1).
  const float *maskedP;
  /// D = dO . O of each row (attentionBackwardRows), read by the
  /// tensor-core backward kernels; nullptr for the others, which compute it.
  const float *rowD;
  /// The backward's factor on each row's recomputed P of its visible keys
  /// (attentionBackwardRows, attentionBackwardRowScalesMma): 1 /
  /// rowsum(exp(S - lse)) where |lse| >= kRoundedLse and the row's masked
  /// keys do not count, else 1; nullptr: 1 everywhere. It removes the saved
  /// lse's rounding from dV = P^T dO, whose sum over the keys is then
  /// sum_i dO_i (a key offset of 1e5 put it 1e-3 of sum |dO| off).
  const float *rowScale;

  /// Every kernel's first statement: the key from the device state, when
  /// there is one (the kernel's own copy of its argument).
  __device__ void resolveKey() {
    if (dropout && state)
      key = PhiloxSource{key, state, site}.resolve();
  }
  __device__ bool visible(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (causal && j > i + (tk - tq))
      return false;
    return !mask ||
           mask[b * maskBatch + h * maskHead + i * maskQuery + j * maskKey] !=
               0;
  }
  /// P[row, j] of a visible key whose unscaled score (q . k) is `product`,
  /// from the row's saved log-sum-exp, before rowScale. Every backward
  /// kernel and the row sums behind rowScale recompute it here, the product
  /// unfused with the subtraction, so the sums are of the same bits.
  __device__ float visibleProbability(float product, float lse) const {
    return expf(__fmul_rn(scale, product) - lse);
  }
  /// rowScale of row (b * heads + h) * tq + i.
  __device__ float probabilityScale(int64_t row) const {
    return rowScale ? rowScale[row] : 1.0f;
  }
  /// P[row, j] of a masked key j (score `fill`) of a row with log-sum-exp
  /// `lse`, as the backward recomputes it.
  __device__ float maskedProbability(int64_t row, float lse) const {
    if (maskedP && maskedP[row] >= 0.0f)
      return maskedP[row];
    return expf(fill - lse);
  }
  /// The dropout factor of P[b, h, i, j]: 1, or keepScale / 0.
  __device__ float dropFactor(int64_t b, int64_t h, int64_t i,
                              int64_t j) const {
    if (!dropout)
      return 1.0f;
    uint64_t element = uint64_t(offset + ((b * heads + h) * tq + i) * tk + j);
    return keepsElement(key, element, threshold) ? keepScale : 0.0f;
  }
};

__device__ inline float dot(const float *a, const float *b, int64_t n) {
  float sum = 0.0f;
  for (int64_t d = 0; d < n; ++d)
    sum += a[d] * b[d];
  return sum;
}

/// dot(rows + r * rowStride, b, n) for r < kRows at once: the kRows sums are
/// independent chains (a chain of dependent FMAs is latency-bound) and b[d]
/// is read once for all of them; each sum adds in dot's order, so the
/// results are dot's bit for bit.
template <int kRows>
__device__ inline void dots(const float *rows, int64_t rowStride,
                            const float *b, int64_t n, float (&sums)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    sums[r] = 0.0f;
  for (int64_t d = 0; d < n; ++d) {
    const float bd = b[d];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      sums[r] += rows[r * rowStride + d] * bd;
  }
}

__global__ void attentionForward(Attention a, const float *q, int64_t ldq,
                                 const float *k, int64_t ldk, const float *v,
                                 int64_t ldv, float *o, int64_t ldo,
                                 float *lse) {
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  float *qRow = shared, *p = shared + a.headDim;
  const int64_t row = blockIdx.x; // (b * heads + h) * tq + i
  const int64_t i = row % a.tq, h = row / a.tq % a.heads,
                b = row / a.tq / a.heads;
  const int64_t g = h / (a.heads / a.kvHeads);
  const int64_t hd = a.headDim;
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x)
    qRow[d] = q[(b * a.tq + i) * ldq + h * hd + d];
  __syncthreads();
  float maximum = -INFINITY;
  for (int64_t j = threadIdx.x; j < a.tk; j += blockDim.x) {
    float s = a.visible(b, h, i, j)
                  ? a.scale * dot(qRow, k + (b * a.tk + j) * ldk + g * hd, hd)
                  : a.fill;
    p[j] = s;
    maximum = fmaxf(maximum, s);
  }
  maximum = blockMax(maximum);
  float *out = o + (b * a.tq + i) * ldo + h * hd;
  if (maximum == -INFINITY) { // no visible key, fill -inf
    for (int64_t d = threadIdx.x; d < hd; d += blockDim.x)
      out[d] = 0.0f;
    if (lse && threadIdx.x == 0)
      lse[row] = -INFINITY;
    return;
  }
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < a.tk; j += blockDim.x)
    sum += expf(p[j] - maximum);
  sum = blockSum(sum);
  if (lse && threadIdx.x == 0)
    lse[row] = maximum + logf(sum);
  // Divided by the sum, not shifted by lse: with a fill of -1e9 and every
  // key masked, lse = fill + log(tk) rounds to the fill.
  const float inverse = 1.0f / sum;
  for (int64_t j = threadIdx.x; j < a.tk; j += blockDim.x)
    p[j] = expf(p[j] - maximum) * inverse * a.dropFactor(b, h, i, j);
  __syncthreads();
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < a.tk; ++j)
      acc += p[j] * v[(b * a.tk + j) * ldv + g * hd + d];
    out[d] = acc;
  }
}

__global__ void attentionBackward(Attention a, const float *q, int64_t ldq,
                                  const float *k, int64_t ldk, const float *v,
                                  int64_t ldv, const float *o, int64_t ldo,
                                  const float *lse, const float *dO,
                                  int64_t lddo, float *dq, int64_t lddq,
                                  float *dk, int64_t lddk, float *dv,
                                  int64_t lddv) {
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  const int64_t hd = a.headDim;
  float *qRow = shared, *doRow = shared + hd, *pDrop = shared + 2 * hd,
        *dS = shared + 2 * hd + a.tk;
  const int64_t row = blockIdx.x;
  const int64_t i = row % a.tq, h = row / a.tq % a.heads,
                b = row / a.tq / a.heads;
  const int64_t g = h / (a.heads / a.kvHeads);
  float partial = 0.0f;
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x) {
    qRow[d] = q[(b * a.tq + i) * ldq + h * hd + d];
    doRow[d] = dO[(b * a.tq + i) * lddo + h * hd + d];
    partial += doRow[d] * o[(b * a.tq + i) * ldo + h * hd + d];
  }
  const float rowD = blockSum(partial); // sum_j P'_ij dP'_ij = dO_i . O_i
  const float rowLse = lse[row];
  float *dqRow = dq + (b * a.tq + i) * lddq + h * hd;
  if (rowLse == -INFINITY) { // no key: no gradient
    for (int64_t d = threadIdx.x; d < hd; d += blockDim.x)
      dqRow[d] = 0.0f;
    return;
  }
  const float rowScale = a.probabilityScale(row);
  for (int64_t j = threadIdx.x; j < a.tk; j += blockDim.x) {
    const bool seen = a.visible(b, h, i, j);
    const float *kRow = k + (b * a.tk + j) * ldk + g * hd;
    const float prob =
        seen ? a.visibleProbability(dot(qRow, kRow, hd), rowLse) * rowScale
             : a.maskedProbability(row, rowLse);
    const float factor = a.dropFactor(b, h, i, j);
    const float dP = dot(doRow, v + (b * a.tk + j) * ldv + g * hd, hd) * factor;
    pDrop[j] = prob * factor;
    // A masked key's score is the constant fill: no gradient to q or k.
    dS[j] = seen ? prob * (dP - rowD) : 0.0f;
  }
  __syncthreads();
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < a.tk; ++j)
      acc += dS[j] * k[(b * a.tk + j) * ldk + g * hd + d];
    dqRow[d] = a.scale * acc;
  }
  for (int64_t j = 0; j < a.tk; ++j) {
    const float ds = dS[j] * a.scale, pj = pDrop[j];
    float *dkRow = dk + (b * a.tk + j) * lddk + g * hd;
    float *dvRow = dv + (b * a.tk + j) * lddv + g * hd;
    for (int64_t d = threadIdx.x; d < hd; d += blockDim.x) {
      if (ds != 0.0f)
        atomicAdd(&dkRow[d], ds * qRow[d]);
      if (pj != 0.0f)
        atomicAdd(&dvRow[d], pj * doRow[d]);
    }
  }
}

/// Whether a row with saved log-sum-exp `lse` whose masked keys do not
/// count is normalized by its sum (rowScale): a finite |lse| >= kRoundedLse.
__device__ inline bool roundedLse(float lse) {
  return fabsf(lse) >= kRoundedLse && fabsf(lse) < INFINITY;
}

/// Whether a row's masked keys count in its softmax, as the CPU kernel's
/// masksCount: a finite fill within kMaskedCountMargin of the row's lse and
/// a masked key. Such rows keep rowScale 1 (their masked keys' share is
/// exact, maskedP).
__device__ inline bool maskedKeysCount(const Attention &a, float lse,
                                       bool anyMasked) {
  return anyMasked && a.fill != -INFINITY &&
         a.fill - lse >= -kMaskedCountMargin;
}

/// The backward's per-row values, a warp a row ((b * heads + h) * tq + i,
/// `rows` rows), before its main kernels:
/// - rowD (when not nullptr): D = dO . O, which the tensor-core kernels
///   would otherwise recompute in every block that reads the row;
/// - rowScale (when not nullptr: the tiled and per-row kernels): 1 /
///   rowsum(exp(S - lse)) over the keys the row sees, where roundedLse and
///   its masked keys do not count; 1 elsewhere, at the cost of reading lse.
///   S is dot() of q and k as those kernels compute it (their bits: the
///   sum is of the P they form dV from);
/// - maskedP (when not nullptr: a finite fill): where the fill's probability
///   is not negligible against the row's lse (fill - lse >=
///   -kMaskedCountMargin, e.g. every key masked), the row's scores, maximum
///   m and sum l over all tk keys are recomputed and exp(fill - m) / l
///   stored; elsewhere -1 (exp(fill - lse) is exact enough there).
__global__ void
attentionBackwardRows(Attention a, const float *q, int64_t ldq, const float *k,
                      int64_t ldk, const float *o, int64_t ldo, const float *dO,
                      int64_t lddo, const float *lse, float *rowD,
                      float *maskedP, float *rowScale, int64_t rows) {
  const int64_t warps = int64_t(blockDim.x / 32) * gridDim.x;
  const int lane = int(threadIdx.x % 32);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t i = row % a.tq, h = row / a.tq % a.heads,
                  b = row / a.tq / a.heads;
    const int64_t g = h / (a.heads / a.kvHeads), hd = a.headDim;
    if (rowD) {
      const float *oRow = o + (b * a.tq + i) * ldo + h * hd;
      const float *doRow = dO + (b * a.tq + i) * lddo + h * hd;
      float partial = 0.0f;
      for (int64_t d = lane; d < hd; d += 32)
        partial += doRow[d] * oRow[d];
      partial = warpSum(partial);
      if (lane == 0)
        rowD[row] = partial;
    }
    const float rowLse = lse[row];
    const float *qRow = q + (b * a.tq + i) * ldq + h * hd;
    if (rowScale) {
      float factor = 1.0f;
      if (roundedLse(rowLse)) {
        float sum = 0.0f, masked = 0.0f;
        for (int64_t j = lane; j < a.tk; j += 32) {
          if (a.visible(b, h, i, j))
            sum += a.visibleProbability(
                dot(qRow, k + (b * a.tk + j) * ldk + g * hd, hd), rowLse);
          else
            masked = 1.0f;
        }
        sum = warpSum(sum);
        masked = warpMax(masked);
        if (!maskedKeysCount(a, rowLse, masked > 0.0f) && sum > 0.0f)
          factor = 1.0f / sum;
      }
      if (lane == 0)
        rowScale[row] = factor;
    }
    if (!maskedP)
      continue;
    if (!(a.fill - rowLse >= -kMaskedCountMargin)) { // also lse = -inf
      if (lane == 0)
        maskedP[row] = -1.0f;
      continue;
    }
    float maximum = -INFINITY;
    for (int64_t j = lane; j < a.tk; j += 32) {
      const float s =
          a.visible(b, h, i, j)
              ? a.scale * dot(qRow, k + (b * a.tk + j) * ldk + g * hd, hd)
              : a.fill;
      maximum = fmaxf(maximum, s);
    }
    maximum = warpMax(maximum);
    float sum = 0.0f;
    for (int64_t j = lane; j < a.tk; j += 32) {
      const float s =
          a.visible(b, h, i, j)
              ? a.scale * dot(qRow, k + (b * a.tk + j) * ldk + g * hd, hd)
              : a.fill;
      sum += expf(s - maximum);
    }
    sum = warpSum(sum);
    if (lane == 0)
      maskedP[row] = expf(a.fill - maximum) / sum;
  }
}

//===----------------------------------------------------------------------===//
// Tiled kernels (flash-attention style): the default where head_dim <= 128
// and their tiles fit the device's shared memory; the per-row kernels above
// stay the reference (TXRT_CUDA_ATTENTION=rows selects them).
//
// Forward and dq: a block holds kRowTile query rows of one (batch, head),
// kRowsPerWarp per warp, and walks the keys in tiles of kKeyTile through
// shared memory. Lane j scores key j of the tile against a row (the row's
// q broadcast from shared memory, the keys' rows at an odd stride so the 32
// lanes hit 32 banks); the row's running maximum and sum are warp
// reductions; then lane d accumulates dimensions d, d + 32, ... of the
// output in registers from the tile's probabilities. dk and dv: a block of
// one warp owns kKeyTile keys of one (batch, kv head), lane j key j, and
// walks every query row of the heads that share the kv head, accumulating
// its key's dk and dv rows in shared memory: each element has one writer,
// so there are no atomics and the sums are deterministic.
//===----------------------------------------------------------------------===//

constexpr int kKeyTile = 32;
constexpr int kRowsPerWarp = 4;
constexpr int kTiledWarps = 4;
constexpr int kRowTile = kRowsPerWarp * kTiledWarps;
constexpr int kBackwardRowTile = 16;
constexpr int64_t kMaxTiledHeadDim = 128;

/// The stride of a tile whose rows one lane each reads: odd, so lane j's
/// element d falls in bank (j * stride + d) % 32, a different bank for
/// every lane.
__host__ __device__ inline int64_t laneStride(int64_t headDim) {
  return headDim | 1;
}

/// One past the last key a causal mask lets any of rows [.., iEnd) see (tk
/// without one): every later key is masked for all of them.
__device__ inline int64_t causalKeyLimit(const Attention &a, int64_t iEnd) {
  if (!a.causal)
    return a.tk;
  const int64_t limit = iEnd + (a.tk - a.tq);
  return limit < 0 ? 0 : (limit > a.tk ? a.tk : limit);
}

/// The keys the tiled CUDA-core kernels walk for rows [.., iEnd): under a
/// causal mask with a -inf fill the later keys drop out of the softmax and
/// carry no gradient, so they are skipped; with a finite fill they count
/// (the tensor-core kernels decide that row by row instead).
__device__ inline int64_t keyLimit(const Attention &a, int64_t iEnd) {
  return a.fill == -INFINITY ? causalKeyLimit(a, iEnd) : a.tk;
}

/// Copies rows [first, first + count) of a head's slice (`width` floats at
/// column `column` of rows `ld` apart, rows past `rows` as zeros) into a
/// shared tile of `stride` floats a row, all threads of the block taking
/// part.
__device__ inline void loadTile(float *tile, int64_t stride, const float *src,
                                int64_t ld, int64_t column, int64_t first,
                                int64_t count, int64_t rows, int64_t width) {
  for (int64_t idx = threadIdx.x; idx < count * width; idx += blockDim.x) {
    const int64_t r = idx / width, d = idx % width;
    tile[r * stride + d] =
        first + r < rows ? src[(first + r) * ld + column + d] : 0.0f;
  }
}

/// The query rows a forward or dq block holds: kRowTile rows from i0 of
/// (batch b, head h), kv head g; this thread's warp and lane.
struct RowTile {
  int64_t bh, b, h, g, i0;
  int warp, lane;
};

/// `rows`: the query rows a block holds (the tensor-core kernels' are
/// more).
__device__ inline RowTile rowTileOfBlock(const Attention &a,
                                         int64_t rows = kRowTile) {
  RowTile t;
  t.bh = blockIdx.x;
  t.b = t.bh / a.heads;
  t.h = t.bh % a.heads;
  t.g = t.h / (a.heads / a.kvHeads);
  t.i0 = int64_t(blockIdx.y) * rows;
  t.warp = int(threadIdx.x / 32);
  t.lane = int(threadIdx.x % 32);
  return t;
}

/// acc[r][c] += sum over jj < keys of tile[r * kKeyTile + jj] *
/// m[jj * stride + d] for the warp's active rows r, where lane holds output
/// dimensions d = lane + 32 c < hd: P V in the forward, dS K for dq. Each
/// element of m is read once for all rows; each row sums in key order.
template <int kDims>
__device__ inline void accumulateTileProduct(float (&acc)[kRowsPerWarp][kDims],
                                             const bool (&active)[kRowsPerWarp],
                                             const float *tile, int64_t keys,
                                             const float *m, int64_t stride,
                                             int64_t hd, int lane) {
  for (int64_t jj = 0; jj < keys; ++jj) {
#pragma unroll
    for (int c = 0; c < kDims; ++c) {
      const int64_t d = lane + 32 * c;
      if (d >= hd)
        continue;
      const float md = m[jj * stride + d];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r)
        if (active[r])
          acc[r][c] += tile[r * kKeyTile + jj] * md;
    }
  }
}

template <int kDims>
__global__ void __launch_bounds__(kTiledWarps * 32)
    attentionForwardTiled(Attention a, const float *q, int64_t ldq,
                          const float *k, int64_t ldk, const float *v,
                          int64_t ldv, float *o, int64_t ldo, float *lse) {
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  const int64_t hd = a.headDim, ks = laneStride(hd);
  float *qTile = shared, *kTile = qTile + kRowTile * hd,
        *vTile = kTile + kKeyTile * ks, *pTile = vTile + kKeyTile * hd;
  const RowTile t = rowTileOfBlock(a);
  const int64_t bh = t.bh, b = t.b, h = t.h, g = t.g, i0 = t.i0;
  const int warp = t.warp, lane = t.lane;
  loadTile(qTile, hd, q + b * a.tq * ldq, ldq, h * hd, i0, kRowTile, a.tq, hd);
  float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kDims];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < kDims; ++c)
      acc[r][c] = 0.0f;
  }
  const int64_t rowEnd = i0 + kRowTile < a.tq ? i0 + kRowTile : a.tq;
  const int64_t keyEnd = keyLimit(a, rowEnd);
  const float *kBase = k + b * a.tk * ldk, *vBase = v + b * a.tk * ldv;
  for (int64_t j0 = 0; j0 < keyEnd; j0 += kKeyTile) {
    __syncthreads(); // the previous tile is read (and the q tile written)
    loadTile(kTile, ks, kBase, ldk, g * hd, j0, kKeyTile, a.tk, hd);
    loadTile(vTile, hd, vBase, ldv, g * hd, j0, kKeyTile, a.tk, hd);
    __syncthreads();
    const int64_t j = j0 + lane;
    const int64_t keys = a.tk - j0 < kKeyTile ? a.tk - j0 : kKeyTile;
    // The warp's rows together: their scores against lane j's key (the
    // key's row read once for all), then each row's online softmax, then
    // P V with each V element read once for all rows. Each row's sums run
    // in the order a row at a time ran them.
    const int row0 = warp * kRowsPerWarp;
    float scores[kRowsPerWarp];
    dots(qTile + row0 * hd, hd, kTile + lane * ks, hd, scores);
    bool active[kRowsPerWarp]; // warp-uniform
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int row = row0 + r;
      const int64_t i = i0 + row;
      active[r] = false;
      if (i >= a.tq) // the same for every lane
        continue;
      float s = -INFINITY;
      if (j < a.tk)
        s = a.visible(b, h, i, j) ? a.scale * scores[r] : a.fill;
      const float mNew = fmaxf(m[r], warpMax(s));
      if (mNew == -INFINITY) // no key yet; the same for every lane
        continue;
      active[r] = true;
      const float correction = m[r] == -INFINITY ? 0.0f : expf(m[r] - mNew);
      const float p = s == -INFINITY ? 0.0f : expf(s - mNew);
      l[r] = l[r] * correction + warpSum(p);
      m[r] = mNew;
      pTile[row * kKeyTile + lane] =
          j < a.tk ? p * a.dropFactor(b, h, i, j) : 0.0f;
#pragma unroll
      for (int c = 0; c < kDims; ++c)
        acc[r][c] *= correction;
    }
    __syncwarp();
    accumulateTileProduct(acc, active, pTile + row0 * kKeyTile, keys, vTile, hd,
                          hd, lane);
    __syncwarp(); // pTile is read before the next tile writes it
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = i0 + warp * kRowsPerWarp + r;
    if (i >= a.tq)
      continue;
    float *out = o + (b * a.tq + i) * ldo + h * hd;
    const bool none = m[r] == -INFINITY; // no visible key, fill -inf
    const float inverse = none ? 0.0f : 1.0f / l[r];
#pragma unroll
    for (int c = 0; c < kDims; ++c) {
      const int64_t d = lane + 32 * c;
      if (d < hd)
        out[d] = none ? 0.0f : acc[r][c] * inverse;
    }
    if (lse && lane == 0)
      lse[bh * a.tq + i] = none ? -INFINITY : m[r] + logf(l[r]);
  }
}

template <int kDims>
__global__ void __launch_bounds__(kTiledWarps * 32)
    attentionBackwardQueryTiled(Attention a, const float *q, int64_t ldq,
                                const float *k, int64_t ldk, const float *v,
                                int64_t ldv, const float *o, int64_t ldo,
                                const float *lse, const float *dO, int64_t lddo,
                                float *dq, int64_t lddq) {
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  const int64_t hd = a.headDim, ks = laneStride(hd);
  float *qTile = shared, *doTile = qTile + kRowTile * hd,
        *kTile = doTile + kRowTile * hd, *vTile = kTile + kKeyTile * ks,
        *dsTile = vTile + kKeyTile * ks;
  const RowTile t = rowTileOfBlock(a);
  const int64_t bh = t.bh, b = t.b, h = t.h, g = t.g, i0 = t.i0;
  const int warp = t.warp, lane = t.lane;
  loadTile(qTile, hd, q + b * a.tq * ldq, ldq, h * hd, i0, kRowTile, a.tq, hd);
  loadTile(doTile, hd, dO + b * a.tq * lddo, lddo, h * hd, i0, kRowTile, a.tq,
           hd);
  __syncthreads();
  // Per row: lse, D = sum_j P'_ij dP'_ij = dO_i . O_i and rowScale.
  float rowLse[kRowsPerWarp], rowD[kRowsPerWarp], rowScale[kRowsPerWarp],
      acc[kRowsPerWarp][kDims];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = warp * kRowsPerWarp + r;
    const int64_t i = i0 + row;
    rowLse[r] = -INFINITY;
    rowD[r] = 0.0f;
    rowScale[r] = 1.0f;
#pragma unroll
    for (int c = 0; c < kDims; ++c)
      acc[r][c] = 0.0f;
    if (i >= a.tq)
      continue;
    const float *oRow = o + (b * a.tq + i) * ldo + h * hd;
    float partial = 0.0f;
    for (int64_t d = lane; d < hd; d += 32)
      partial += doTile[row * hd + d] * oRow[d];
    rowD[r] = warpSum(partial);
    rowLse[r] = lse[bh * a.tq + i];
    rowScale[r] = a.probabilityScale(bh * a.tq + i);
  }
  const int64_t rowEnd = i0 + kRowTile < a.tq ? i0 + kRowTile : a.tq;
  const int64_t keyEnd = keyLimit(a, rowEnd);
  const float *kBase = k + b * a.tk * ldk, *vBase = v + b * a.tk * ldv;
  for (int64_t j0 = 0; j0 < keyEnd; j0 += kKeyTile) {
    __syncthreads();
    loadTile(kTile, ks, kBase, ldk, g * hd, j0, kKeyTile, a.tk, hd);
    loadTile(vTile, ks, vBase, ldv, g * hd, j0, kKeyTile, a.tk, hd);
    __syncthreads();
    const int64_t j = j0 + lane;
    const int64_t keys = a.tk - j0 < kKeyTile ? a.tk - j0 : kKeyTile;
    // The warp's rows together, as in attentionForwardTiled: scores and
    // dP against lane j's key and value rows read once for all, then
    // dq += dS K with each K element read once; each row's sums in the
    // order a row at a time ran them.
    const int row0 = warp * kRowsPerWarp;
    float scores[kRowsPerWarp], dPs[kRowsPerWarp];
    dots(qTile + row0 * hd, hd, kTile + lane * ks, hd, scores);
    dots(doTile + row0 * hd, hd, vTile + lane * ks, hd, dPs);
    bool active[kRowsPerWarp]; // warp-uniform
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int row = row0 + r;
      const int64_t i = i0 + row;
      active[r] = i < a.tq && rowLse[r] != -INFINITY; // else no gradient
      if (!active[r])
        continue;
      float ds = 0.0f;
      if (j < a.tk && a.visible(b, h, i, j)) {
        // A masked key's score is the constant fill: no gradient.
        const float prob =
            a.visibleProbability(scores[r], rowLse[r]) * rowScale[r];
        const float dP = dPs[r] * a.dropFactor(b, h, i, j);
        ds = prob * (dP - rowD[r]);
      }
      dsTile[row * kKeyTile + lane] = ds;
    }
    __syncwarp();
    accumulateTileProduct(acc, active, dsTile + row0 * kKeyTile, keys, kTile,
                          ks, hd, lane);
    __syncwarp(); // dsTile is read before the next tile writes it
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = i0 + warp * kRowsPerWarp + r;
    if (i >= a.tq)
      continue;
    float *dqRow = dq + (b * a.tq + i) * lddq + h * hd;
#pragma unroll
    for (int c = 0; c < kDims; ++c) {
      const int64_t d = lane + 32 * c;
      if (d < hd)
        dqRow[d] = a.scale * acc[r][c];
    }
  }
}

/// Head dimensions up to this keep each key's dk and dv rows in the lane's
/// registers (attentionBackwardKeysTiled<kRegisterDims > 0>): 2 x 64 floats
/// a lane; wider heads keep them in shared memory.
constexpr int64_t kMaxRegisterKeysHeadDim = 64;

/// One warp: kKeyTile keys of one (batch, kv head). Lane j's dk and dv rows
/// accumulate in shared memory (kRegisterDims = 0), or, for head_dim <=
/// kRegisterDims * 32 <= kMaxRegisterKeysHeadDim, in the lane's registers:
/// register FMAs instead of a read-modify-write of shared memory (6 instead
/// of 10 head_dim shared accesses a (row, key) pair) and half the shared
/// memory a block, so more blocks share an SM (the first GPU run measured
/// the shared form at 11.8 ms a call, B=64, T=256 on an H200). Both add in
/// the same order: the same bits.
template <int kRegisterDims>
__global__ void __launch_bounds__(32)
    attentionBackwardKeysTiled(Attention a, const float *q, int64_t ldq,
                               const float *k, int64_t ldk, const float *v,
                               int64_t ldv, const float *o, int64_t ldo,
                               const float *lse, const float *dO, int64_t lddo,
                               float *dk, int64_t lddk, float *dv,
                               int64_t lddv) {
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  constexpr bool kInRegisters = kRegisterDims > 0;
  constexpr int kWidth = kInRegisters ? kRegisterDims * 32 : 1;
  const int64_t hd = a.headDim, ks = laneStride(hd);
  // The dk and dv tiles only where the rows are not in registers.
  const int64_t accumulatorTiles = kInRegisters ? 0 : 2;
  float *kTile = shared, *vTile = kTile + kKeyTile * ks,
        *dkTile = vTile + kKeyTile * ks, *dvTile = dkTile + kKeyTile * ks,
        *qTile = dkTile + accumulatorTiles * kKeyTile * ks,
        *doTile = qTile + kBackwardRowTile * hd,
        *lseTile = doTile + kBackwardRowTile * hd,
        *dTile = lseTile + kBackwardRowTile,
        *scaleTile = dTile + kBackwardRowTile;
  const int64_t bg = blockIdx.x, b = bg / a.kvHeads, g = bg % a.kvHeads;
  const int64_t j0 = int64_t(blockIdx.y) * kKeyTile;
  const int lane = threadIdx.x;
  const int64_t j = j0 + lane;
  loadTile(kTile, ks, k + b * a.tk * ldk, ldk, g * hd, j0, kKeyTile, a.tk, hd);
  loadTile(vTile, ks, v + b * a.tk * ldv, ldv, g * hd, j0, kKeyTile, a.tk, hd);
  float dkAcc[kWidth], dvAcc[kWidth];
#pragma unroll
  for (int d = 0; d < kWidth; ++d) {
    dkAcc[d] = 0.0f;
    dvAcc[d] = 0.0f;
  }
  if (!kInRegisters)
    for (int64_t d = 0; d < hd; ++d) {
      dkTile[lane * ks + d] = 0.0f;
      dvTile[lane * ks + d] = 0.0f;
    }
  // row += factor * src, row lane j's dk or dv (registers or shared).
  auto accumulate = [&](float(&acc)[kWidth], float *tile, float factor,
                        const float *src) {
    if constexpr (kInRegisters) {
#pragma unroll
      for (int d = 0; d < kWidth; ++d)
        if (d < hd)
          acc[d] += factor * src[d];
    } else {
      for (int64_t d = 0; d < hd; ++d)
        tile[lane * ks + d] += factor * src[d];
    }
  };
  // Under a causal mask with a -inf fill, rows before the tile's first key
  // see none of its keys.
  int64_t iBegin = 0;
  if (a.causal && a.fill == -INFINITY && j0 - (a.tk - a.tq) > 0)
    iBegin = j0 - (a.tk - a.tq);
  const int64_t group = a.heads / a.kvHeads;
  for (int64_t hh = 0; hh < group; ++hh) {
    const int64_t h = g * group + hh;
    for (int64_t i0 = iBegin; i0 < a.tq; i0 += kBackwardRowTile) {
      const int64_t rows =
          a.tq - i0 < kBackwardRowTile ? a.tq - i0 : kBackwardRowTile;
      __syncwarp(); // the previous rows are read
      loadTile(qTile, hd, q + b * a.tq * ldq, ldq, h * hd, i0, rows, a.tq, hd);
      loadTile(doTile, hd, dO + b * a.tq * lddo, lddo, h * hd, i0, rows, a.tq,
               hd);
      __syncwarp();
      for (int64_t r = 0; r < rows; ++r) {
        const float *oRow = o + (b * a.tq + i0 + r) * ldo + h * hd;
        float partial = 0.0f;
        for (int64_t d = lane; d < hd; d += 32)
          partial += doTile[r * hd + d] * oRow[d];
        partial = warpSum(partial);
        if (lane == 0) {
          dTile[r] = partial;
          lseTile[r] = lse[(b * a.heads + h) * a.tq + i0 + r];
          scaleTile[r] = a.probabilityScale((b * a.heads + h) * a.tq + i0 + r);
        }
      }
      __syncwarp();
      for (int64_t r = 0; j < a.tk && r < rows; ++r) {
        const float rowLse = lseTile[r];
        if (rowLse == -INFINITY) // a row with no key: no gradient
          continue;
        const int64_t i = i0 + r;
        const bool seen = a.visible(b, h, i, j);
        const float prob =
            seen ? a.visibleProbability(
                       dot(qTile + r * hd, kTile + lane * ks, hd), rowLse) *
                       scaleTile[r]
                 : a.maskedProbability((b * a.heads + h) * a.tq + i, rowLse);
        const float factor = a.dropFactor(b, h, i, j);
        const float dP = dot(doTile + r * hd, vTile + lane * ks, hd) * factor;
        const float pDrop = prob * factor;
        const float ds = seen ? prob * (dP - dTile[r]) * a.scale : 0.0f;
        if (pDrop != 0.0f)
          accumulate(dvAcc, dvTile, pDrop, doTile + r * hd);
        if (ds != 0.0f)
          accumulate(dkAcc, dkTile, ds, qTile + r * hd);
      }
    }
  }
  // Rows in registers go out through the K and V tiles (read for the last
  // time above), so that the stores to dk and dv are a row's adjacent
  // floats across the lanes.
  __syncwarp();
  float *dkRows = kInRegisters ? kTile : dkTile;
  float *dvRows = kInRegisters ? vTile : dvTile;
  if constexpr (kInRegisters) {
#pragma unroll
    for (int d = 0; d < kWidth; ++d)
      if (d < hd) {
        dkRows[lane * ks + d] = dkAcc[d];
        dvRows[lane * ks + d] = dvAcc[d];
      }
    __syncwarp();
  }
  const int64_t keys = a.tk - j0 < kKeyTile ? a.tk - j0 : kKeyTile;
  for (int64_t idx = lane; idx < keys * hd; idx += 32) {
    const int64_t jj = idx / hd, d = idx % hd;
    dk[(b * a.tk + j0 + jj) * lddk + g * hd + d] = dkRows[jj * ks + d];
    dv[(b * a.tk + j0 + jj) * lddv + g * hd + d] = dvRows[jj * ks + d];
  }
}

/// A kernel's launch: grid (x, y), threads a block, dynamic shared bytes.
struct Launch {
  int64_t gridX, gridY;
  unsigned threads;
  size_t sharedBytes;
};

/// The forward and dq kernels: a block per (batch * heads, kRowTile rows).
inline Launch tiledForwardLaunch(int64_t batch, const Attention &a) {
  const int64_t hd = a.headDim;
  return {batch * a.heads, (a.tq + kRowTile - 1) / kRowTile, kTiledWarps * 32,
          size_t(kRowTile * hd + kKeyTile * laneStride(hd) + kKeyTile * hd +
                 kRowTile * kKeyTile) *
              sizeof(float)};
}
inline Launch tiledQueryLaunch(int64_t batch, const Attention &a) {
  const int64_t hd = a.headDim;
  return {batch * a.heads, (a.tq + kRowTile - 1) / kRowTile, kTiledWarps * 32,
          size_t(2 * kRowTile * hd + 2 * kKeyTile * laneStride(hd) +
                 kRowTile * kKeyTile) *
              sizeof(float)};
}
/// dk and dv: a warp per (batch * kv heads, kKeyTile keys); the K and V
/// tiles, and the dk and dv tiles where they are not in registers; the
/// rows' q, dO, lse, D and rowScale.
inline Launch tiledKeysLaunch(int64_t batch, const Attention &a) {
  const int64_t hd = a.headDim;
  const int64_t keyTiles = hd <= kMaxRegisterKeysHeadDim ? 2 : 4;
  return {batch * a.kvHeads, (a.tk + kKeyTile - 1) / kKeyTile, 32,
          size_t(keyTiles * kKeyTile * laneStride(hd) +
                 2 * kBackwardRowTile * hd + 3 * kBackwardRowTile) *
              sizeof(float)};
}
/// attentionBackwardRows: a warp a row, 8 warps a block.
inline KernelLaunch backwardRowsLaunch(int64_t rows) {
  return gridStrideLaunch((rows + 7) / 8 * 32, 256);
}
/// The per-row kernels: a block per query row.
inline Launch rowForwardLaunch(int64_t batch, const Attention &a) {
  return {batch * a.heads * a.tq, 1, kThreads,
          size_t(a.headDim + a.tk) * sizeof(float)};
}
inline Launch rowBackwardLaunch(int64_t batch, const Attention &a) {
  return {batch * a.heads * a.tq, 1, kThreads,
          size_t(2 * a.headDim + 2 * a.tk) * sizeof(float)};
}

/// Calls body(Pick<n>::kernel), n the registers a lane needs for headDim
/// (32 dimensions a lane each).
template <template <int> class Pick, typename Body>
void withDims(int64_t headDim, Body &&body) {
  if (headDim <= 32)
    body(Pick<1>::kernel);
  else if (headDim <= 64)
    body(Pick<2>::kernel);
  else if (headDim <= 96)
    body(Pick<3>::kernel);
  else
    body(Pick<4>::kernel);
}

template <int kDims> struct ForwardTiled {
  static constexpr auto kernel = attentionForwardTiled<kDims>;
};
template <int kDims> struct QueryTiled {
  static constexpr auto kernel = attentionBackwardQueryTiled<kDims>;
};
/// dk and dv: in registers up to kMaxRegisterKeysHeadDim, else in shared
/// memory (tiledKeysLaunch sizes the shared memory to match).
template <int kDims> struct KeysTiled {
  static constexpr auto kernel = attentionBackwardKeysTiled<(
      kDims * 32 <= kMaxRegisterKeysHeadDim ? kDims : 0)>;
};

/// The attention these arguments describe (Attention.cu's describe checks
/// them first).
inline Attention makeAttention(int64_t heads, int64_t kvHeads, int64_t tq,
                               int64_t tk, int64_t headDim, const uint8_t *mask,
                               int64_t msb, int64_t msh, int64_t msq,
                               int64_t msk, int32_t causal, float scale,
                               float fill, float dropoutP, uint64_t seed,
                               int64_t step, int64_t site) {
  Attention a;
  a.heads = heads;
  a.kvHeads = kvHeads;
  a.tq = tq;
  a.tk = tk;
  a.headDim = headDim;
  a.mask = mask;
  a.maskBatch = msb;
  a.maskHead = msh;
  a.maskQuery = msq;
  a.maskKey = msk;
  a.causal = causal != 0;
  a.scale = scale;
  a.fill = fill;
  a.dropout = dropoutP > 0.0f;
  a.key = philoxStream(seed, step, site);
  a.state = nullptr;
  a.site = site;
  a.threshold = keepThreshold(dropoutP);
  a.keepScale = 1.0f / (1.0f - dropoutP);
  a.offset = 0;
  a.maskedP = nullptr;
  a.rowD = nullptr;
  a.rowScale = nullptr;
  return a;
}

} // namespace txrt::cuda::attention

#endif // TXRT_CUDA_KERNELS_ATTENTIONKERNELS_CUH
