//===- Bf16NormTest.cpp - norms that also write their output in bf16 ------===//
//
// txrt_add_layer_norm_fwd_bf16 and txrt_rms_norm_fwd_bf16 (--precision=bf16:
// the norm writes the bf16 copy its bf16 readers need, instead of a
// separate txrt_cast_f32_to_bf16 pass): the f32 output is bit for bit the
// plain kernel's, and the bf16 output bit for bit the cast of it. Row
// lengths cover the vector bodies and the scalar tails. roundRowToBf16, the
// row rounding they share, against bit patterns (ties, NaN, infinity,
// denormals); this file is compiled with the runtime's -march so that the
// helper runs the vector path the kernels run (AVX-512, AVX2 or portable,
// per TXRT_ARCH). Nothing here needs bf16 instructions.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "Bf16Round.h"

#include <cstring>

using namespace txrt_test;

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// The cast the separate tx.cast pass ran: the reference for the copies.
std::vector<txrt_bf16> castOf(txrt_context *ctx, const Floats &values) {
  std::vector<txrt_bf16> out(values.size());
  EXPECT_EQ(txrt_cast_f32_to_bf16(ctx, values.size(), values.data(),
                                  out.data()),
            TXRT_OK)
      << txrt_last_error(ctx);
  return out;
}

class Bf16NormTest : public RuntimeTest,
                     public ::testing::WithParamInterface<int64_t> {};

TEST_P(Bf16NormTest, AddLayerNormCopyIsTheCastOfItsOutput) {
  const int64_t rows = 7, cols = GetParam();
  Floats x = randomFloats(rows * cols, 1, -3.0f, 3.0f);
  Floats r = randomFloats(rows * cols, 2);
  Floats gamma = randomFloats(cols, 3, 0.5f, 1.5f);
  Floats beta = randomFloats(cols, 4);
  Floats y(rows * cols), sum(rows * cols), mean(rows), var(rows);
  expectOk(txrt_add_layer_norm_fwd(ctx_, 0, rows, cols, x.data(), r.data(),
                                   gamma.data(), beta.data(), 1e-5f, y.data(),
                                   sum.data(), mean.data(), var.data()));
  Floats y2(rows * cols), sum2(rows * cols), mean2(rows), var2(rows);
  std::vector<txrt_bf16> copy(rows * cols);
  expectOk(txrt_add_layer_norm_fwd_bf16(
      ctx_, 1, rows, cols, x.data(), r.data(), gamma.data(), beta.data(),
      1e-5f, y2.data(), sum2.data(), mean2.data(), var2.data(), copy.data()));
  EXPECT_EQ(y, y2);
  EXPECT_EQ(sum, sum2);
  EXPECT_EQ(mean, mean2);
  EXPECT_EQ(var, var2);
  EXPECT_EQ(copy, castOf(ctx_, y));

  // Without a shift, without saved statistics, in place over x.
  Floats inPlace = x;
  expectOk(txrt_add_layer_norm_fwd(ctx_, 2, rows, cols, x.data(), r.data(),
                                   gamma.data(), nullptr, 1e-5f, y.data(),
                                   nullptr, nullptr, nullptr));
  expectOk(txrt_add_layer_norm_fwd_bf16(
      ctx_, 3, rows, cols, inPlace.data(), r.data(), gamma.data(), nullptr,
      1e-5f, inPlace.data(), nullptr, nullptr, nullptr, copy.data()));
  EXPECT_EQ(y, inPlace);
  EXPECT_EQ(copy, castOf(ctx_, y));
}

TEST_P(Bf16NormTest, RmsNormCopyIsTheCastOfItsOutput) {
  const int64_t rows = 5, cols = GetParam();
  Floats x = randomFloats(rows * cols, 5, -2.0f, 2.0f);
  Floats r = randomFloats(rows * cols, 6);
  Floats gamma = randomFloats(cols, 7, 0.5f, 1.5f);
  for (bool residual : {false, true}) {
    const float *rp = residual ? r.data() : nullptr;
    Floats y(rows * cols), sum(rows * cols);
    expectOk(txrt_rms_norm_fwd(ctx_, 0, rows, cols, x.data(), rp,
                               gamma.data(), 1e-6f, y.data(),
                               residual ? sum.data() : nullptr));
    Floats y2(rows * cols), sum2(rows * cols);
    std::vector<txrt_bf16> copy(rows * cols);
    expectOk(txrt_rms_norm_fwd_bf16(ctx_, 1, rows, cols, x.data(), rp,
                                    gamma.data(), 1e-6f, y2.data(),
                                    residual ? sum2.data() : nullptr,
                                    copy.data()));
    EXPECT_EQ(y, y2) << "residual " << residual;
    EXPECT_EQ(sum, sum2) << "residual " << residual;
    EXPECT_EQ(copy, castOf(ctx_, y)) << "residual " << residual;
  }
}

// 512: whole vectors only; 37 and 3: scalar tails (and no vector body).
INSTANTIATE_TEST_SUITE_P(Widths, Bf16NormTest,
                         ::testing::Values(int64_t(512), int64_t(37),
                                           int64_t(3)));

class Bf16NormErrorTest : public RuntimeTest {};

TEST_F(Bf16NormErrorTest, NullCopyIsAnError) {
  Floats x(8, 1.0f), gamma(4, 1.0f), y(8);
  EXPECT_EQ(txrt_add_layer_norm_fwd_bf16(ctx_, 0, 2, 4, x.data(), x.data(),
                                         gamma.data(), nullptr, 1e-5f,
                                         y.data(), nullptr, nullptr, nullptr,
                                         nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("y_bf16"),
            std::string::npos);
  EXPECT_EQ(txrt_rms_norm_fwd_bf16(ctx_, 0, 2, 4, x.data(), nullptr,
                                   gamma.data(), 1e-6f, y.data(), nullptr,
                                   nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("y_bf16"),
            std::string::npos);
}

TEST(Bf16RoundRow, MatchesTheBitPatterns) {
  // 37 values: two 16-lane vectors and a tail of 5, so every special value
  // also passes through the vector body.
  Floats in = {1.0f,
               fromBits(0x3f808000u), // halfway, even below: down
               fromBits(0x3f818000u), // halfway, odd below: up
               fromBits(0x3f808001u), // above halfway: up
               -2.5f,
               fromBits(0x7f7fffffu), // FLT_MAX rounds to infinity
               INFINITY,
               -INFINITY,
               -0.0f,
               fromBits(0x00000001u), // the smallest denormal: to +0
               fromBits(0x00018000u), // a denormal halfway, odd: up
               fromBits(0x7f800001u), // a signalling NaN: quiet
               fromBits(0xffc00000u)}; // a negative quiet NaN
  std::vector<txrt_bf16> expected = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xc020,
                                     0x7f80, 0x7f80, 0xff80, 0x8000, 0x0000,
                                     0x0002, 0x7fc0, 0xffc0};
  const size_t special = in.size();
  for (size_t i = 0; in.size() < 37; ++i) {
    in.push_back(in[i % special]);
    expected.push_back(expected[i % special]);
  }
  std::vector<txrt_bf16> out(in.size());
  txrt::roundRowToBf16(int64_t(in.size()), in.data(), out.data());
  EXPECT_EQ(out, expected);
  std::vector<txrt_bf16> library(in.size());
  txrt_round_to_bf16(int64_t(in.size()), in.data(), library.data());
  EXPECT_EQ(library, expected);
}

} // namespace
