//===- TileGemm.cpp - register-blocked block products for fused kernels ---===//
//
// One micro-kernel over Simd (Simd.h): MR x NV vector accumulators (MR = 6
// rows; NV = 4 vectors of 16 columns with AVX-512's 32 registers, 2 of 8
// with AVX2's 16), NV vectors of a B row loaded and MR elements of an A
// column broadcast per step of k. A column tail is the last vector of the
// last panel, loaded and stored through a lane mask (a template flag, so
// whole panels pay nothing for it); smaller MR instantiations take the row
// tail. Without AVX2 or AVX-512 a plain loop nest (vectorised by the
// compiler) does the same arithmetic.
//
//===----------------------------------------------------------------------===//
#include "TileGemm.h"
#include "Bf16Round.h"
#include "Simd.h"

#include <algorithm>
#include <atomic>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace txrt;

namespace {

#if TXRT_HAS_SIMD

constexpr int kLanes = Simd::kLanes;
constexpr int kMaxRows = 6; // MR
// NV: MR * NV accumulators, NV B vectors and a broadcast fit the registers.
constexpr int kMaxVectors = Simd::kRegisters >= 32 ? 4 : 2;
constexpr int64_t kPanel = int64_t(kLanes) * kMaxVectors; // columns
#ifndef TXRT_TILE_K_SLICE
// Rows of a B panel that fill half of a 64 KiB L1 (128 with AVX-512, whose
// panel rows are 256 bytes; 512 with AVX2).
#define TXRT_TILE_K_SLICE (32768 / (4 * kPanel))
#endif

// Every loop over MR or NV is unrolled completely so the accumulators stay
// in registers (GCC keeps an array it cannot scalarise in memory).
template <int MR, int NV, bool Tail, ALayout Layout>
inline void microKernel(int64_t k, float alpha, const float *a, int64_t lda,
                        const float *b, int64_t ldb, float *c, int64_t ldc,
                        bool accumulate, Simd::Tail tail) {
  Simd::Vec acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = Simd::zero();
  const float *aColumn = a;
  const float *bRow = b;
  for (int64_t p = 0; p < k; ++p) {
    Simd::Vec bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = Tail && v == NV - 1 ? Simd::load(bRow + kLanes * v, tail)
                                  : Simd::load(bRow + kLanes * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const Simd::Vec av = Simd::broadcast(
          Layout == ALayout::ColumnMajor ? aColumn[i] : aColumn[i * lda]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = Simd::fmadd(av, bv[v], acc[i][v]);
    }
    aColumn += Layout == ALayout::ColumnMajor ? lda : 1;
    bRow += ldb;
  }
  const Simd::Vec scale = Simd::broadcast(alpha);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float *cRow = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      Simd::Vec result = Simd::mul(acc[i][v], scale);
      if (Tail && v == NV - 1) {
        if (accumulate)
          result = Simd::add(result, Simd::load(cRow + kLanes * v, tail));
        Simd::store(cRow + kLanes * v, tail, result);
      } else {
        if (accumulate)
          result = Simd::add(result, Simd::load(cRow + kLanes * v));
        Simd::store(cRow + kLanes * v, result);
      }
    }
  }
}

template <int NV, bool Tail, ALayout Layout>
void rowsOfPanel(int64_t m, int64_t k, float alpha, const float *a, int64_t lda,
                 const float *b, int64_t ldb, float *c, int64_t ldc,
                 bool accumulate, Simd::Tail tail) {
  const int64_t rowStep = Layout == ALayout::ColumnMajor ? 1 : lda;
  int64_t i = 0;
  for (; i + kMaxRows <= m; i += kMaxRows)
    microKernel<kMaxRows, NV, Tail, Layout>(k, alpha, a + i * rowStep, lda, b,
                                            ldb, c + i * ldc, ldc, accumulate,
                                            tail);
  const float *aTail = a + i * rowStep;
  float *cTail = c + i * ldc;
  switch (m - i) {
  case 5:
    return microKernel<5, NV, Tail, Layout>(k, alpha, aTail, lda, b, ldb, cTail,
                                            ldc, accumulate, tail);
  case 4:
    return microKernel<4, NV, Tail, Layout>(k, alpha, aTail, lda, b, ldb, cTail,
                                            ldc, accumulate, tail);
  case 3:
    return microKernel<3, NV, Tail, Layout>(k, alpha, aTail, lda, b, ldb, cTail,
                                            ldc, accumulate, tail);
  case 2:
    return microKernel<2, NV, Tail, Layout>(k, alpha, aTail, lda, b, ldb, cTail,
                                            ldc, accumulate, tail);
  case 1:
    return microKernel<1, NV, Tail, Layout>(k, alpha, aTail, lda, b, ldb, cTail,
                                            ldc, accumulate, tail);
  default:
    return;
  }
}

/// One panel of `vectors` (1..kMaxVectors) vectors of columns, the last one
/// partial when `partial`.
template <ALayout Layout, int NV = kMaxVectors>
void panel(int vectors, bool partial, int64_t m, int64_t k, float alpha,
           const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
           int64_t ldc, bool accumulate, Simd::Tail tail) {
  if constexpr (NV > 1)
    if (vectors < NV)
      return panel<Layout, NV - 1>(vectors, partial, m, k, alpha, a, lda, b,
                                   ldb, c, ldc, accumulate, tail);
  if (partial)
    rowsOfPanel<NV, true, Layout>(m, k, alpha, a, lda, b, ldb, c, ldc,
                                  accumulate, tail);
  else
    rowsOfPanel<NV, false, Layout>(m, k, alpha, a, lda, b, ldb, c, ldc,
                                   accumulate, tail);
}

template <ALayout Layout>
void tileGemmSimd(int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc, bool accumulate) {
  // Long products run in slices of k so that a B panel (kSlice x kPanel)
  // stays in L1 while every row block of A passes over it.
  constexpr int64_t kSlice = TXRT_TILE_K_SLICE;
  if (k > kSlice) {
    for (int64_t p = 0; p < k; p += kSlice) {
      const float *aSlice = a + (Layout == ALayout::ColumnMajor ? p * lda : p);
      tileGemmSimd<Layout>(m, n, std::min(kSlice, k - p), alpha, aSlice, lda,
                           b + p * ldb, ldb, c, ldc, accumulate || p > 0);
    }
    return;
  }
  for (int64_t j = 0; j < n; j += kPanel) {
    const int64_t width = std::min(n - j, kPanel);
    const int vectors = int((width + kLanes - 1) / kLanes);
    const int64_t lastLanes = width - int64_t(vectors - 1) * kLanes;
    panel<Layout>(vectors, lastLanes < kLanes, m, k, alpha, a, lda, b + j, ldb,
                  c + j, ldc, accumulate, Simd::tail(lastLanes));
  }
}

#endif // TXRT_HAS_SIMD

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
#if TXRT_HAS_SIMD
  if (layout == ALayout::ColumnMajor)
    tileGemmSimd<ALayout::ColumnMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc,
                                       accumulate);
  else
    tileGemmSimd<ALayout::RowMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc,
                                    accumulate);
#else
  tileGemmPortable(m, n, k, alpha, a, lda, layout, b, ldb, c, ldc, accumulate);
#endif
}

#if defined(__AVX512F__)
// GCC 12 reports its own _mm512_undefined_ps() (inside the unpack and
// shuffle intrinsics) as maybe-uninitialized here; it is not.
#pragma GCC diagnostic push
#ifndef __clang__ // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
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
#elif TXRT_HAS_SIMD
namespace {

/// Transposes the block src[0..rows) x [0..cols) (rows, cols <= 8) into dst
/// with the classic 8 x 8 AVX sequence (32-bit unpacks, 64-bit shuffles,
/// 128-bit lane permutes); partial blocks load and store through lane masks.
void transposeBlock8(int64_t rows, int64_t cols, const float *src, int64_t lds,
                     float *dst, int64_t ldd) {
  const bool whole = rows == 8 && cols == 8;
  const Simd::Tail colMask = Simd::tail(cols), rowMask = Simd::tail(rows);
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i)
    r[i] = whole ? Simd::load(src + i * lds)
           : i < rows ? Simd::load(src + i * lds, colMask)
                      : Simd::zero();
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    u[4 * k] =
        _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 1] =
        _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * k + 2] =
        _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 3] =
        _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // u[j] (rows 0-3) and u[4 + j] (rows 4-7), 128-bit lane L: column 4L + j.
  for (int j = 0; j < 4; ++j) {
    const __m256 low = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    const __m256 high = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    const __m256 columns[2] = {low, high};
    for (int lane = 0; lane < 2; ++lane) {
      const int column = 4 * lane + j;
      if (whole)
        Simd::store(dst + column * ldd, columns[lane]);
      else if (column < cols)
        Simd::store(dst + column * ldd, rowMask, columns[lane]);
    }
  }
}

} // namespace
#endif

void txrt::transposeTile(int64_t rows, int64_t cols, const float *src,
                         int64_t lds, float *dst, int64_t ldd) {
#if TXRT_HAS_SIMD
  constexpr int64_t kBlock = Simd::kLanes;
#else
  constexpr int64_t kBlock = 16;
#endif
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
#elif TXRT_HAS_SIMD
      transposeBlock8(iEnd - i0, jEnd - j0, src + i0 * lds + j0, lds,
                      dst + j0 * ldd + i0, ldd);
#else
      for (int64_t i = i0; i < iEnd; ++i)
        for (int64_t j = j0; j < jEnd; ++j)
          dst[j * ldd + i] = src[i * lds + j];
#endif
    }
  }
}

//===----------------------------------------------------------------------===//
// bf16 block products
//===----------------------------------------------------------------------===//
//
// Both paths visit k in slices of kBf16Slice and n in panels of kBf16Panel:
// the B panel [slice x panel] is rounded once and every row strip of A runs
// over it. The native path rounds a chunk of up to 96 rows of A once per
// slice into broadcastable pairs (vcvtne2ps2bf16: 32 floats of a row-major
// row, or two columns of 16 rows of a column-major A interleaved), packs
// each B panel as vdpbf16ps reads it (32-bit pairs: rows 2q and 2q + 1 of
// a column side by side, a zero past an odd k; zero columns past n), and
// runs a 6 x 64 register tile (24 zmm accumulators). The other path
// rounds the panel and 32-row chunks of A into f32 copies and calls
// tileGemm on them.

namespace {

constexpr int64_t kBf16Slice = 128; // k per slice (even)
constexpr int64_t kBf16Panel = 64;  // columns per panel
constexpr int64_t kBf16Rows = 6;    // rows per native strip
constexpr int64_t kPortableRows = 32;

/// A(i, p) of an A operand in `layout`.
inline float elementOfA(const float *a, int64_t lda, ALayout layout, int64_t i,
                        int64_t p) {
  return layout == ALayout::ColumnMajor ? a[i + p * lda] : a[i * lda + p];
}

void tileGemmBf16Portable(int64_t m, int64_t n, int64_t k, float alpha,
                          const float *a, int64_t lda, ALayout layout,
                          const float *b, int64_t ldb, float *c, int64_t ldc,
                          bool accumulate) {
  alignas(64) float bRounded[kBf16Slice * kBf16Panel];
  alignas(64) float aRounded[kPortableRows * kBf16Slice];
  for (int64_t p0 = 0; p0 < k; p0 += kBf16Slice) {
    const int64_t depth = std::min(kBf16Slice, k - p0);
    for (int64_t j0 = 0; j0 < n; j0 += kBf16Panel) {
      const int64_t width = std::min(kBf16Panel, n - j0);
      for (int64_t p = 0; p < depth; ++p) {
        const float *from = b + (p0 + p) * ldb + j0;
        float *to = bRounded + p * kBf16Panel;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j)
          to[j] = widenBf16(roundToBf16(from[j]));
      }
      for (int64_t i0 = 0; i0 < m; i0 += kPortableRows) {
        const int64_t rows = std::min(kPortableRows, m - i0);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t p = 0; p < depth; ++p)
            aRounded[i * depth + p] = widenBf16(
                roundToBf16(elementOfA(a, lda, layout, i0 + i, p0 + p)));
        tileGemm(rows, width, depth, alpha, aRounded, depth, ALayout::RowMajor,
                 bRounded, kBf16Panel, c + i0 * ldc + j0, ldc,
                 accumulate || p0 > 0);
      }
    }
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TXRT_BF16_TARGET                                                       \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/// Interleaves the 16 bf16 of each half of v: [e0..e15, o0..o15] ->
/// [e0, o0, e1, o1, ...], the pairs (x(2q), x(2q + 1)) as vdpbf16ps reads
/// them (the even element in the low half of each 32-bit lane).
TXRT_BF16_TARGET inline __m512i interleavePairs(__m512i v) {
  const __m512i index = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11,
                                         26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(index, v);
}

/// The lanes [0, n) of a 16-lane mask (n clamped to [0, 16]).
inline __mmask16 lanes(int64_t n) {
  return n >= 16  ? __mmask16(0xffff)
         : n <= 0 ? __mmask16(0)
                  : __mmask16((1u << n) - 1u);
}

/// Rounds B rows [2q, 2q + 2) of a panel into pairs: out[j] = (b(2q, j),
/// b(2q + 1, j)) for j < width, zero past it (and for a missing odd row).
TXRT_BF16_TARGET void packPairRows(const float *even, const float *odd,
                                   int64_t width, uint32_t *out) {
  for (int64_t j = 0; j < kBf16Panel; j += 16) {
    const __mmask16 mask = lanes(width - j);
    const __m512 e = _mm512_maskz_loadu_ps(mask, even + j);
    const __m512 o =
        odd ? _mm512_maskz_loadu_ps(mask, odd + j) : _mm512_setzero_ps();
    _mm512_storeu_si512(out + j,
                        interleavePairs((__m512i)_mm512_cvtne2ps_pbh(o, e)));
  }
}

/// The pairs of A rows [0, rows) over k = [0, depth): row-major A gives a
/// row's pairs from 32 consecutive floats (stored row by row: pair q of row
/// i at out[i * rowStride + q]); column-major A gives a pair of k's
/// elements for 16 rows from two columns (stored by pair: at
/// out[q * pairStride + i]).
TXRT_BF16_TARGET void packA(int64_t rows, int64_t depth, const float *a,
                            int64_t lda, ALayout layout, uint32_t *out,
                            int64_t rowStride, int64_t pairStride) {
  if (layout == ALayout::RowMajor) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t p = 0; p < depth; p += 32) {
        const float *from = a + i * lda + p;
        const __m512 low = _mm512_maskz_loadu_ps(lanes(depth - p), from);
        const __m512 high =
            _mm512_maskz_loadu_ps(lanes(depth - p - 16), from + 16);
        _mm512_mask_storeu_epi32(out + i * rowStride + p / 2,
                                 lanes((depth - p + 1) / 2),
                                 (__m512i)_mm512_cvtne2ps_pbh(high, low));
      }
    return;
  }
  for (int64_t q = 0; 2 * q < depth; ++q) {
    const float *even = a + 2 * q * lda;
    const float *odd = 2 * q + 1 < depth ? even + lda : nullptr;
    for (int64_t i = 0; i < rows; i += 16) {
      const __mmask16 mask = lanes(rows - i);
      const __m512 e = _mm512_maskz_loadu_ps(mask, even + i);
      const __m512 o =
          odd ? _mm512_maskz_loadu_ps(mask, odd + i) : _mm512_setzero_ps();
      _mm512_mask_storeu_epi32(
          out + q * pairStride + i, mask,
          interleavePairs((__m512i)_mm512_cvtne2ps_pbh(o, e)));
    }
  }
}

/// C[MR x width] (+)= alpha * A . B over `pairs` pairs of k: A's pair q of
/// row i at a[q * pairStride + i * rowStride], B's packed panel.
template <int MR>
TXRT_BF16_TARGET void
bf16MicroKernel(int64_t pairs, float alpha, const uint32_t *a,
                int64_t rowStride, int64_t pairStride, const uint32_t *bPack,
                float *c, int64_t ldc, bool accumulate, int64_t width) {
  __m512 acc[MR][4];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      acc[i][v] = _mm512_setzero_ps();
  for (int64_t q = 0; q < pairs; ++q) {
    __m512i bv[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      bv[v] = _mm512_loadu_si512(bPack + q * kBf16Panel + 16 * v);
    const uint32_t *aPair = a + q * pairStride;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i av = _mm512_set1_epi32(int(aPair[i * rowStride]));
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v)
        acc[i][v] = _mm512_dpbf16_ps(acc[i][v], (__m512bh)av, (__m512bh)bv[v]);
    }
  }
  const __m512 scale = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float *cRow = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      if (16 * v >= width)
        break;
      const __mmask16 mask = lanes(width - 16 * v);
      __m512 result = _mm512_mul_ps(acc[i][v], scale);
      if (accumulate)
        result =
            _mm512_add_ps(result, _mm512_maskz_loadu_ps(mask, cRow + 16 * v));
      _mm512_mask_storeu_ps(cRow + 16 * v, mask, result);
    }
  }
}

TXRT_BF16_TARGET void tileGemmBf16Native(int64_t m, int64_t n, int64_t k,
                                         float alpha, const float *a,
                                         int64_t lda, ALayout layout,
                                         const float *b, int64_t ldb, float *c,
                                         int64_t ldc, bool accumulate) {
  // A is packed once per slice of k and chunk of rows, B once per panel.
  constexpr int64_t kChunkRows = 96;
  constexpr int64_t kPairs = kBf16Slice / 2;
  alignas(64) uint32_t bPack[kPairs * kBf16Panel];
  alignas(64) uint32_t aPack[kPairs * kChunkRows];
  for (int64_t p0 = 0; p0 < k; p0 += kBf16Slice) {
    const int64_t depth = std::min(kBf16Slice, k - p0);
    const int64_t pairs = (depth + 1) / 2;
    const bool into = accumulate || p0 > 0;
    for (int64_t r0 = 0; r0 < m; r0 += kChunkRows) {
      const int64_t chunk = std::min(kChunkRows, m - r0);
      const bool rowMajor = layout == ALayout::RowMajor;
      const int64_t rowStride = rowMajor ? kPairs : 1;
      const int64_t pairStride = rowMajor ? 1 : kChunkRows;
      packA(chunk, depth, rowMajor ? a + r0 * lda + p0 : a + r0 + p0 * lda, lda,
            layout, aPack, rowStride, pairStride);
      for (int64_t j0 = 0; j0 < n; j0 += kBf16Panel) {
        const int64_t width = std::min(kBf16Panel, n - j0);
        for (int64_t q = 0; q < pairs; ++q) {
          const float *even = b + (p0 + 2 * q) * ldb + j0;
          packPairRows(even, 2 * q + 1 < depth ? even + ldb : nullptr, width,
                       bPack + q * kBf16Panel);
        }
        for (int64_t i0 = 0; i0 < chunk; i0 += kBf16Rows) {
          const int64_t rows = std::min(kBf16Rows, chunk - i0);
          const uint32_t *aStrip = aPack + i0 * rowStride;
          float *cStrip = c + (r0 + i0) * ldc + j0;
          switch (rows) {
#define TXRT_BF16_ROWS(R)                                                      \
  case R:                                                                      \
    bf16MicroKernel<R>(pairs, alpha, aStrip, rowStride, pairStride, bPack,     \
                       cStrip, ldc, into, width);                              \
    break;
            TXRT_BF16_ROWS(6)
            TXRT_BF16_ROWS(5)
            TXRT_BF16_ROWS(4)
            TXRT_BF16_ROWS(3)
            TXRT_BF16_ROWS(2)
            TXRT_BF16_ROWS(1)
#undef TXRT_BF16_ROWS
          default:
            break;
          }
        }
      }
    }
  }
}

bool cpuHasAvx512Bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
#define TXRT_HAS_BF16_PRODUCTS 1
#else
#define TXRT_HAS_BF16_PRODUCTS 0
bool cpuHasAvx512Bf16() { return false; }
#endif

std::atomic<bool> &nativeBf16Flag() {
  static std::atomic<bool> flag(cpuHasAvx512Bf16());
  return flag;
}

} // namespace

bool txrt::nativeBf16Products() {
  return nativeBf16Flag().load(std::memory_order_relaxed);
}

void txrt::useNativeBf16Products(bool enabled) {
  nativeBf16Flag().store(enabled && cpuHasAvx512Bf16(),
                         std::memory_order_relaxed);
}

void txrt::tileGemmBf16(int64_t m, int64_t n, int64_t k, float alpha,
                        const float *a, int64_t lda, ALayout layout,
                        const float *b, int64_t ldb, float *c, int64_t ldc,
                        bool accumulate) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    tileGemm(m, n, 0, alpha, a, lda, layout, b, ldb, c, ldc, accumulate);
    return;
  }
#if TXRT_HAS_BF16_PRODUCTS
  if (nativeBf16Products())
    return tileGemmBf16Native(m, n, k, alpha, a, lda, layout, b, ldb, c, ldc,
                              accumulate);
#endif
  tileGemmBf16Portable(m, n, k, alpha, a, lda, layout, b, ldb, c, ldc,
                       accumulate);
}
