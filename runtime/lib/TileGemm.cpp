//===- TileGemm.cpp - register-blocked block products for fused kernels ---===//
//
// AVX-512: the micro-kernel keeps MR x NV zmm accumulators (MR <= 6 rows,
// NV <= 4 vectors of 16 columns), loads NV vectors of a B row and broadcasts
// MR elements of an A column per step of k; masked loads and stores handle
// column tails, smaller MR instantiations the row tails. Without AVX-512 a
// plain loop nest (vectorised by the compiler) does the same arithmetic.
//
//===----------------------------------------------------------------------===//
#include "TileGemm.h"

#include <algorithm>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

using namespace txrt;

namespace {

#if defined(__AVX512F__)

#ifndef TXRT_TILE_K_SLICE
#define TXRT_TILE_K_SLICE 128
#endif
constexpr int kMaxRows = 6;    // MR
constexpr int kMaxVectors = 4; // NV: 64 columns

// Every loop over MR or NV is unrolled completely so the accumulators stay
// in registers (GCC keeps an array it cannot scalarise in memory).
template <int MR, int NV, ALayout Layout>
inline void microKernel(int64_t k, float alpha, const float *a, int64_t lda,
                        const float *b, int64_t ldb, float *c, int64_t ldc,
                        bool accumulate, const __mmask16 *masks) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = _mm512_setzero_ps();
  __mmask16 mask[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v)
    mask[v] = masks[v];
  const float *aColumn = a;
  const float *bRow = b;
  for (int64_t p = 0; p < k; ++p) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_maskz_loadu_ps(mask[v], bRow + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      __m512 av = _mm512_set1_ps(
          Layout == ALayout::ColumnMajor ? aColumn[i] : aColumn[i * lda]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
    aColumn += Layout == ALayout::ColumnMajor ? lda : 1;
    bRow += ldb;
  }
  const __m512 scale = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float *cRow = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      __m512 result = _mm512_mul_ps(acc[i][v], scale);
      if (accumulate)
        result = _mm512_add_ps(result,
                               _mm512_maskz_loadu_ps(mask[v], cRow + 16 * v));
      _mm512_mask_storeu_ps(cRow + 16 * v, mask[v], result);
    }
  }
}

template <int NV, ALayout Layout>
void rowsOfPanel(int64_t m, int64_t k, float alpha, const float *a, int64_t lda,
                 const float *b, int64_t ldb, float *c, int64_t ldc,
                 bool accumulate, const __mmask16 *masks) {
  const int64_t rowStep = Layout == ALayout::ColumnMajor ? 1 : lda;
  int64_t i = 0;
  for (; i + kMaxRows <= m; i += kMaxRows)
    microKernel<kMaxRows, NV, Layout>(k, alpha, a + i * rowStep, lda, b, ldb,
                                      c + i * ldc, ldc, accumulate, masks);
  const float *aTail = a + i * rowStep;
  float *cTail = c + i * ldc;
  switch (m - i) {
  case 5:
    return microKernel<5, NV, Layout>(k, alpha, aTail, lda, b, ldb, cTail, ldc,
                                      accumulate, masks);
  case 4:
    return microKernel<4, NV, Layout>(k, alpha, aTail, lda, b, ldb, cTail, ldc,
                                      accumulate, masks);
  case 3:
    return microKernel<3, NV, Layout>(k, alpha, aTail, lda, b, ldb, cTail, ldc,
                                      accumulate, masks);
  case 2:
    return microKernel<2, NV, Layout>(k, alpha, aTail, lda, b, ldb, cTail, ldc,
                                      accumulate, masks);
  case 1:
    return microKernel<1, NV, Layout>(k, alpha, aTail, lda, b, ldb, cTail, ldc,
                                      accumulate, masks);
  default:
    return;
  }
}

template <ALayout Layout>
void tileGemmAvx512(int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc, bool accumulate) {
  // Long products run in slices of k so that a B panel (kSlice x 64) stays
  // in L1 while every row block of A passes over it.
  constexpr int64_t kSlice = TXRT_TILE_K_SLICE;
  if (k > kSlice) {
    for (int64_t p = 0; p < k; p += kSlice) {
      const float *aSlice = a + (Layout == ALayout::ColumnMajor ? p * lda : p);
      tileGemmAvx512<Layout>(m, n, std::min(kSlice, k - p), alpha, aSlice, lda,
                             b + p * ldb, ldb, c, ldc, accumulate || p > 0);
    }
    return;
  }
  for (int64_t j = 0; j < n; j += 16 * kMaxVectors) {
    int64_t width = std::min<int64_t>(n - j, 16 * kMaxVectors);
    __mmask16 masks[kMaxVectors];
    for (int v = 0; v < kMaxVectors; ++v) {
      int64_t lanes = std::clamp<int64_t>(width - 16 * v, 0, 16);
      masks[v] =
          lanes == 16 ? __mmask16(0xFFFF) : __mmask16((1u << lanes) - 1u);
    }
    int vectors = int((width + 15) / 16);
    const float *bPanel = b + j;
    float *cPanel = c + j;
    switch (vectors) {
    case 4:
      rowsOfPanel<4, Layout>(m, k, alpha, a, lda, bPanel, ldb, cPanel, ldc,
                             accumulate, masks);
      break;
    case 3:
      rowsOfPanel<3, Layout>(m, k, alpha, a, lda, bPanel, ldb, cPanel, ldc,
                             accumulate, masks);
      break;
    case 2:
      rowsOfPanel<2, Layout>(m, k, alpha, a, lda, bPanel, ldb, cPanel, ldc,
                             accumulate, masks);
      break;
    default:
      rowsOfPanel<1, Layout>(m, k, alpha, a, lda, bPanel, ldb, cPanel, ldc,
                             accumulate, masks);
      break;
    }
  }
}

#endif // __AVX512F__

/// The portable version: i-p-j order so the innermost loop is contiguous.
[[maybe_unused]] void tileGemmPortable(int64_t m, int64_t n, int64_t k,
                                       float alpha, const float *a, int64_t lda,
                                       ALayout layout, const float *b,
                                       int64_t ldb, float *c, int64_t ldc,
                                       bool accumulate) {
  constexpr int64_t kChunk = 256;
  float row[kChunk];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      int64_t width = std::min(kChunk, n - j0);
      for (int64_t j = 0; j < width; ++j)
        row[j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        float av =
            layout == ALayout::ColumnMajor ? a[i + p * lda] : a[i * lda + p];
        const float *bRow = b + p * ldb + j0;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j)
          row[j] += av * bRow[j];
      }
      float *cRow = c + i * ldc + j0;
      for (int64_t j = 0; j < width; ++j)
        cRow[j] = alpha * row[j] + (accumulate ? cRow[j] : 0.0f);
    }
  }
}

} // namespace

void txrt::tileGemm(int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, ALayout layout, const float *b,
                    int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0)
    return;
#if defined(__AVX512F__)
  if (layout == ALayout::ColumnMajor)
    tileGemmAvx512<ALayout::ColumnMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc,
                                         accumulate);
  else
    tileGemmAvx512<ALayout::RowMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc,
                                      accumulate);
#else
  tileGemmPortable(m, n, k, alpha, a, lda, layout, b, ldb, c, ldc, accumulate);
#endif
}

#if defined(__AVX512F__)
// GCC 12 reports its own _mm512_undefined_ps() (inside the unpack and
// shuffle intrinsics) as maybe-uninitialized here; it is not.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {

/// Transposes the block src[0..rows) x [0..cols) (rows, cols <= 16) into
/// dst: loads 16 (masked) rows, transposes in registers (32-bit unpacks,
/// 64-bit shuffles, two rounds of 128-bit lane shuffles), stores `cols`
/// masked rows.
void transposeBlock16(int64_t rows, int64_t cols, const float *src, int64_t lds,
                      float *dst, int64_t ldd) {
  const __mmask16 colMask = __mmask16((1u << cols) - 1u);
  const __mmask16 rowMask = __mmask16((1u << rows) - 1u);
  __m512 r[16], t[16], u[16];
  for (int i = 0; i < 16; ++i)
    r[i] = i < rows ? _mm512_maskz_loadu_ps(colMask, src + i * lds)
                    : _mm512_setzero_ps();
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; ++k) {
    u[4 * k] =
        _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 1] =
        _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * k + 2] =
        _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 3] =
        _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // u[4k + j], 128-bit lane L, holds column 4L + j of rows 4k .. 4k + 3.
  for (int j = 0; j < 4; ++j) {
    __m512 w0 = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(2, 0, 2, 0));
    __m512 w1 = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(3, 1, 3, 1));
    __m512 w2 =
        _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(2, 0, 2, 0));
    __m512 w3 =
        _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(3, 1, 3, 1));
    __m512 columns[4] = {
        _mm512_shuffle_f32x4(w0, w2, _MM_SHUFFLE(2, 0, 2, 0)),  // L = 0
        _mm512_shuffle_f32x4(w1, w3, _MM_SHUFFLE(2, 0, 2, 0)),  // L = 1
        _mm512_shuffle_f32x4(w0, w2, _MM_SHUFFLE(3, 1, 3, 1)),  // L = 2
        _mm512_shuffle_f32x4(w1, w3, _MM_SHUFFLE(3, 1, 3, 1))}; // L = 3
    for (int lane = 0; lane < 4; ++lane) {
      int column = 4 * lane + j;
      if (column < cols)
        _mm512_mask_storeu_ps(dst + column * ldd, rowMask, columns[lane]);
    }
  }
}

} // namespace
#pragma GCC diagnostic pop
#endif // __AVX512F__

void txrt::transposeTile(int64_t rows, int64_t cols, const float *src,
                         int64_t lds, float *dst, int64_t ldd) {
  constexpr int64_t kBlock = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kBlock) {
    // Strided rows defeat the hardware prefetcher: fetch the next block's.
    for (int64_t i = i0 + kBlock; i < std::min(rows, i0 + 2 * kBlock); ++i)
      for (int64_t j = 0; j < cols; j += 16)
        __builtin_prefetch(src + i * lds + j);
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
      int64_t iEnd = std::min(rows, i0 + kBlock);
      int64_t jEnd = std::min(cols, j0 + kBlock);
#if defined(__AVX512F__)
      transposeBlock16(iEnd - i0, jEnd - j0, src + i0 * lds + j0, lds,
                       dst + j0 * ldd + i0, ldd);
#else
      for (int64_t i = i0; i < iEnd; ++i)
        for (int64_t j = j0; j < jEnd; ++j)
          dst[j * ldd + i] = src[i * lds + j];
#endif
    }
  }
}
