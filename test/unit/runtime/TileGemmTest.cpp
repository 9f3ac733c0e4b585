//===- TileGemmTest.cpp - the fused kernels' block products ---------------===//
//
// tileGemm and transposeTile against naive double-precision loops, built
// with the runtime's flags (-march=native), so they check the micro-kernel
// the host runs (AVX-512: 6 x 64 tiles; AVX2: 6 x 16 tiles; or the portable
// loops): row tails (m = 1..7, 13), column tails inside and at the end of a
// panel (n = 1, 7, 9, 17, 63, 65, 100), k = 0, k past the L1 slice (600),
// both A layouts, alpha, and accumulation into C; entries of C outside the
// m x n product and past the leading dimension must stay untouched.
// tileGemmBf16 is held to the same 1e-5 against a double-precision product
// of the operands rounded to bf16 (its products are exact in f32; only the
// f32 sums round), on both of its paths: vdpbf16ps (where the CPU has
// AVX512_BF16; odd k, k past its 128-deep slices, panels of 64 columns) and
// the rounded copies through tileGemm.
//
//===----------------------------------------------------------------------===//
#include "TileGemm.h"
#include "Bf16Round.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace txrt;
using namespace txrt_test;

namespace {

constexpr float kSentinel = 12345.0f;

struct Case {
  int64_t m, n, k;
};

/// The product checked: tileGemm, or tileGemmBf16 (whose reference rounds
/// the operands to bf16 first).
enum class Product { F32, Bf16 };

double operand(float value, Product product) {
  return product == Product::Bf16 ? double(widenBf16(roundToBf16(value)))
                                  : double(value);
}

void checkProduct(const Case &s, ALayout layout, bool accumulate, float alpha,
                  Product product = Product::F32) {
  const int64_t lda = (layout == ALayout::RowMajor ? s.k : s.m) + 3;
  const int64_t aRows = layout == ALayout::RowMajor ? s.m : s.k;
  const int64_t ldb = s.n + 5, ldc = s.n + 2;
  Floats a = randomFloats(size_t(std::max<int64_t>(1, aRows * lda)), 1);
  Floats b = randomFloats(size_t(std::max<int64_t>(1, s.k * ldb)), 2);
  Floats c = randomFloats(size_t(s.m * ldc), 3);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = s.n; j < ldc; ++j)
      c[size_t(i * ldc + j)] = kSentinel;
  Doubles expected = toDoubles(c);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < s.k; ++p) {
        double av = layout == ALayout::RowMajor ? a[size_t(i * lda + p)]
                                                : a[size_t(i + p * lda)];
        sum += operand(float(av), product) *
               operand(b[size_t(p * ldb + j)], product);
      }
      double &out = expected[size_t(i * ldc + j)];
      out = alpha * sum + (accumulate ? out : 0.0);
    }
  (product == Product::Bf16 ? tileGemmBf16 : tileGemm)(
      s.m, s.n, s.k, alpha, a.data(), lda, layout, b.data(), ldb, c.data(), ldc,
      accumulate);
  std::string what =
      std::string(product == Product::Bf16 ? "bf16 " : "") +
      "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
      " k=" + std::to_string(s.k) +
      (layout == ALayout::RowMajor ? " row-major" : " col-major") +
      (accumulate ? " accumulate" : "");
  expectClose(c, expected, 1e-5, 1e-5, what);
}

TEST(TileGemmTest, MatchesNaiveProductOverTails) {
  for (Case s : {Case{1, 1, 1}, Case{6, 16, 64}, Case{7, 7, 7}, Case{13, 9, 5},
                 Case{5, 17, 33}, Case{2, 63, 64}, Case{4, 65, 3},
                 Case{3, 100, 17}, Case{13, 64, 64}, Case{1, 8, 2}})
    for (ALayout layout : {ALayout::RowMajor, ALayout::ColumnMajor})
      for (bool accumulate : {false, true})
        checkProduct(s, layout, accumulate, accumulate ? 0.5f : 1.0f);
}

TEST(TileGemmTest, LongProductsRunInSlices) {
  for (ALayout layout : {ALayout::RowMajor, ALayout::ColumnMajor}) {
    checkProduct({7, 65, 600}, layout, false, 0.125f);
    checkProduct({6, 16, 1100}, layout, true, 1.0f);
  }
}

TEST(TileGemmTest, EmptyProductScalesOrClears) {
  // k = 0: C = 0 (or C unchanged when accumulating); m = 0 / n = 0: nothing.
  checkProduct({5, 19, 0}, ALayout::RowMajor, false, 1.0f);
  checkProduct({5, 19, 0}, ALayout::ColumnMajor, true, 1.0f);
  float c = kSentinel;
  tileGemm(0, 4, 4, 1.0f, nullptr, 4, ALayout::RowMajor, nullptr, 4, &c, 4,
           false);
  tileGemm(4, 0, 4, 1.0f, nullptr, 4, ALayout::RowMajor, nullptr, 4, &c, 4,
           false);
  EXPECT_EQ(c, kSentinel);
}

void checkBf16Products() {
  for (Case s : {Case{1, 1, 1}, Case{6, 16, 64}, Case{7, 7, 7}, Case{13, 9, 5},
                 Case{5, 17, 33}, Case{2, 63, 64}, Case{4, 65, 3},
                 Case{3, 100, 17}, Case{13, 64, 64}, Case{1, 8, 2},
                 Case{7, 65, 301}, Case{40, 130, 129}, Case{5, 19, 0}})
    for (ALayout layout : {ALayout::RowMajor, ALayout::ColumnMajor})
      for (bool accumulate : {false, true})
        checkProduct(s, layout, accumulate, accumulate ? 0.5f : 1.0f,
                     Product::Bf16);
}

TEST(TileGemmTest, Bf16ProductsWithDotProductInstructions) {
  if (!nativeBf16Products())
    GTEST_SKIP() << "this CPU has no AVX512_BF16 (vdpbf16ps)";
  checkBf16Products();
}

TEST(TileGemmTest, Bf16ProductsFromRoundedCopies) {
  useNativeBf16Products(false);
  EXPECT_FALSE(nativeBf16Products());
  checkBf16Products();
  useNativeBf16Products(true);
}

TEST(TileGemmTest, Bf16ProductsRoundTheOperands) {
  // 1 + 2^-9 rounds to 1 in bf16 (8 mantissa bits), 1 + 2^-7 stays: the
  // product sees the rounded values on both paths.
  const float a[2] = {1.0f + 0x1p-9f, 1.0f + 0x1p-7f};
  const float b[2] = {1.0f + 0x1p-9f, 1.0f};
  for (bool native : {true, false}) {
    useNativeBf16Products(native);
    float c = 0.0f;
    tileGemmBf16(1, 1, 2, 1.0f, a, 2, ALayout::RowMajor, b, 1, &c, 1, false);
    EXPECT_EQ(c, 1.0f + (1.0f + 0x1p-7f)) << (native ? "native" : "copies");
  }
  useNativeBf16Products(true);
}

TEST(TileGemmTest, TransposeTileOverTails) {
  for (int64_t rows : {1, 5, 8, 9, 16, 17, 40})
    for (int64_t cols : {1, 3, 8, 15, 16, 33, 64}) {
      const int64_t lds = cols + 7, ldd = rows + 4;
      Floats src = randomFloats(size_t(rows * lds), 4);
      Floats dst(size_t(cols * ldd), kSentinel);
      transposeTile(rows, cols, src.data(), lds, dst.data(), ldd);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < ldd; ++i) {
          const float want = i < rows ? src[size_t(i * lds + j)] : kSentinel;
          ASSERT_EQ(dst[size_t(j * ldd + i)], want)
              << rows << " x " << cols << ": dst[" << j << "][" << i << "]";
        }
    }
}

} // namespace
