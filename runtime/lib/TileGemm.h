//===- TileGemm.h - register-blocked products for fused kernels -*- C++ -*-===//
//
// The block products of the fused attention kernels (a few dozen to a few
// hundred rows, k = head_dim or a key block) are too small for a oneDNN
// primitive call per tile to pay off: its dispatch and packing cost as much
// as the arithmetic. These are brgemm-style loops instead: a 6 x 64 register
// tile of accumulators, B read in place row by row, A broadcast element by
// element. Single-threaded; callers parallelise over tiles.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_TILEGEMM_H
#define TXRT_LIB_TILEGEMM_H

#include <cstdint>

namespace txrt {

/// How the A operand of tileGemm is stored.
enum class ALayout {
  /// Element (i, p) at a[i + p * lda]: columns contiguous (the fast case:
  /// one pointer, broadcasts at fixed offsets).
  ColumnMajor,
  /// Element (i, p) at a[i * lda + p]: rows contiguous.
  RowMajor,
};

/// C = alpha * A . B, or C += alpha * A . B when accumulate, for
/// C [m x n] (element (i, j) at c[i * ldc + j]), A [m x k] in `layout`, and
/// B [k x n] (element (p, j) at b[p * ldb + j]).
void tileGemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a,
              int64_t lda, ALayout layout, const float *b, int64_t ldb,
              float *c, int64_t ldc, bool accumulate);

/// tileGemm with every element of A and B rounded to bf16 (nearest, ties to
/// even, as txrt_cast_f32_to_bf16; the vdpbf16ps path flushes f32 denormals,
/// below 1.2e-38, to zero) before its product; the products are
/// exact in f32 and accumulate in f32, then alpha scales the sum as in
/// tileGemm. Operands are f32 in memory: the function rounds and packs them
/// itself (brgemm style, on the stack: per slice of 128 k, A in chunks of
/// 96 rows and B in panels of 64 columns, each rounded once with
/// vcvtne2ps2bf16 and read by a 6 x 64 register tile). Where the CPU has
/// AVX512_BF16 (checked once at run
/// time, whatever -march built the library) the products run as vdpbf16ps
/// over pairs of k; otherwise tileGemm runs on rounded copies (AVX2,
/// AVX-512 without bf16, portable). The two differ only in the order and
/// rounding of the f32 sums (and vdpbf16ps flushes denormals).
void tileGemmBf16(int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, ALayout layout, const float *b, int64_t ldb,
                  float *c, int64_t ldc, bool accumulate);

/// Whether tileGemmBf16 runs vdpbf16ps (the CPU has AVX512_BF16 and
/// useNativeBf16Products has not turned it off).
bool nativeBf16Products();

/// Tests: false makes tileGemmBf16 take the path of CPUs without
/// AVX512_BF16 (rounded copies through tileGemm); true restores detection.
void useNativeBf16Products(bool enabled);

/// dst[j * ldd + i] = src[i * lds + j] for i < rows, j < cols.
void transposeTile(int64_t rows, int64_t cols, const float *src, int64_t lds,
                   float *dst, int64_t ldd);

} // namespace txrt

#endif // TXRT_LIB_TILEGEMM_H
