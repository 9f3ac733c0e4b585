//===- Bf16Test.cpp - bf16 casts, bf16 linears, the CPU check -------------===//
//
// The casts against hand-computed bit patterns (round to nearest even, NaN,
// infinity, overflow), and txrt_linear_fwd_bf16, _gated_fwd_bf16 and
// _bwd_bf16 against a naive
// double-precision product of the bf16-rounded operands: what remains is
// f32 accumulation error only. txrt_adam_step_bf16's copy against the
// rounded master weights, bit for bit (no bf16 instructions needed).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace txrt_test;

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

class Bf16Test : public RuntimeTest {
protected:
  void SetUp() override {
    if (!txrt_cpu_has_bf16())
      GTEST_SKIP() << "this CPU has neither avx512_bf16 nor amx_bf16";
  }

  /// The values rounded through bf16 (txrt_cast_*), and their bf16 bits.
  std::vector<txrt_bf16> toBf16(const Floats &values) {
    std::vector<txrt_bf16> out(values.size());
    expectOk(txrt_cast_f32_to_bf16(ctx_, values.size(), values.data(),
                                   out.data()));
    return out;
  }
  Floats toF32(const std::vector<txrt_bf16> &values) {
    Floats out(values.size());
    expectOk(txrt_cast_bf16_to_f32(ctx_, values.size(), values.data(),
                                   out.data()));
    return out;
  }
};

TEST_F(Bf16Test, CastRoundsToNearestEven) {
  Floats in = {1.0f,
               fromBits(0x3f808000u), // halfway, even below: down
               fromBits(0x3f818000u), // halfway, odd below: up
               fromBits(0x3f808001u), // above halfway: up
               -2.5f,
               fromBits(0x7f7fffffu), // FLT_MAX rounds to infinity
               INFINITY,
               -0.0f,
               fromBits(0x00000001u)}; // the smallest denormal: to +0
  std::vector<txrt_bf16> expected = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xc020,
                                     0x7f80, 0x7f80, 0x8000, 0x0000};
  EXPECT_EQ(toBf16(in), expected);
  std::vector<txrt_bf16> nan = toBf16({NAN});
  EXPECT_TRUE(std::isnan(toF32(nan)[0]));
}

TEST_F(Bf16Test, WideningIsExact) {
  std::vector<txrt_bf16> bits = {0x3f80, 0xc020, 0x7f80, 0x0001, 0x4049};
  Floats out = toF32(bits);
  for (size_t i = 0; i < bits.size(); ++i)
    EXPECT_EQ(fromBits(uint32_t(bits[i]) << 16), out[i]) << i;
}

/// y = act(x · wᵀ + bias) + residual over the bf16-rounded x and w.
Doubles linearReference(const Floats &x, const Floats &w, const Floats &bias,
                        const Floats &residual, int64_t m, int64_t n,
                        int64_t k, bool relu) {
  Doubles y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias.empty() ? 0.0 : bias[j];
      for (int64_t p = 0; p < k; ++p)
        sum += double(x[i * k + p]) * w[j * k + p];
      if (relu && sum < 0)
        sum = 0;
      y[i * n + j] = sum + (residual.empty() ? 0.0 : residual[i * n + j]);
    }
  return y;
}

TEST_F(Bf16Test, LinearForwardAccumulatesInF32) {
  const int64_t m = 37, n = 48, k = 96;
  std::vector<txrt_bf16> x = toBf16(randomFloats(m * k, 1));
  std::vector<txrt_bf16> w = toBf16(randomFloats(n * k, 2));
  Floats bias = randomFloats(n, 3), residual = randomFloats(m * n, 4);
  Floats y(m * n);
  expectOk(txrt_linear_fwd_bf16(ctx_, 1, m, n, k, x.data(), w.data(),
                                bias.data(), TXRT_ACTIVATION_RELU,
                                residual.data(), y.data()));
  expectClose(y, linearReference(toF32(x), toF32(w), bias, residual, m, n, k,
                                 true),
              1e-4, 1e-4, "y");
  expectOk(txrt_linear_fwd_bf16(ctx_, 2, m, n, k, x.data(), w.data(),
                                nullptr, TXRT_ACTIVATION_NONE, nullptr,
                                y.data()));
  expectClose(y, linearReference(toF32(x), toF32(w), {}, {}, m, n, k, false),
              1e-4, 1e-4, "y without epilogue");
}

TEST_F(Bf16Test, GatedLinearForwardRunsTheEpilogueInF32) {
  // y = silu(x · wᵀ + bias) * gate + residual: SwiGLU's gated half.
  const int64_t m = 21, n = 40, k = 72;
  std::vector<txrt_bf16> x = toBf16(randomFloats(m * k, 11));
  std::vector<txrt_bf16> w = toBf16(randomFloats(n * k, 12));
  Floats bias = randomFloats(n, 13), gate = randomFloats(m * n, 14),
         residual = randomFloats(m * n, 15);
  Doubles pre = linearReference(toF32(x), toF32(w), bias, {}, m, n, k, false);
  Doubles expected(m * n), expectedNoResidual(m * n);
  for (int64_t i = 0; i < m * n; ++i) {
    double silu = pre[i] / (1.0 + std::exp(-pre[i]));
    expectedNoResidual[i] = silu * gate[i];
    expected[i] = expectedNoResidual[i] + residual[i];
  }
  Floats y(m * n);
  expectOk(txrt_linear_gated_fwd_bf16(ctx_, 5, m, n, k, x.data(), w.data(),
                                      bias.data(), TXRT_ACTIVATION_SILU,
                                      gate.data(), residual.data(), y.data()));
  expectClose(y, expected, 1e-4, 1e-4, "y");
  // The residual accumulated in place, as the f32 kernel allows.
  Floats acc = residual;
  expectOk(txrt_linear_gated_fwd_bf16(ctx_, 6, m, n, k, x.data(), w.data(),
                                      bias.data(), TXRT_ACTIVATION_SILU,
                                      gate.data(), acc.data(), acc.data()));
  expectClose(acc, expected, 1e-4, 1e-4, "y accumulated into the residual");
  expectOk(txrt_linear_gated_fwd_bf16(ctx_, 7, m, n, k, x.data(), w.data(),
                                      bias.data(), TXRT_ACTIVATION_SILU,
                                      gate.data(), nullptr, y.data()));
  expectClose(y, expectedNoResidual, 1e-4, 1e-4, "y without residual");
  // The same values as the f32 kernel on the widened operands.
  Floats yF32(m * n);
  Floats xf = toF32(x), wf = toF32(w);
  expectOk(txrt_linear_gated_fwd(ctx_, 8, m, n, k, xf.data(), wf.data(),
                                 bias.data(), TXRT_ACTIVATION_SILU,
                                 gate.data(), nullptr, yF32.data()));
  expectClose(y, Doubles(yF32.begin(), yF32.end()), 1e-5, 1e-5,
              "y against txrt_linear_gated_fwd");
}

TEST_F(Bf16Test, GatedLinearWithoutGateOrOntoItIsAnError) {
  std::vector<txrt_bf16> x(4, 0x3f80), w(4, 0x3f80);
  Floats y(4);
  EXPECT_EQ(txrt_linear_gated_fwd_bf16(ctx_, 9, 2, 2, 2, x.data(), w.data(),
                                       nullptr, TXRT_ACTIVATION_SILU, nullptr,
                                       nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("gate is NULL"),
            std::string::npos);
  EXPECT_EQ(txrt_linear_gated_fwd_bf16(ctx_, 9, 2, 2, 2, x.data(), w.data(),
                                       nullptr, TXRT_ACTIVATION_SILU, y.data(),
                                       nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(Bf16Test, LinearBackwardRoundsDyOnce) {
  const int64_t m = 29, n = 40, k = 24;
  std::vector<txrt_bf16> x = toBf16(randomFloats(m * k, 5));
  std::vector<txrt_bf16> w = toBf16(randomFloats(n * k, 6));
  Floats dy = randomFloats(m * n, 7);
  Floats dyRounded = toF32(toBf16(dy)), xf = toF32(x), wf = toF32(w);
  Floats dx(m * k, 0.5f), dw(n * k, 0.25f), db(n, 1.0f);
  expectOk(txrt_linear_bwd_bf16(ctx_, 3, m, n, k, x.data(), w.data(),
                                dy.data(), dx.data(), dw.data(), db.data(),
                                /*accumulate_dx=*/1,
                                /*accumulate_params=*/0));
  Doubles dxRef(m * k, 0.5), dwRef(n * k), dbRef(n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double g = dyRounded[i * n + j];
      dbRef[j] += dy[i * n + j];
      for (int64_t p = 0; p < k; ++p) {
        dxRef[i * k + p] += g * wf[j * k + p];
        dwRef[j * k + p] += g * xf[i * k + p];
      }
    }
  expectClose(dx, dxRef, 1e-4, 1e-4, "dx");
  expectClose(dw, dwRef, 1e-4, 1e-4, "dw");
  expectClose(db, dbRef, 1e-5, 1e-5, "dbias (from the f32 dy)");
}

TEST_F(Bf16Test, NullOperandIsAnError) {
  Floats y(4);
  EXPECT_EQ(txrt_linear_fwd_bf16(ctx_, 4, 2, 2, 2, nullptr, nullptr, nullptr,
                                 TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("x is NULL"),
            std::string::npos);
}

/// The bf16 bits of `values` as txrt_round_to_bf16 rounds them.
std::vector<txrt_bf16> rounded(const Floats &values) {
  std::vector<txrt_bf16> out(values.size());
  txrt_round_to_bf16(int64_t(values.size()), values.data(), out.data());
  return out;
}

class Bf16AdamTest : public RuntimeTest {};

TEST_F(Bf16AdamTest, CopyIsTheRoundedMasterWeightAfterEveryStep) {
  const int64_t n = 40001; // above the parallel threshold
  Floats param = randomFloats(n, 3), m(n, 0.0f), v(n, 0.0f);
  Floats twin = param, twinM = m, twinV = v; // txrt_adam_step's run
  std::vector<txrt_bf16> copy(n, 0);
  const float scale = 0.5f;
  for (int64_t step = 1; step <= 3; ++step) {
    Floats grad = randomFloats(n, uint32_t(40 + step));
    txrt_context_set_train_state(ctx_, step, 0);
    expectOk(txrt_adam_step_bf16(ctx_, 1, n, param.data(), grad.data(),
                                 m.data(), v.data(), &scale, TXRT_LR_NOAM,
                                 2.0f, 64.0f, 100.0f, 0.9f, 0.98f, 1e-9f,
                                 0.01f, copy.data()));
    expectOk(txrt_adam_step(ctx_, 2, n, twin.data(), grad.data(),
                            twinM.data(), twinV.data(), &scale, TXRT_LR_NOAM,
                            2.0f, 64.0f, 100.0f, 0.9f, 0.98f, 1e-9f, 0.01f));
    // The copy is the updated master weight rounded to nearest even, bit
    // for bit.
    ASSERT_EQ(copy, rounded(param)) << "step " << step;
  }
  // The f32 update is txrt_adam_step's (up to the compiler's contraction of
  // the two loops into fused multiply-adds).
  expectClose(param, toDoubles(twin), 1e-6, 1e-6, "param");
  expectClose(m, toDoubles(twinM), 1e-6, 1e-6, "m");
  // The context-free rounding is txrt_cast_f32_to_bf16's.
  std::vector<txrt_bf16> cast(n);
  expectOk(txrt_cast_f32_to_bf16(ctx_, n, param.data(), cast.data()));
  EXPECT_EQ(copy, cast);
}

TEST_F(Bf16AdamTest, AccumulatedGradientsWriteTheCopyWhenApplied) {
  const int64_t n = 1000;
  Floats param = randomFloats(n, 5), m(n, 0.0f), v(n, 0.0f);
  Floats grad = randomFloats(n, 6);
  std::vector<txrt_bf16> copy(n, 0), before = rounded(param);
  std::fill(copy.begin(), copy.end(), before[0] ^ 1u);
  txrt_context_set_train_state(ctx_, 1, 0);
  auto step = [&] {
    expectOk(txrt_adam_step_bf16(ctx_, 1, n, param.data(), grad.data(),
                                 m.data(), v.data(), nullptr,
                                 TXRT_LR_CONSTANT, 1e-2f, 0, 0, 0.9f, 0.98f,
                                 1e-9f, 0.0f, copy.data()));
  };
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_ACCUMULATE,
                                           0.5f),
            TXRT_OK);
  step();
  EXPECT_EQ(copy[0], txrt_bf16(before[0] ^ 1u)) << "no update, no copy yet";
  ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, TXRT_GRADIENTS_APPLY, 0.5f),
            TXRT_OK);
  step();
  EXPECT_EQ(copy, rounded(param));
  EXPECT_NE(copy, before) << "the update moved the weights";
}

TEST_F(Bf16AdamTest, NullCopyIsAnError) {
  float p = 0, g = 0, m = 0, v = 0;
  txrt_context_set_train_state(ctx_, 1, 0);
  EXPECT_EQ(txrt_adam_step_bf16(ctx_, 1, 1, &p, &g, &m, &v, nullptr,
                                TXRT_LR_CONSTANT, 1e-3f, 0, 0, 0.9f, 0.98f,
                                1e-9f, 0.0f, nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("param_bf16 is NULL"),
            std::string::npos);
}

TEST(Bf16CpuCheck, EnvironmentOverrideSaysNo) {
  const char *previous = std::getenv("TXRT_ASSUME_NO_BF16");
  std::string saved = previous ? previous : "";
  setenv("TXRT_ASSUME_NO_BF16", "1", 1);
  EXPECT_EQ(txrt_cpu_has_bf16(), 0);
  if (previous)
    setenv("TXRT_ASSUME_NO_BF16", saved.c_str(), 1);
  else
    unsetenv("TXRT_ASSUME_NO_BF16");
}

// Without bf16 hardware (oneDNN has no bf16 products on AVX2) a program
// embedding a --precision=bf16 object got "could not create a primitive
// descriptor iterator": the error says what the CPU lacks now.
TEST(Bf16WithoutHardwareTest, ProductsSayWhatTheCpuLacks) {
  if (txrt_cpu_has_bf16())
    GTEST_SKIP() << "this CPU has bf16 products";
  txrt_context *ctx = nullptr;
  ASSERT_EQ(txrt_context_create_with_threads(1, &ctx), TXRT_OK);
  const int64_t m = 4, n = 8, k = 16;
  std::vector<txrt_bf16> x(m * k, 0x3f80), w(n * k, 0x3f80);
  Floats y(m * n);
  EXPECT_EQ(txrt_linear_fwd_bf16(ctx, 1, m, n, k, x.data(), w.data(), nullptr,
                                 TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_ERROR_BACKEND);
  EXPECT_NE(std::string(txrt_last_error(ctx))
                .find("need a CPU with avx512_bf16 or amx_bf16"),
            std::string::npos)
      << txrt_last_error(ctx);
  txrt_context_destroy(ctx);
}

} // namespace
