//===- AttentionTensorCoreKernels.cuh - attention, tensor cores -*- CUDA
//-*-===//
//
// The default form of txrt_cuda_attention_{fwd,bwd} where head_dim <= 128:
// flash-attention-style kernels whose products (Q K^T, P V, dO V^T, dS K,
// P^T dO, dS^T Q) run on the tensor cores in 3xTF32 (TensorCore.cuh:
// fp32-level accuracy, as PyTorch's fp32 scaled_dot_product_attention
// computes them; 1xTF32, a third of the products, where the user allowed
// TF32 as for the GEMMs), with the function of AttentionKernels.cuh's Attention
// unchanged: its masks, fills, causal limit, grouped-query heads, dropout
// from the CPU's Philox counters and fully masked rows (O = 0, lse = -inf).
//
// - Forward: a block of 4 warps holds 64 query rows of one (batch, head),
//   16 a warp, and walks the keys in tiles of 32 through shared memory: S =
//   Q K^T into C fragments (each lane holds rows g and g + 8, columns 2t,
//   2t + 1 of each 8-key block), the online softmax on them (row maxima and
//   sums across the 4 lanes of a row group), P through the warp's scratch
//   tile into A fragments, O += P V in registers.
// - dq: the same blocks; S and dP = dO V^T recomputed from the saved lse,
//   dS = P (dP - D) through the scratch tile (D = dO . O of each row from
//   attentionBackwardRows, run first), dq += dS K.
// - Row scales, before dq and dk / dv: where a row's saved |lse| >= 16 its
//   sum of exp(S - lse) over its keys, with dk / dv's products, so that
//   both backward kernels divide its P by it (Attention::rowScale).
// - dk and dv: a block of 4 warps owns 64 keys of one (batch, kv head), 16
//   a warp, and walks every query row of the heads sharing the kv head in
//   tiles of 32: S^T = K Q^T and dP^T = V dO^T, then dv += P^T dO and dk +=
//   dS^T Q from the warp's scratch tiles. Each element of dk and dv has one
//   writer: no atomics, deterministic.
//
// Shared tiles read as A fragments, or as B fragments of their transpose,
// have a row stride of 4 mod 32 floats (the 32 lanes of a fragment load hit
// 32 banks); V in the forward, read as B fragments row-wise, 8 mod 32.
// Head dimensions are padded with zeros to a multiple of 8 (the product's
// k), rows and keys past the ends with zero rows.
//
// No CUDA header: it also compiles for the host under test/unit/cuda/
// emulated/CudaEmulation.h, whose warp-wide mma.sync stands in for the
// tensor cores (AttentionEmulatedTest).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ATTENTIONTENSORCOREKERNELS_CUH
#define TXRT_CUDA_KERNELS_ATTENTIONTENSORCOREKERNELS_CUH

#include "AttentionKernels.cuh"
#include "TensorCore.cuh"

namespace txrt::cuda::attention {

constexpr int kMmaWarps = 4;
/// Query rows of a forward or dq block (16 a warp).
constexpr int kMmaRows = 16 * kMmaWarps;
/// Keys a forward or dq block loads at a time.
constexpr int kMmaKeys = 32;
/// Keys of a dk / dv block (16 a warp).
constexpr int kMmaKeyRows = 16 * kMmaWarps;
/// Query rows a dk / dv block loads at a time.
constexpr int kMmaQueries = 32;
/// A warp's 16 x kScratchColumns scratch tile (P or dS), 4 mod 32 floats
/// a row: its columns are the keys (forward, dq) or queries (dk / dv) a
/// block loads at a time.
constexpr int kScratchColumns = 32;
constexpr int kScratchStride = kScratchColumns + 4;
static_assert(kMmaKeys == kScratchColumns && kMmaQueries == kScratchColumns,
              "rowProducts and accumulateScratchProduct take 32 columns");

/// Row stride of a tile read as A fragments or as the B fragments of its
/// transpose (lane 4g + t reads row g, column t: bank 4g + t).
__host__ __device__ constexpr int fragmentStride(int dims) {
  return 32 * dims + 4;
}
/// Row stride of a tile read as B fragments row-wise (lane 4g + t reads row
/// t, column g: bank 8t + g).
__host__ __device__ constexpr int rowFragmentStride(int dims) {
  return 32 * dims + 8;
}

/// Rows [first, first + count) of a head's slice (columns [column, column +
/// width) of rows `ld` apart) into a tile of `stride` floats a row; columns
/// [width, padded) and rows past `rows` are zeros. Every thread of the block
/// takes part, a warp a row, the lanes along it.
__device__ inline void loadRowsPadded(float *tile, int stride, const float *src,
                                      int64_t ld, int64_t column, int64_t first,
                                      int count, int64_t rows, int width,
                                      int padded) {
  const int warps = int(blockDim.x / 32), warp = int(threadIdx.x / 32),
            lane = int(threadIdx.x % 32);
  for (int r = warp; r < count; r += warps) {
    const bool inside = first + r < rows;
    const float *row = inside ? src + (first + r) * ld + column : src;
    for (int d = lane; d < padded; d += 32)
      tile[r * stride + d] = inside && d < width ? row[d] : 0.0f;
  }
}

/// The forward's and dq's blocks: (batch * heads, kMmaRows query rows),
/// with this lane's place in the C fragments.
struct MmaRowBlock : RowTile {
  tensorcore::Lane quad;
  /// The query rows this lane's C fragments hold (g and g + 8 of its
  /// warp's 16).
  __device__ int64_t row(int half) const {
    return i0 + warp * 16 + quad.g + 8 * half;
  }
};

__device__ inline MmaRowBlock mmaRowBlock(const Attention &a) {
  MmaRowBlock t;
  static_cast<RowTile &>(t) = rowTileOfBlock(a, kMmaRows);
  t.quad = tensorcore::laneOf(t.lane);
  return t;
}

/// The column of element c (0 or 1) of this lane's C fragment of 8-column
/// block n.
__device__ __forceinline__ int fragmentColumn(tensorcore::Lane l, int n,
                                              int c) {
  return n * 8 + 2 * l.t + c;
}

/// Sets n C fragments to zero.
template <int n>
__device__ __forceinline__ void clearFragments(float (&f)[n][4]) {
#pragma unroll
  for (int i = 0; i < n; ++i)
    f[i][0] = f[i][1] = f[i][2] = f[i][3] = 0.0f;
}

// The tensor cores truncate the sums of mma.sync (TensorCore.cuh), so an
// accumulator carried through many calls drifts toward zero with their
// number: 5e-5 relative at 9000 keys on an H200. Each product below sums at
// most 32 of the k dimension on the tensor cores, from a zero fragment,
// and adds that part to its accumulator on the CUDA cores (rounded to
// nearest), as CUTLASS's and DeepGEMM's "promotion" of partial sums does.

/// s = A B^T for a warp: A the 16 rows from `row0` of a tile (`as` floats
/// a row), B the first kScratchColumns rows of another (`bs`), over the
/// head dimension (dimBlocks blocks of 8, at most kDimBlocks): 4 C
/// fragments of 8 columns.
template <int kDimBlocks, int kPasses>
__device__ __forceinline__ void
rowProducts(float (&s)[4][4], const float *a, int as, int row0, const float *b,
            int bs, int dimBlocks, tensorcore::Lane l) {
  using namespace tensorcore;
  clearFragments(s);
#pragma unroll
  for (int k0 = 0; k0 < kDimBlocks; k0 += 4) {
    if (k0 >= dimBlocks)
      continue;
    float part[4][4];
    clearFragments(part);
#pragma unroll
    for (int kk = k0; kk < k0 + 4 && kk < kDimBlocks; ++kk) {
      if (kk >= dimBlocks)
        continue;
      const SplitA fa = loadA(a, as, row0, kk * 8, l);
#pragma unroll
      for (int n = 0; n < 4; ++n)
        mmaPasses<kPasses>(part[n], fa,
                           loadBTransposed(b, bs, n * 8, kk * 8, l));
    }
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        s[n][q] += part[n][q];
  }
}

/// acc += S M for a warp: S its 16 x 32 scratch tile (P or dS), M the first
/// 32 rows of a tile (`ms` floats a row) over the head dimension. The
/// tile's product starts from zero and is added to acc on the CUDA cores.
template <int kPasses, int kDimBlocks>
__device__ __forceinline__ void
accumulateScratchProduct(float (&acc)[kDimBlocks][4], const float *scratch,
                         const float *m, int ms, int dimBlocks,
                         tensorcore::Lane l) {
  using namespace tensorcore;
  constexpr int kSteps = kScratchColumns / 8;
  SplitA fa[kSteps];
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk)
    fa[kk] = loadA(scratch, kScratchStride, 0, kk * 8, l);
#pragma unroll
  for (int n = 0; n < kDimBlocks; ++n) {
    if (n >= dimBlocks)
      continue;
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk)
      mmaPasses<kPasses>(part, fa[kk], loadB(m, ms, kk * 8, n * 8, l));
#pragma unroll
    for (int q = 0; q < 4; ++q)
      acc[n][q] += part[q];
  }
}

/// Writes `factor` times row half (0: g, 1: g + 8) of a warp's C fragments
/// to `row`, columns < hd.
template <int kDimBlocks>
__device__ __forceinline__ void
storeFragmentRow(float *row, const float (&f)[kDimBlocks][4], int half,
                 float factor, int dimBlocks, int hd, tensorcore::Lane l) {
#pragma unroll
  for (int n = 0; n < kDimBlocks; ++n)
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int d = fragmentColumn(l, n, c);
      if (n < dimBlocks && d < hd)
        row[d] = factor * f[n][2 * half + c];
    }
}

template <int kDims, int kPasses>
__global__ void __launch_bounds__(kMmaWarps * 32)
    attentionForwardMma(Attention a, const float *q, int64_t ldq,
                        const float *k, int64_t ldk, const float *v,
                        int64_t ldv, float *o, int64_t ldo, float *lse) {
  using namespace tensorcore;
  constexpr int kDimBlocks = 4 * kDims;
  constexpr int qs = fragmentStride(kDims), ks = fragmentStride(kDims),
                vs = rowFragmentStride(kDims), ps = kScratchStride;
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  float *qTile = shared, *kTile = qTile + kMmaRows * qs,
        *vTile = kTile + kMmaKeys * ks, *pTile = vTile + kMmaKeys * vs;
  const MmaRowBlock t = mmaRowBlock(a);
  const int64_t b = t.b, h = t.h, i0 = t.i0;
  const Lane l = t.quad;
  const int hd = int(a.headDim), dimBlocks = (hd + 7) / 8,
            padded = 8 * dimBlocks;
  float *pWarp = pTile + t.warp * 16 * ps;
  loadRowsPadded(qTile, qs, q + b * a.tq * ldq, ldq, h * hd, i0, kMmaRows, a.tq,
                 hd, padded);
  float m[2] = {-INFINITY, -INFINITY}, sum[2] = {0.0f, 0.0f};
  float acc[kDimBlocks][4];
  clearFragments(acc);
  const int64_t rowEnd = i0 + kMmaRows < a.tq ? i0 + kMmaRows : a.tq;
  // Keys past the causal limit of the block's last row are masked for all
  // its rows. With a -inf fill they drop out; with a finite fill (what
  // masked_fill wrote) they count, each with probability exp(fill - m):
  // the block takes them only where that is not zero for some row (every
  // key masked, a fill close to the scores), checked when the loop reaches
  // them. With -1e9 it is zero, and a causal block skips half its keys.
  const int64_t causalEnd = causalKeyLimit(a, rowEnd);
  const int64_t keyEnd = a.fill == -INFINITY ? causalEnd : a.tk;
  // Warps whose 16 rows are all past tq only help load the tiles.
  const bool rowsHere = i0 + t.warp * 16 < a.tq;
  const float *kBase = k + b * a.tk * ldk, *vBase = v + b * a.tk * ldv;
  for (int64_t j0 = 0; j0 < keyEnd; j0 += kMmaKeys) {
    if (keyEnd != causalEnd && j0 >= causalEnd && j0 - kMmaKeys < causalEnd) {
      bool counts = false; // a masked key's probability is not zero
#pragma unroll
      for (int half = 0; half < 2; ++half)
        counts = counts || (rowsHere && t.row(half) < a.tq &&
                            expf(a.fill - m[half]) != 0.0f);
      if (!__syncthreads_or(counts))
        break; // the same for every thread of the block
    }
    __syncthreads(); // the previous tiles are read (and the q tile written)
    loadRowsPadded(kTile, ks, kBase, ldk, t.g * hd, j0, kMmaKeys, a.tk, hd,
                   padded);
    loadRowsPadded(vTile, vs, vBase, ldv, t.g * hd, j0, kMmaKeys, a.tk, hd,
                   padded);
    __syncthreads();
    if (!rowsHere)
      continue;
    float s[4][4];
    rowProducts<kDimBlocks, kPasses>(s, qTile, qs, t.warp * 16, kTile, ks,
                                     dimBlocks, l);
    // The online softmax of rows g and g + 8 over this tile's keys.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t i = t.row(half);
      float tileMax = -INFINITY;
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int64_t j = j0 + fragmentColumn(l, n, c);
          float &x = s[n][2 * half + c];
          x = i < a.tq && j < a.tk
                  ? (a.visible(b, h, i, j) ? a.scale * x : a.fill)
                  : -INFINITY;
          tileMax = fmaxf(tileMax, x);
        }
      const float mNew = fmaxf(m[half], quadMax(tileMax));
      // A row keeps its maximum at -inf until it has seen a key.
      const float correction =
          m[half] == -INFINITY ? 0.0f : expf(m[half] - mNew);
      float tileSum = 0.0f;
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int column = fragmentColumn(l, n, c);
          const float x = s[n][2 * half + c];
          const float p = x == -INFINITY ? 0.0f : expf(x - mNew);
          tileSum += p;
          pWarp[(l.g + 8 * half) * ps + column] =
              p == 0.0f ? 0.0f : p * a.dropFactor(b, h, i, j0 + column);
        }
      sum[half] = sum[half] * correction + quadSum(tileSum);
      m[half] = mNew;
#pragma unroll
      for (int n = 0; n < kDimBlocks; ++n) {
        acc[n][2 * half] *= correction;
        acc[n][2 * half + 1] *= correction;
      }
    }
    __syncwarp(); // the scratch tile is written
    accumulateScratchProduct<kPasses>(acc, pWarp, vTile, vs, dimBlocks, l);
    __syncwarp(); // the scratch tile is read before the next tile's writes
  }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = t.row(half);
    if (i >= a.tq)
      continue;
    float *out = o + (b * a.tq + i) * ldo + h * hd;
    const bool none = m[half] == -INFINITY; // no visible key, fill -inf
    // O = 0 for a row with no visible key (acc is zero there too).
    storeFragmentRow(out, acc, half, none ? 0.0f : 1.0f / sum[half], dimBlocks,
                     hd, l);
    if (lse && l.t == 0)
      lse[t.bh * a.tq + i] = none ? -INFINITY : m[half] + logf(sum[half]);
  }
}

template <int kDims, int kPasses>
__global__ void __launch_bounds__(kMmaWarps * 32)
    attentionBackwardQueryMma(Attention a, const float *q, int64_t ldq,
                              const float *k, int64_t ldk, const float *v,
                              int64_t ldv, const float *lse, const float *dO,
                              int64_t lddo, float *dq, int64_t lddq) {
  using namespace tensorcore;
  constexpr int kDimBlocks = 4 * kDims;
  constexpr int qs = fragmentStride(kDims), ks = fragmentStride(kDims),
                ps = kScratchStride;
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  float *qTile = shared, *doTile = qTile + kMmaRows * qs,
        *kTile = doTile + kMmaRows * qs, *vTile = kTile + kMmaKeys * ks,
        *dsTile = vTile + kMmaKeys * ks;
  const MmaRowBlock t = mmaRowBlock(a);
  const int64_t b = t.b, h = t.h, i0 = t.i0;
  const Lane l = t.quad;
  const int hd = int(a.headDim), dimBlocks = (hd + 7) / 8,
            padded = 8 * dimBlocks;
  float *dsWarp = dsTile + t.warp * 16 * ps;
  loadRowsPadded(qTile, qs, q + b * a.tq * ldq, ldq, h * hd, i0, kMmaRows, a.tq,
                 hd, padded);
  loadRowsPadded(doTile, qs, dO + b * a.tq * lddo, lddo, h * hd, i0, kMmaRows,
                 a.tq, hd, padded);
  __syncthreads();
  // This lane's rows' lse and D = sum_j P'_ij dP'_ij = dO_i . O_i
  // (attentionBackwardRows computed it once).
  float dRow[2], lseRow[2], scaleRow[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = t.row(half);
    dRow[half] = i < a.tq ? a.rowD[t.bh * a.tq + i] : 0.0f;
    lseRow[half] = i < a.tq ? lse[t.bh * a.tq + i] : -INFINITY;
    scaleRow[half] = i < a.tq ? a.probabilityScale(t.bh * a.tq + i) : 1.0f;
  }
  float acc[kDimBlocks][4];
  clearFragments(acc);
  const int64_t rowEnd = i0 + kMmaRows < a.tq ? i0 + kMmaRows : a.tq;
  // Keys past the causal limit are masked for every row of the block, and
  // a masked key has dS = 0 whatever the fill: dq never needs them.
  const int64_t keyEnd = causalKeyLimit(a, rowEnd);
  const bool rowsHere = i0 + t.warp * 16 < a.tq;
  const float *kBase = k + b * a.tk * ldk, *vBase = v + b * a.tk * ldv;
  for (int64_t j0 = 0; j0 < keyEnd; j0 += kMmaKeys) {
    __syncthreads();
    loadRowsPadded(kTile, ks, kBase, ldk, t.g * hd, j0, kMmaKeys, a.tk, hd,
                   padded);
    loadRowsPadded(vTile, ks, vBase, ldv, t.g * hd, j0, kMmaKeys, a.tk, hd,
                   padded);
    __syncthreads();
    if (!rowsHere)
      continue;
    float s[4][4], dp[4][4];
    rowProducts<kDimBlocks, kPasses>(s, qTile, qs, t.warp * 16, kTile, ks,
                                     dimBlocks, l);
    rowProducts<kDimBlocks, kPasses>(dp, doTile, qs, t.warp * 16, vTile, ks,
                                     dimBlocks, l);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t i = t.row(half);
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int column = fragmentColumn(l, n, c);
          const int64_t j = j0 + column;
          float ds = 0.0f;
          // A masked key's score is the constant fill: no gradient.
          if (i < a.tq && j < a.tk && lseRow[half] != -INFINITY &&
              a.visible(b, h, i, j)) {
            const float prob =
                a.visibleProbability(s[n][2 * half + c], lseRow[half]) *
                scaleRow[half];
            const float dP = dp[n][2 * half + c] * a.dropFactor(b, h, i, j);
            ds = prob * (dP - dRow[half]);
          }
          dsWarp[(l.g + 8 * half) * ps + column] = ds;
        }
    }
    __syncwarp();
    accumulateScratchProduct<kPasses>(acc, dsWarp, kTile, ks, dimBlocks, l);
    __syncwarp();
  }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = t.row(half);
    if (i >= a.tq)
      continue;
    storeFragmentRow(dq + (b * a.tq + i) * lddq + h * hd, acc, half, a.scale,
                     dimBlocks, hd, l);
  }
}

template <int kDims, int kPasses>
__global__ void __launch_bounds__(kMmaWarps * 32)
    attentionBackwardKeysMma(Attention a, const float *q, int64_t ldq,
                             const float *k, int64_t ldk, const float *v,
                             int64_t ldv, const float *lse, const float *dO,
                             int64_t lddo, float *dk, int64_t lddk, float *dv,
                             int64_t lddv) {
  using namespace tensorcore;
  constexpr int kDimBlocks = 4 * kDims;
  constexpr int ks = fragmentStride(kDims), qs = fragmentStride(kDims),
                ps = kScratchStride;
  a.resolveKey();
  TXRT_DYNAMIC_SHARED(float, shared);
  float *kTile = shared, *vTile = kTile + kMmaKeyRows * ks,
        *qTile = vTile + kMmaKeyRows * ks, *doTile = qTile + kMmaQueries * qs,
        *pTile = doTile + kMmaQueries * qs,
        *dsTile = pTile + kMmaWarps * 16 * ps,
        *lseTile = dsTile + kMmaWarps * 16 * ps, *dTile = lseTile + kMmaQueries,
        *scaleTile = dTile + kMmaQueries;
  const int64_t bg = blockIdx.x, b = bg / a.kvHeads, g = bg % a.kvHeads;
  const int64_t j0 = int64_t(blockIdx.y) * kMmaKeyRows;
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const Lane l = laneOf(lane);
  const int hd = int(a.headDim), dimBlocks = (hd + 7) / 8,
            padded = 8 * dimBlocks;
  float *pWarp = pTile + warp * 16 * ps, *dsWarp = dsTile + warp * 16 * ps;
  loadRowsPadded(kTile, ks, k + b * a.tk * ldk, ldk, g * hd, j0, kMmaKeyRows,
                 a.tk, hd, padded);
  loadRowsPadded(vTile, ks, v + b * a.tk * ldv, ldv, g * hd, j0, kMmaKeyRows,
                 a.tk, hd, padded);
  float dkAcc[kDimBlocks][4], dvAcc[kDimBlocks][4];
  clearFragments(dkAcc);
  clearFragments(dvAcc);
  // The keys this lane's C fragments hold: g and g + 8 of its warp's 16.
  int64_t keyOf[2];
  keyOf[0] = j0 + warp * 16 + l.g;
  keyOf[1] = keyOf[0] + 8;
  const bool keysHere = j0 + warp * 16 < a.tk;
  // Under a causal mask, rows before the block's first key see none of its
  // keys: no dk, and with a -inf fill no dv either. With a finite fill each
  // of those masked keys still takes P = exp(fill - lse) dO of the row into
  // dv; the rows are skipped only where that is zero for all of them.
  int64_t iBegin = 0;
  if (a.causal && j0 - (a.tk - a.tq) > 0)
    iBegin = j0 - (a.tk - a.tq);
  const int64_t group = a.heads / a.kvHeads;
  for (int64_t hh = 0; hh < group; ++hh) {
    const int64_t h = g * group + hh;
    int64_t first = iBegin;
    if (iBegin > 0 && a.fill != -INFINITY) {
      bool counts = false;
      for (int64_t i = threadIdx.x; i < iBegin; i += blockDim.x)
        counts = counts ||
                 a.maskedProbability((b * a.heads + h) * a.tq + i,
                                     lse[(b * a.heads + h) * a.tq + i]) != 0.0f;
      if (__syncthreads_or(counts))
        first = 0;
    }
    for (int64_t i0 = first; i0 < a.tq; i0 += kMmaQueries) {
      __syncthreads(); // the previous rows are read (and K, V written)
      loadRowsPadded(qTile, qs, q + b * a.tq * ldq, ldq, h * hd, i0,
                     kMmaQueries, a.tq, hd, padded);
      loadRowsPadded(doTile, qs, dO + b * a.tq * lddo, lddo, h * hd, i0,
                     kMmaQueries, a.tq, hd, padded);
      __syncthreads();
      // The tile's rows' lse, D (attentionBackwardRows) and rowScale
      // (attentionBackwardRowScalesMma).
      for (int r = int(threadIdx.x); r < kMmaQueries; r += int(blockDim.x)) {
        const int64_t i = i0 + r, row = (b * a.heads + h) * a.tq + i;
        dTile[r] = i < a.tq ? a.rowD[row] : 0.0f;
        lseTile[r] = i < a.tq ? lse[row] : -INFINITY;
        scaleTile[r] = i < a.tq ? a.probabilityScale(row) : 1.0f;
      }
      __syncthreads();
      if (!keysHere)
        continue;
      float s[4][4], dp[4][4];
      rowProducts<kDimBlocks, kPasses>(s, kTile, ks, warp * 16, qTile, qs,
                                       dimBlocks, l);
      rowProducts<kDimBlocks, kPasses>(dp, vTile, ks, warp * 16, doTile, qs,
                                       dimBlocks, l);
      // S^T and dP^T: this lane's keys (rows) against the tile's queries
      // (columns).
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int64_t j = keyOf[half];
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const int r = fragmentColumn(l, n, c);
            const int64_t i = i0 + r;
            const float rowLse = lseTile[r];
            float pDrop = 0.0f, ds = 0.0f;
            if (i < a.tq && j < a.tk && rowLse != -INFINITY) {
              const bool seen = a.visible(b, h, i, j);
              const float prob =
                  seen ? a.visibleProbability(s[n][2 * half + c], rowLse) *
                             scaleTile[r]
                       : a.maskedProbability((b * a.heads + h) * a.tq + i,
                                             rowLse);
              const float factor = a.dropFactor(b, h, i, j);
              pDrop = prob * factor;
              ds = seen ? prob * (dp[n][2 * half + c] * factor - dTile[r]) *
                              a.scale
                        : 0.0f;
            }
            pWarp[(l.g + 8 * half) * ps + r] = pDrop;
            dsWarp[(l.g + 8 * half) * ps + r] = ds;
          }
      }
      __syncwarp();
      accumulateScratchProduct<kPasses>(dvAcc, pWarp, doTile, qs, dimBlocks, l);
      accumulateScratchProduct<kPasses>(dkAcc, dsWarp, qTile, qs, dimBlocks, l);
      __syncwarp();
    }
  }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t j = keyOf[half];
    if (j >= a.tk)
      continue;
    storeFragmentRow(dk + (b * a.tk + j) * lddk + g * hd, dkAcc, half, 1.0f,
                     dimBlocks, hd, l);
    storeFragmentRow(dv + (b * a.tk + j) * lddv + g * hd, dvAcc, half, 1.0f,
                     dimBlocks, hd, l);
  }
}

/// Attention::rowScale for the tensor-core backward: a block of kMmaWarps
/// warps per (batch * heads, kMmaRows query rows), as dq's. Its sums must
/// be of the P that attentionBackwardKeysMma forms dv from (a difference
/// in the last bits of S at scores near 1e5 is a part in 1e3 of a key's
/// P), so it computes S^T = K Q^T as that kernel does: K's rows as A, the
/// queries as B, the same rowProducts; an element of mma.sync depends only
/// on its row of A and its column of B, so these are its bits. Each warp
/// takes 16 keys of a 64-key tile against the block's rows, 32 at a time;
/// a row adds the warps' parts in order (deterministic). A block none of
/// whose rows has a rounded lse (roundedLse) writes 1s and is done.
template <int kDims, int kPasses>
__global__ void __launch_bounds__(kMmaWarps * 32)
    attentionBackwardRowScalesMma(Attention a, const float *q, int64_t ldq,
                                  const float *k, int64_t ldk, const float *lse,
                                  float *rowScale) {
  using namespace tensorcore;
  constexpr int kDimBlocks = 4 * kDims;
  constexpr int qs = fragmentStride(kDims), ks = fragmentStride(kDims);
  TXRT_DYNAMIC_SHARED(float, shared);
  // partTile: [kMmaWarps][kMmaRows] the warps' parts; maskedTile: 1 where
  // the row has a masked key.
  float *qTile = shared, *kTile = qTile + kMmaRows * qs,
        *partTile = kTile + kMmaKeyRows * ks,
        *lseTile = partTile + kMmaWarps * kMmaRows,
        *sumTile = lseTile + kMmaRows, *maskedTile = sumTile + kMmaRows;
  const MmaRowBlock t = mmaRowBlock(a);
  const int64_t b = t.b, h = t.h, i0 = t.i0;
  const int warp = t.warp;
  const Lane l = t.quad;
  const int hd = int(a.headDim), dimBlocks = (hd + 7) / 8,
            padded = 8 * dimBlocks;
  bool any = false;
  for (int r = int(threadIdx.x); r < kMmaRows; r += int(blockDim.x)) {
    const int64_t i = i0 + r;
    lseTile[r] = i < a.tq ? lse[t.bh * a.tq + i] : -INFINITY;
    sumTile[r] = 0.0f;
    maskedTile[r] = 0.0f;
    any = any || roundedLse(lseTile[r]);
  }
  if (!__syncthreads_or(any)) {
    for (int64_t r = threadIdx.x; r < kMmaRows && i0 + r < a.tq;
         r += blockDim.x)
      rowScale[t.bh * a.tq + i0 + r] = 1.0f;
    return;
  }
  loadRowsPadded(qTile, qs, q + b * a.tq * ldq, ldq, h * hd, i0, kMmaRows, a.tq,
                 hd, padded);
  const int64_t rowEnd = i0 + kMmaRows < a.tq ? i0 + kMmaRows : a.tq;
  // Later keys are masked for every row of the block (and count only where
  // the fill's share does: such rows keep rowScale 1).
  const int64_t keyEnd = causalKeyLimit(a, rowEnd);
  const float *kBase = k + b * a.tk * ldk;
  for (int64_t j0 = 0; j0 < keyEnd; j0 += kMmaKeyRows) {
    __syncthreads(); // the previous tiles are read (and the q tile written)
    loadRowsPadded(kTile, ks, kBase, ldk, t.g * hd, j0, kMmaKeyRows, a.tk, hd,
                   padded);
    __syncthreads();
    const bool keysHere = j0 + warp * 16 < a.tk; // warp-uniform
#pragma unroll
    for (int part = 0; part < kMmaRows / kScratchColumns; ++part) {
      float s[4][4];
      if (keysHere)
        rowProducts<kDimBlocks, kPasses>(s, kTile, ks, warp * 16,
                                         qTile + part * kScratchColumns * qs,
                                         qs, dimBlocks, l);
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int r = part * kScratchColumns + fragmentColumn(l, n, c);
          const int64_t i = i0 + r;
          float sum = 0.0f;
          if (keysHere && i < a.tq && roundedLse(lseTile[r]))
#pragma unroll
            for (int half = 0; half < 2; ++half) {
              const int64_t j = j0 + warp * 16 + l.g + 8 * half;
              if (j >= a.tk)
                continue;
              if (a.visible(b, h, i, j))
                sum += a.visibleProbability(s[n][2 * half + c], lseTile[r]);
              else
                maskedTile[r] = 1.0f;
            }
          // Over the warp's 16 keys: the 8 lanes 4g + t of a column.
          sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 4);
          sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 8);
          sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 16);
          if (l.g == 0)
            partTile[warp * kMmaRows + r] = sum;
        }
    }
    __syncthreads();
    for (int r = int(threadIdx.x); r < kMmaRows; r += int(blockDim.x))
      for (int w = 0; w < kMmaWarps; ++w)
        sumTile[r] += partTile[w * kMmaRows + r];
  }
  __syncthreads();
  for (int r = int(threadIdx.x); r < kMmaRows; r += int(blockDim.x)) {
    const int64_t i = i0 + r;
    if (i >= a.tq)
      continue;
    const float rowLse = lseTile[r], sum = sumTile[r];
    const bool masked = maskedTile[r] != 0.0f || keyEnd < a.tk;
    rowScale[t.bh * a.tq + i] =
        roundedLse(rowLse) && !maskedKeysCount(a, rowLse, masked) && sum > 0.0f
            ? 1.0f / sum
            : 1.0f;
  }
}

/// The forward: a block per (batch * heads, kMmaRows query rows).
inline Launch mmaForwardLaunch(int64_t batch, const Attention &a) {
  const int dims = int((a.headDim + 31) / 32);
  return {batch * a.heads, (a.tq + kMmaRows - 1) / kMmaRows, kMmaWarps * 32,
          size_t(kMmaRows * fragmentStride(dims) +
                 kMmaKeys * fragmentStride(dims) +
                 kMmaKeys * rowFragmentStride(dims) +
                 kMmaWarps * 16 * kScratchStride) *
              sizeof(float)};
}
/// dq: the forward's blocks.
inline Launch mmaQueryLaunch(int64_t batch, const Attention &a) {
  const int dims = int((a.headDim + 31) / 32);
  return {batch * a.heads, (a.tq + kMmaRows - 1) / kMmaRows, kMmaWarps * 32,
          size_t(2 * kMmaRows * fragmentStride(dims) +
                 2 * kMmaKeys * fragmentStride(dims) +
                 kMmaWarps * 16 * kScratchStride) *
              sizeof(float)};
}
/// dk and dv: a block per (batch * kv heads, kMmaKeyRows keys).
inline Launch mmaKeysLaunch(int64_t batch, const Attention &a) {
  const int dims = int((a.headDim + 31) / 32);
  return {batch * a.kvHeads, (a.tk + kMmaKeyRows - 1) / kMmaKeyRows,
          kMmaWarps * 32,
          size_t(2 * kMmaKeyRows * fragmentStride(dims) +
                 2 * kMmaQueries * fragmentStride(dims) +
                 2 * kMmaWarps * 16 * kScratchStride + 3 * kMmaQueries) *
              sizeof(float)};
}

/// attentionBackwardRowScalesMma: dq's blocks; the Q tile, a K tile of
/// kMmaKeyRows keys, the warps' parts and the rows' lse, sums and flags.
inline Launch mmaRowScalesLaunch(int64_t batch, const Attention &a) {
  const int dims = int((a.headDim + 31) / 32);
  return {batch * a.heads, (a.tq + kMmaRows - 1) / kMmaRows, kMmaWarps * 32,
          size_t(kMmaRows * fragmentStride(dims) +
                 kMmaKeyRows * fragmentStride(dims) + kMmaWarps * kMmaRows +
                 3 * kMmaRows) *
              sizeof(float)};
}

/// The tensor-core kernels of kPasses products per product (mmaPasses):
/// 3 by default, 1 where the context allows TF32.
template <int kPasses> struct Mma {
  template <int kDims> struct Forward {
    static constexpr auto kernel = attentionForwardMma<kDims, kPasses>;
  };
  template <int kDims> struct Query {
    static constexpr auto kernel = attentionBackwardQueryMma<kDims, kPasses>;
  };
  template <int kDims> struct Keys {
    static constexpr auto kernel = attentionBackwardKeysMma<kDims, kPasses>;
  };
  template <int kDims> struct RowScales {
    static constexpr auto kernel =
        attentionBackwardRowScalesMma<kDims, kPasses>;
  };
};
template <int kDims> using ForwardMma = Mma<3>::Forward<kDims>;
template <int kDims> using QueryMma = Mma<3>::Query<kDims>;
template <int kDims> using KeysMma = Mma<3>::Keys<kDims>;
template <int kDims> using RowScalesMma = Mma<3>::RowScales<kDims>;

} // namespace txrt::cuda::attention

#endif // TXRT_CUDA_KERNELS_ATTENTIONTENSORCOREKERNELS_CUH
