//===- ElementwiseEmulatedTest.cpp - the CUDA epilogues, emulated ---------===//
//
// The device code of Elementwise.cu (runtime/cuda/kernels/
// ElementwiseKernels.cuh) run on the host under CudaEmulation.h with the
// launches it makes, and compared with the CPU kernels at
// CudaKernelsTest's tolerance: the activations and their derivatives
// (txrt_activation_*), the linear's epilogue on the CPU's own product
// (bias, every activation, gate, residual: txrt_linear_fwd,
// txrt_linear_gated_fwd), the bias gradient's column sum (txrt_linear_bwd),
// and the strided matmul epilogue with beta (txrt_matmul), plus a grid
// smaller than the elements.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/ElementwiseKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::elementwise;

namespace {

const int32_t kActivations[] = {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_RELU,
                                TXRT_ACTIVATION_GELU, TXRT_ACTIVATION_GELU_TANH,
                                TXRT_ACTIVATION_SILU};

class ElementwiseEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  txrt_context *cpu_ = nullptr;
};

TEST_F(ElementwiseEmulatedTest, ActivationsAndDerivativesMatchCpu) {
  for (unsigned blocks : {0u, 3u}) { // the launch, and a grid looping
    const int64_t n = 5003;
    Floats x = randomFloats(n, 100, -4.0f, 4.0f);
    const Floats dy = randomFloats(n, 101);
    x[0] = 0.0f; // relu'(0) = 0, as oneDNN's
    for (int32_t act : kActivations) {
      const std::string what =
          "activation " + std::to_string(act) + (blocks ? " (3 blocks)" : "");
      Floats y(n), dx(n);
      ASSERT_EQ(txrt_activation_fwd(cpu_, 12, act, n, x.data(), y.data()),
                TXRT_OK);
      ASSERT_EQ(
          txrt_activation_bwd(cpu_, 12, act, n, x.data(), dy.data(), dx.data()),
          TXRT_OK);
      KernelLaunch elements = elementLaunch(n);
      if (blocks)
        elements.blocks = blocks;
      Floats gotY(n, kNaN), gotDx(n, kNaN);
      launch(elements,
             [&] { activationForward(n, act, x.data(), gotY.data()); });
      launch(elements, [&] {
        activationBackward(n, act, x.data(), dy.data(), gotDx.data());
      });
      expectNear(gotY, y, kStrict, what + " y");
      expectNear(gotDx, dx, kStrict, what + " dx");
    }
  }
}

TEST_F(ElementwiseEmulatedTest, LinearEpilogueOnTheCpuProduct) {
  // Linear.cpp: cuBLASLt's x w^T, then launchEpilogue. Here the product is
  // the CPU's, so the comparison is of the epilogue alone.
  const int64_t m = 37, n = 53, k = 29;
  const Floats x = randomFloats(m * k, 1), w = randomFloats(n * k, 2),
               bias = randomFloats(n, 3), residual = randomFloats(m * n, 4),
               gate = randomFloats(m * n, 5);
  Floats product(m * n);
  ASSERT_EQ(txrt_linear_fwd(cpu_, 1, m, n, k, x.data(), w.data(), nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, product.data()),
            TXRT_OK);
  for (int32_t act : kActivations)
    for (bool withBias : {false, true})
      for (bool withGate : {false, true})
        for (bool withResidual : {false, true}) {
          const std::string what =
              "act " + std::to_string(act) + (withBias ? " bias" : "") +
              (withGate ? " gate" : "") + (withResidual ? " residual" : "");
          const float *b = withBias ? bias.data() : nullptr,
                      *r = withResidual ? residual.data() : nullptr;
          Floats want(m * n);
          if (withGate)
            ASSERT_EQ(txrt_linear_gated_fwd(cpu_, 1, m, n, k, x.data(),
                                            w.data(), b, act, gate.data(), r,
                                            want.data()),
                      TXRT_OK);
          else
            ASSERT_EQ(txrt_linear_fwd(cpu_, 1, m, n, k, x.data(), w.data(), b,
                                      act, r, want.data()),
                      TXRT_OK);
          Floats got = product;
          launch(elementLaunch(m * n), [&] {
            epilogueKernel(m, n, got.data(), b, act,
                           withGate ? gate.data() : nullptr, r);
          });
          expectNear(got, want, kStrict, what);
        }
}

TEST_F(ElementwiseEmulatedTest, BiasGradientIsAColumnSum) {
  const int64_t m = 41, n = 300, k = 3;
  const Floats x = randomFloats(m * k, 5), w = randomFloats(n * k, 6),
               dy = randomFloats(m * n, 7), db0 = randomFloats(n, 10);
  for (bool accumulate : {false, true})
    for (unsigned blocks : {0u, 1u}) {
      Floats dx(m * k), dw(n * k), db = db0;
      ASSERT_EQ(txrt_linear_bwd(cpu_, 2, m, n, k, x.data(), w.data(), dy.data(),
                                dx.data(), dw.data(), db.data(), accumulate,
                                accumulate),
                TXRT_OK);
      Floats got = accumulate ? db0 : Floats(n, kNaN);
      KernelLaunch columns = columnLaunch(n);
      if (blocks)
        columns.blocks = blocks; // 128 threads for 300 columns
      launch(columns,
             [&] { columnSumKernel(m, n, dy.data(), got.data(), accumulate); });
      expectNear(got, db, kStrict,
                 std::string("dbias") + (accumulate ? " (accumulate)" : "") +
                     (blocks ? " (1 block)" : ""));
    }
}

TEST_F(ElementwiseEmulatedTest, StridedMatmulEpilogueWithBeta) {
  // Linear.cpp's txrt_cuda_matmul: alpha A.B of every batch, dense, then
  // launchStridedEpilogue into C at its strides. C here is column-major
  // within each batch, its batches in the opposite order of nesting.
  const int64_t b0 = 2, b1 = 3, m = 6, n = 9, k = 8;
  const int64_t aStrides[] = {b1 * m * k, m * k, k, 1},
                bStrides[] = {0, 0, n, 1}, dense[] = {b1 * m * n, m * n, n, 1},
                cStrides[] = {m * n, b0 * m * n, 1, m};
  const int64_t cSize = b0 * b1 * m * n;
  const Floats a = randomFloats(b0 * b1 * m * k, 160),
               b = randomFloats(k * n, 161), bias = randomFloats(n, 162),
               residual = randomFloats(cSize, 163),
               c0 = randomFloats(cSize, 164);
  const float alpha = 0.5f;
  Floats product(cSize);
  ASSERT_EQ(txrt_matmul(cpu_, 23, b0, b1, m, n, k, a.data(), aStrides, b.data(),
                        bStrides, product.data(), dense, nullptr,
                        TXRT_ACTIVATION_NONE, nullptr, alpha, 0.0f),
            TXRT_OK)
      << txrt_last_error(cpu_);
  for (float beta : {0.0f, 1.0f})
    for (int32_t act : {TXRT_ACTIVATION_RELU, TXRT_ACTIVATION_GELU}) {
      Floats want = c0;
      ASSERT_EQ(txrt_matmul(cpu_, 23, b0, b1, m, n, k, a.data(), aStrides,
                            b.data(), bStrides, want.data(), cStrides,
                            bias.data(), act, residual.data(), alpha, beta),
                TXRT_OK)
          << txrt_last_error(cpu_);
      Floats got = beta != 0.0f ? c0 : Floats(cSize, kNaN);
      const Strides4 strides = {
          {cStrides[0], cStrides[1], cStrides[2], cStrides[3]}};
      launch(elementLaunch(cSize), [&] {
        stridedEpilogueKernel(b1, m, n, cSize, product.data(), got.data(),
                              strides, bias.data(), act, residual.data(), beta);
      });
      expectNear(got, want, kStrict,
                 "beta " + std::to_string(beta) + " act " +
                     std::to_string(act));
    }
}

} // namespace
