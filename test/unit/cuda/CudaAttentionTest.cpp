//===- CudaAttentionTest.cpp - CUDA attention against the CPU kernel ------===//
//
// Forward (O, lse) and backward (dq, dk, dv) of txrt_cuda_attention_* against
// txrt_attention_* on the same inputs: grouped-query heads, row strides
// wider than the heads (a packed projection), a padding mask, causal,
// dropout, a -inf fill with a fully masked batch (O = 0, lse = -inf) and a
// finite fill (masked keys counted; a fully masked row averages V). Each
// case runs the tensor-core kernels (the default, 3xTF32), the tiled
// CUDA-core kernels (TXRT_CUDA_ATTENTION=simt) and the per-row reference
// kernels (TXRT_CUDA_ATTENTION=rows), at head dimensions and lengths that
// end tiles part way.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cstdlib>
#include <limits>

using namespace txrt_cuda_test;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

struct Case {
  const char *name;
  int64_t batch, heads, kvHeads, tq, tk, headDim;
  bool padding, causal;
  float fill, dropout;
};

/// -inf in both (rows with no key) compares equal; the rest as expectNear.
void expectLseNear(Floats gpu, Floats cpu, double tolerance,
                   const std::string &what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu[i] == -kInf) {
      EXPECT_EQ(gpu[i], -kInf) << what << "[" << i << "]";
      gpu[i] = cpu[i] = 0.0f;
    }
  }
  expectNear(gpu, cpu, tolerance, what);
}

class CudaAttentionTest : public CudaTest {
protected:
  void TearDown() override {
    unsetenv("TXRT_CUDA_ATTENTION");
    CudaTest::TearDown();
  }
  /// The case with the tensor-core kernels, the tiled CUDA-core ones, then
  /// the per-row kernels.
  void check(const Case &c) {
    unsetenv("TXRT_CUDA_ATTENTION");
    checkKernels(c, "tensor cores");
    setenv("TXRT_CUDA_ATTENTION", "simt", 1);
    checkKernels(c, "simt");
    setenv("TXRT_CUDA_ATTENTION", "rows", 1);
    checkKernels(c, "rows");
    unsetenv("TXRT_CUDA_ATTENTION");
  }
  /// `tolerance`: 1e-5 in strict fp32; the stated TF32 bound (5e-3) where
  /// the context allows TF32.
  void checkKernels(const Case &c, const std::string &kernels,
                    double tolerance = 1e-5) {
    const int64_t hd = c.headDim;
    const int64_t ldq = c.heads * hd + 3, ldkv = c.kvHeads * hd + 5,
                  ldo = c.heads * hd;
    Floats q = randomFloats(c.batch * c.tq * ldq, 70),
           k = randomFloats(c.batch * c.tk * ldkv, 71),
           v = randomFloats(c.batch * c.tk * ldkv, 72),
           dO = randomFloats(c.batch * c.tq * ldo, 73);
    // Padding: batch b sees its first tk - b keys; the last batch none.
    std::vector<uint8_t> mask(c.batch * c.tk, 1);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = 0; j < c.tk; ++j)
        mask[b * c.tk + j] = b == c.batch - 1 && c.batch > 1 ? 0 : j < c.tk - b;
    const uint8_t *cpuMask = c.padding ? mask.data() : nullptr;
    const float scale = 1.0f / std::sqrt(float(hd));
    const uint64_t seed = 99;
    const int64_t step = 5, site = 31;

    Floats o(c.batch * c.tq * ldo), lse(c.batch * c.heads * c.tq);
    expectCpuOk(txrt_attention_fwd(
        cpu_, site, c.batch, c.heads, c.kvHeads, c.tq, c.tk, hd, q.data(), ldq,
        k.data(), ldkv, v.data(), ldkv, o.data(), ldo, lse.data(), cpuMask,
        c.tk, 0, 0, 1, c.causal, scale, c.fill, c.dropout, seed, step));
    DeviceBuffer<float> gq(gpu_, q), gk(gpu_, k), gv(gpu_, v), gdo(gpu_, dO),
        go(gpu_, o.size(), kNaN), glse(gpu_, lse.size(), kNaN);
    DeviceBuffer<uint8_t> gmask(gpu_, mask);
    const uint8_t *gpuMask = c.padding ? gmask.get() : nullptr;
    expectGpuOk(txrt_cuda_attention_fwd(
        gpu_, site, c.batch, c.heads, c.kvHeads, c.tq, c.tk, hd, gq.get(), ldq,
        gk.get(), ldkv, gv.get(), ldkv, go.get(), ldo, glse.get(), gpuMask,
        c.tk, 0, 0, 1, c.causal, scale, c.fill, c.dropout, seed, step));
    std::string name = std::string(c.name) + " (" + kernels + ")";
    expectNear(go.read(), o, tolerance, name + " o");
    expectLseNear(glse.read(), lse, tolerance, name + " lse");

    Floats dq(c.batch * c.tq * ldq, 0.0f), dk(c.batch * c.tk * ldkv, 0.0f),
        dv(c.batch * c.tk * ldkv, 0.0f);
    expectCpuOk(txrt_attention_bwd(
        cpu_, site + 1, site, c.batch, c.heads, c.kvHeads, c.tq, c.tk, hd,
        q.data(), ldq, k.data(), ldkv, v.data(), ldkv, o.data(), ldo,
        lse.data(), dO.data(), ldo, dq.data(), ldq, dk.data(), ldkv, dv.data(),
        ldkv, cpuMask, c.tk, 0, 0, 1, c.causal, scale, c.fill, c.dropout, seed,
        step));
    // The padding columns between rows are not written by either kernel.
    DeviceBuffer<float> gdq(gpu_, dq.size(), 0.0f), gdk(gpu_, dk.size(), 0.0f),
        gdv(gpu_, dv.size(), 0.0f);
    expectGpuOk(txrt_cuda_attention_bwd(
        gpu_, site + 1, site, c.batch, c.heads, c.kvHeads, c.tq, c.tk, hd,
        gq.get(), ldq, gk.get(), ldkv, gv.get(), ldkv, go.get(), ldo,
        glse.get(), gdo.get(), ldo, gdq.get(), ldq, gdk.get(), ldkv, gdv.get(),
        ldkv, gpuMask, c.tk, 0, 0, 1, c.causal, scale, c.fill, c.dropout, seed,
        step));
    expectNear(gdq.read(), dq, tolerance, name + " dq");
    expectNear(gdk.read(), dk, tolerance, name + " dk");
    expectNear(gdv.read(), dv, tolerance, name + " dv");
  }
};

TEST_F(CudaAttentionTest, GroupedQueryPaddingMask) {
  check({"gqa padding", 3, 4, 2, 5, 7, 16, true, false, -kInf, 0.0f});
}

TEST_F(CudaAttentionTest, CausalWithDropout) {
  check({"causal dropout", 2, 2, 2, 6, 6, 32, false, true, -kInf, 0.1f});
}

TEST_F(CudaAttentionTest, APieceOfTheBatchDrawsItsRowsDropout) {
  // Batches 3 and 4 of a larger batch (a micro-batch or a rank's share):
  // P's dropout elements are counted from row 3's, on both devices.
  txrt_context_set_batch_rows(cpu_, 3, 2);
  txrt_cuda_context_set_batch_rows(gpu_, 3, 2);
  check({"piece dropout", 2, 2, 2, 6, 6, 32, false, true, -kInf, 0.3f});
}

TEST_F(CudaAttentionTest, DecodingWithACacheIsCausalOnTheLastRows) {
  check({"cache", 2, 4, 1, 3, 9, 8, true, true, -kInf, 0.0f});
}

TEST_F(CudaAttentionTest, FiniteFillCountsMaskedKeys) {
  check({"finite fill", 3, 2, 1, 4, 6, 16, true, false, -3.0f, 0.0f});
}

// --allow-tf32: the tensor-core kernels in 1xTF32 (a third of the
// products), held to the GEMMs' TF32 bound (emulated: 3e-4..5e-4
// norm-wise, AttentionEmulatedTest.Tf32KernelsWhereAllowedKeepTheirBound);
// the strict kernels again once the option is off.
TEST_F(CudaAttentionTest, Tf32WhereAllowedWithinItsBound) {
  const Case c{"tf32", 2, 4, 2, 70, 70, 64, true, true, -kInf, 0.1f};
  expectGpuOk(
      txrt_cuda_context_set_option(gpu_, TXRT_CUDA_OPTION_ALLOW_TF32, 1));
  checkKernels(c, "tensor cores, 1xTF32", 5e-3);
  expectGpuOk(
      txrt_cuda_context_set_option(gpu_, TXRT_CUDA_OPTION_ALLOW_TF32, 0));
  checkKernels(c, "tensor cores, 3xTF32");
}

TEST_F(CudaAttentionTest, LongerKeysThanOneBlock) {
  check({"long", 1, 2, 2, 3, 700, 64, false, true, -kInf, 0.2f});
}

TEST_F(CudaAttentionTest, HeadDimensionsThatEndALaneGroupPartWay) {
  check({"head dim 7", 2, 3, 3, 17, 33, 7, true, false, -kInf, 0.0f});
  check({"head dim 100", 2, 6, 2, 20, 45, 100, true, true, -kInf, 0.1f});
}

TEST_F(CudaAttentionTest, TheWidestTiledHeadWithAFiniteFill) {
  check({"head dim 128", 2, 2, 1, 40, 40, 128, true, true, -2.0f, 0.0f});
}

TEST_F(CudaAttentionTest, HeadsWiderThanTheTilesUseTheRowKernels) {
  check({"head dim 160", 1, 2, 2, 5, 37, 160, true, true, -kInf, 0.1f});
}

TEST_F(CudaAttentionTest, OneNewRowAgainstALongCache) {
  check({"decode", 3, 4, 2, 1, 70, 64, true, true, -kInf, 0.0f});
}

TEST_F(CudaAttentionTest, MoreKeysThanTheRowKernelHolds) {
  // 9000 keys: over the per-row kernel's 8192, which refuses them; the
  // tiled kernels walk any number.
  unsetenv("TXRT_CUDA_ATTENTION");
  checkKernels({"9000 keys", 1, 2, 1, 3, 9000, 32, false, false, -kInf, 0.0f},
               "tensor cores");
  setenv("TXRT_CUDA_ATTENTION", "simt", 1);
  checkKernels({"9000 keys", 1, 2, 1, 3, 9000, 32, false, false, -kInf, 0.0f},
               "simt");
}

TEST_F(CudaAttentionTest, MoreRowsAndKeysThanOneBlock) {
  // Several 64-row and 64-key blocks of the tensor-core kernels, rows and
  // keys ending blocks part way, causal with tq > tk and tq < tk.
  check({"blocks", 2, 4, 2, 130, 75, 64, true, true, -kInf, 0.1f});
  check({"blocks", 1, 2, 1, 70, 200, 48, true, true, -kInf, 0.0f});
}

TEST_F(CudaAttentionTest, CausalFiniteFillSkipsOnlyKeysThatCannotCount) {
  // masked_fill's -1e9 under a causal mask (the tensor-core kernels skip
  // the keys past a block's causal limit), a batch with every key masked
  // (each probability 1 / tk: its lse rounds to the fill), a fill close to
  // the scores and rows with no visible key (tq > tk), where the masked
  // keys count.
  check({"causal -1e9", 2, 2, 1, 130, 130, 32, true, true, -1e9f, 0.1f});
  check({"causal -2", 1, 2, 1, 100, 100, 16, false, true, -2.0f, 0.0f});
  check({"causal -1e9, rows with no key", 1, 2, 1, 80, 40, 16, false, true,
         -1e9f, 0.0f});
}

TEST_F(CudaAttentionTest, AnUnknownKernelChoiceIsAnError) {
  setenv("TXRT_CUDA_ATTENTION", "fast", 1);
  Floats q(64, 0.5f);
  DeviceBuffer<float> gq(gpu_, q), go(gpu_, q.size(), 0.0f);
  EXPECT_EQ(txrt_cuda_attention_fwd(gpu_, 0, 1, 1, 1, 2, 2, 16, gq.get(), 16,
                                    gq.get(), 16, gq.get(), 16, go.get(), 16,
                                    nullptr, nullptr, 0, 0, 0, 0, 0, 0.25f,
                                    -kInf, 0.0f, 0, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_)).find("TXRT_CUDA_ATTENTION"),
            std::string::npos)
      << txrt_cuda_last_error(gpu_);
}

// dV = P^T dO took P = exp(S - lse) with the saved lse's rounding as a
// common factor of up to 1 + eps |lse| on the row: the sum of dV over the
// keys (what a bias of V gets), sum_i dO_i rowsum(P_i) = sum_i dO_i, was
// 1e-3 of sum |dO| off at a key offset of 1e5 (AttentionEmulatedTest's
// figures). Rows with |lse| >= 16 are now normalized by their sums, as on
// the CPU (AttentionTest.BackwardDvCancelsAConstantInLongRows); each form
// on the device's own forward.
TEST_F(CudaAttentionTest, BackwardDvCancelsAConstantInLongRows) {
  const int64_t heads = 2, tq = 16, hd = 16, ld = heads * hd;
  const float scale = 1.0f / std::sqrt(float(hd));
  for (const char *kernels : {"tensor-cores", "simt", "rows"}) {
    setenv("TXRT_CUDA_ATTENTION", kernels, 1);
    for (int64_t tk : {300, 700})
      for (float offset : {60.0f, 3000.0f, 1e5f}) {
        Floats q = randomFloats(tq * ld, 70), k = randomFloats(tk * ld, 71),
               v = randomFloats(tk * ld, 72), dO = randomFloats(tq * ld, 73);
        for (float &x : k)
          x += offset;
        DeviceBuffer<float> gq(gpu_, q), gk(gpu_, k), gv(gpu_, v),
            gdo(gpu_, dO), go(gpu_, q.size(), kNaN),
            glse(gpu_, size_t(heads * tq), kNaN), gdq(gpu_, q.size(), 0.0f),
            gdk(gpu_, k.size(), 0.0f), gdv(gpu_, v.size(), 0.0f);
        expectGpuOk(txrt_cuda_attention_fwd(
            gpu_, 31, 1, heads, heads, tq, tk, hd, gq.get(), ld, gk.get(), ld,
            gv.get(), ld, go.get(), ld, glse.get(), nullptr, 0, 0, 0, 0, 0,
            scale, -kInf, 0.0f, 99, 5));
        expectGpuOk(txrt_cuda_attention_bwd(
            gpu_, 32, 31, 1, heads, heads, tq, tk, hd, gq.get(), ld, gk.get(),
            ld, gv.get(), ld, go.get(), ld, glse.get(), gdo.get(), ld,
            gdq.get(), ld, gdk.get(), ld, gdv.get(), ld, nullptr, 0, 0, 0, 0, 0,
            scale, -kInf, 0.0f, 99, 5));
        const Floats dv = gdv.read();
        for (int64_t col = 0; col < ld; ++col) {
          double dvSum = 0.0, dOSum = 0.0, dOScale = 0.0;
          for (int64_t j = 0; j < tk; ++j)
            dvSum += dv[size_t(j * ld + col)];
          for (int64_t i = 0; i < tq; ++i) {
            dOSum += dO[size_t(i * ld + col)];
            dOScale += std::fabs(dO[size_t(i * ld + col)]);
          }
          EXPECT_LT(std::fabs(dvSum - dOSum), 1e-6 * dOScale)
              << kernels << ", tk " << tk << ", offset " << offset
              << ", column " << col << ": " << dvSum << " against " << dOSum;
        }
      }
  }
  unsetenv("TXRT_CUDA_ATTENTION");
}

} // namespace
