//===- PackedWeightsTest.cpp - linears on weights of a frozen range -------===//
//
// txrt_context_set_frozen_parameters: a linear whose weight lies in the
// frozen range reads a copy packed once (PackedWeights.h). The result must
// be the plain product's, at every row count, epilogue and precision; the
// copy must be made once and reused; and no copy may outlive the promise:
// freezing again, thawing, or an Adam update of a frozen weight drops them.
//
//===----------------------------------------------------------------------===//
#include "MatmulPrimitive.h"
#include "TestUtil.h"

#include <cstdlib>
#include <string>
#include <tuple>

using namespace txrt_test;

namespace {

class PackedWeightsTest : public RuntimeTest {
protected:
  void TearDown() override {
    txrt_context_set_frozen_parameters(ctx_, nullptr, 0);
  }

  static int64_t packedCount(txrt_context *ctx = ctx_) {
    int64_t count = -1;
    txrt_context_packed_weights(ctx, &count, nullptr);
    return count;
  }
  static int64_t packedBytes() {
    int64_t bytes = -1;
    txrt_context_packed_weights(ctx_, nullptr, &bytes);
    return bytes;
  }
  /// Whether oneDNN reads this linear's weights in a layout of its own
  /// (otherwise there is nothing to pack and the copies stay empty).
  static bool packs(int64_t m, int64_t n, int64_t k, bool bf16 = false) {
    txrt::MatmulSpec spec;
    spec.m = m;
    spec.n = n;
    spec.k = k;
    spec.bf16 = bf16;
    spec.aStrides = {0, 0, k, 1};
    spec.bStrides = {0, 0, 1, k};
    spec.cStrides = {0, 0, n, 1};
    spec.packedB = true;
    return txrt::MatmulPlan(*ctx_, spec).readsPackedB();
  }
  /// y = relu(x w^T + bias) + residual through txrt_linear_fwd.
  static Floats linear(int64_t site, int64_t m, int64_t n, int64_t k,
                       const Floats &x, const float *w, const Floats &bias,
                       const Floats &residual) {
    Floats y(m * n);
    expectOk(txrt_linear_fwd(ctx_, site, m, n, k, x.data(), w, bias.data(),
                             TXRT_ACTIVATION_RELU, residual.data(), y.data()));
    return y;
  }
};

TEST_F(PackedWeightsTest, FrozenWeightsGiveThePlainProduct) {
  uint32_t seed = 10;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 512, 512},
                         {8, 512, 2048},
                         {67, 96, 80},
                         {512, 2048, 512}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " k " +
                 std::to_string(k));
    // The weight sits inside a larger "arena", as a parameter does.
    Floats arena = randomFloats(size_t(n * k + 4096), seed++);
    const float *w = arena.data() + 1024;
    Floats x = randomFloats(m * k, seed++), bias = randomFloats(n, seed++),
           residual = randomFloats(m * n, seed++);
    Floats plain = linear(seed, m, n, k, x, w, bias, residual);

    txrt_context_set_frozen_parameters(ctx_, arena.data(),
                                       arena.size() * sizeof(float));
    EXPECT_EQ(packedCount(), 0);
    Floats first = linear(seed, m, n, k, x, w, bias, residual);
    const int64_t expected = packs(m, n, k) ? 1 : 0;
    EXPECT_EQ(packedCount(), expected);
    EXPECT_EQ(packedBytes() > 0, expected == 1);
    Floats again = linear(seed, m, n, k, x, w, bias, residual);
    EXPECT_EQ(packedCount(), expected) << "the copy is made once";
    expectClose(first, toDoubles(plain), 1e-6, 1e-6, "packed vs plain");
    // Nothing packed (oneDNN reads a plain layout, e.g. gemm:jit on AVX2,
    // which asks for the weights' transpose): the training forward's own
    // product, bit for bit (the transposed copy summed in another order,
    // 1e-5 apart at m = 1 on an AMD Zen 3).
    if (expected == 0)
      EXPECT_EQ(first, plain);
    EXPECT_EQ(first, again);
  }
#if defined(__x86_64__)
  // Where oneDNN runs brgemm (AVX-512), a decoding step's product packs: the
  // case this exists for must not quietly fall back.
  if (__builtin_cpu_supports("avx512f"))
    EXPECT_TRUE(packs(8, 512, 512));
#endif
}

TEST_F(PackedWeightsTest, GatedAndBf16LinearsReadTheCopyToo) {
  const int64_t m = 8, n = 256, k = 128;
  Floats arena = randomFloats(size_t(n * k), 30), x = randomFloats(m * k, 31),
         gate = randomFloats(m * n, 32), bias = randomFloats(n, 33);
  Floats plain(m * n), frozen(m * n);
  expectOk(txrt_linear_gated_fwd(ctx_, 1, m, n, k, x.data(), arena.data(),
                                 bias.data(), TXRT_ACTIVATION_SILU, gate.data(),
                                 nullptr, plain.data()));
  txrt_context_set_frozen_parameters(ctx_, arena.data(),
                                     arena.size() * sizeof(float));
  expectOk(txrt_linear_gated_fwd(ctx_, 1, m, n, k, x.data(), arena.data(),
                                 bias.data(), TXRT_ACTIVATION_SILU, gate.data(),
                                 nullptr, frozen.data()));
  EXPECT_EQ(packedCount(), packs(m, n, k) ? 1 : 0);
  expectClose(frozen, toDoubles(plain), 1e-6, 1e-6, "gated");

  if (!txrt_cpu_has_bf16())
    return;
  std::vector<txrt_bf16> xb(x.size()), wb(arena.size());
  txrt_round_to_bf16(int64_t(x.size()), x.data(), xb.data());
  txrt_round_to_bf16(int64_t(arena.size()), arena.data(), wb.data());
  txrt_context_set_frozen_parameters(ctx_, nullptr, 0);
  expectOk(txrt_linear_fwd_bf16(ctx_, 2, m, n, k, xb.data(), wb.data(),
                                bias.data(), TXRT_ACTIVATION_NONE, nullptr,
                                plain.data()));
  txrt_context_set_frozen_parameters(ctx_, wb.data(),
                                     wb.size() * sizeof(txrt_bf16));
  expectOk(txrt_linear_fwd_bf16(ctx_, 2, m, n, k, xb.data(), wb.data(),
                                bias.data(), TXRT_ACTIVATION_NONE, nullptr,
                                frozen.data()));
  EXPECT_EQ(packedCount(), packs(m, n, k, /*bf16=*/true) ? 1 : 0);
  expectClose(frozen, toDoubles(plain), 1e-6, 1e-6, "bf16");
}

TEST_F(PackedWeightsTest, WeightsOutsideTheRangeAreReadAsTheyLie) {
  const int64_t m = 8, n = 64, k = 64;
  Floats arena = randomFloats(size_t(2 * n * k), 40),
         x = randomFloats(m * k, 41), bias = randomFloats(n, 42),
         residual = randomFloats(m * n, 43);
  Floats plain =
      linear(3, m, n, k, x, arena.data() + n * k / 2, bias, residual);
  // The range ends inside the weight: not covered.
  txrt_context_set_frozen_parameters(ctx_, arena.data(),
                                     size_t(n * k) * sizeof(float));
  Floats straddling =
      linear(3, m, n, k, x, arena.data() + n * k / 2, bias, residual);
  EXPECT_EQ(packedCount(), 0);
  EXPECT_EQ(straddling, plain);
}

TEST_F(PackedWeightsTest, NoCopyOutlivesThePromise) {
  const int64_t m = 8, n = 512, k = 512;
  Floats w = randomFloats(n * k, 50), x = randomFloats(m * k, 51),
         bias = randomFloats(n, 52), residual = randomFloats(m * n, 53);
  const bool packing = packs(m, n, k);
  txrt_context_set_frozen_parameters(ctx_, w.data(), w.size() * sizeof(float));
  linear(4, m, n, k, x, w.data(), bias, residual);
  EXPECT_EQ(packedCount(), packing ? 1 : 0);

  // Thawed, then written, then frozen again: the new values count.
  txrt_context_set_frozen_parameters(ctx_, nullptr, 0);
  EXPECT_EQ(packedCount(), 0);
  for (float &value : w)
    value = -value;
  Floats plain = linear(4, m, n, k, x, w.data(), bias, residual);
  txrt_context_set_frozen_parameters(ctx_, w.data(), w.size() * sizeof(float));
  expectClose(linear(4, m, n, k, x, w.data(), bias, residual), toDoubles(plain),
              1e-6, 1e-6, "after refreezing");

  // An Adam update of a frozen weight breaks the promise: the copies go.
  Floats grad = randomFloats(n * k, 54), moment1(n * k), moment2(n * k);
  expectOk(txrt_adam_update(ctx_, 5, n * k, w.data(), grad.data(),
                            moment1.data(), moment2.data(), 0.1f, 0.9f, 0.98f,
                            1e-9f, 0.0f, 1));
  EXPECT_EQ(packedCount(), 0);
  Floats updated = linear(4, m, n, k, x, w.data(), bias, residual);
  txrt_context_set_frozen_parameters(ctx_, nullptr, 0);
  expectClose(updated,
              toDoubles(linear(4, m, n, k, x, w.data(), bias, residual)), 1e-6,
              1e-6, "after an update");
}

TEST_F(PackedWeightsTest, TheEnvironmentTurnsPackingOff) {
  const int64_t m = 8, n = 512, k = 512;
  Floats w = randomFloats(n * k, 60), x = randomFloats(m * k, 61),
         bias = randomFloats(n, 62), residual = randomFloats(m * n, 63);
  ASSERT_EQ(setenv("TXRT_PACK_WEIGHTS", "0", 1), 0);
  txrt_context *off = nullptr;
  txrt_status status = txrt_context_create_with_threads(2, &off);
  unsetenv("TXRT_PACK_WEIGHTS");
  ASSERT_EQ(status, TXRT_OK);
  txrt_context_set_frozen_parameters(off, w.data(), w.size() * sizeof(float));
  Floats y(m * n);
  EXPECT_EQ(txrt_linear_fwd(off, 1, m, n, k, x.data(), w.data(), bias.data(),
                            TXRT_ACTIVATION_RELU, residual.data(), y.data()),
            TXRT_OK);
  EXPECT_EQ(packedCount(off), 0);
  txrt_context_destroy(off);
}

} // namespace

// TXRT_PACK_WEIGHTS takes 0 or 1, as the executables check it: `off` turned
// packing on in a program of the C API, as any value but 0 did. Creating a
// context now fails with the variable named.
TEST_F(PackedWeightsTest, AnotherValueOfTheSwitchFailsContextCreation) {
  for (const char *value : {"off", "false", "yes", " 1"}) {
    ASSERT_EQ(setenv("TXRT_PACK_WEIGHTS", value, 1), 0);
    txrt_context *ctx = nullptr;
    txrt_status status = txrt_context_create_with_threads(1, &ctx);
    unsetenv("TXRT_PACK_WEIGHTS");
    EXPECT_EQ(status, TXRT_ERROR_INVALID_ARGUMENT) << value;
    EXPECT_EQ(ctx, nullptr) << value;
    EXPECT_NE(std::string(txrt_last_error(nullptr)).find("TXRT_PACK_WEIGHTS='"),
              std::string::npos)
        << txrt_last_error(nullptr);
    txrt_context_destroy(ctx);
  }
  for (const char *value : {"1", ""}) {
    ASSERT_EQ(setenv("TXRT_PACK_WEIGHTS", value, 1), 0);
    txrt_context *ctx = nullptr;
    txrt_status status = txrt_context_create_with_threads(1, &ctx);
    unsetenv("TXRT_PACK_WEIGHTS");
    EXPECT_EQ(status, TXRT_OK) << value;
    txrt_context_destroy(ctx);
  }
}
