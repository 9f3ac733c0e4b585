//===- LayerNormEmulatedTest.cpp - the CUDA layer norm kernels, emulated --===//
//
// The device code of txrt_cuda_layer_norm_* and txrt_cuda_add_layer_norm_*
// (runtime/cuda/kernels/LayerNormKernels.cuh) run on the host under
// CudaEmulation.h with the launches LayerNorm.cu makes, and compared with
// the CPU kernels (txrt_layer_norm_*, txrt_add_layer_norm_*) at
// CudaKernelsTest's tolerance: y, sum, mean, var, dx, dgamma, dbeta, from
// saved and recomputed statistics, writing and accumulating, rows wider and
// narrower than a block. Outputs start as NaN so an unwritten element fails.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/LayerNormKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::layernorm;

namespace {

struct Case {
  const char *name;
  int64_t rows, cols;
  bool residual, affine; ///< add + layer norm; gamma and beta
  float eps;
};

struct Inputs {
  explicit Inputs(const Case &c)
      : x(randomFloats(c.rows * c.cols, 20, -2.0f, 3.0f)),
        r(randomFloats(c.rows * c.cols, 21)),
        gamma(randomFloats(c.cols, 22, 0.5f, 1.5f)),
        beta(randomFloats(c.cols, 23)), dy(randomFloats(c.rows * c.cols, 24)),
        dsum(randomFloats(c.rows * c.cols, 25)),
        dx0(randomFloats(c.rows * c.cols, 26)),
        dgamma0(randomFloats(c.cols, 27)), dbeta0(randomFloats(c.cols, 28)) {}
  Floats x, r, gamma, beta, dy, dsum, dx0, dgamma0, dbeta0;
};

struct Forward {
  Floats y, sum, mean, var;
};

struct Backward {
  Floats dx, dgamma, dbeta;
};

class LayerNormEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  Forward cpuForward(const Case &c, const Inputs &in) {
    const int64_t n = c.rows * c.cols;
    Forward out{Floats(n), Floats(n), Floats(c.rows), Floats(c.rows)};
    const float *gamma = c.affine ? in.gamma.data() : nullptr,
                *beta = c.affine ? in.beta.data() : nullptr;
    if (c.residual)
      EXPECT_EQ(txrt_add_layer_norm_fwd(cpu_, 4, c.rows, c.cols, in.x.data(),
                                        in.r.data(), gamma, beta, c.eps,
                                        out.y.data(), out.sum.data(),
                                        out.mean.data(), out.var.data()),
                TXRT_OK)
          << txrt_last_error(cpu_);
    else
      EXPECT_EQ(txrt_layer_norm_fwd(cpu_, 4, c.rows, c.cols, in.x.data(), gamma,
                                    beta, c.eps, out.y.data(), out.mean.data(),
                                    out.var.data()),
                TXRT_OK)
          << txrt_last_error(cpu_);
    return out;
  }

  /// LayerNorm.cu's forward launch.
  Forward emulatedForward(const Case &c, const Inputs &in) {
    const int64_t n = c.rows * c.cols;
    Forward out{Floats(n, kNaN), Floats(n, kNaN), Floats(c.rows, kNaN),
                Floats(c.rows, kNaN)};
    const float *r = c.residual ? in.r.data() : nullptr;
    const float *gamma = c.affine ? in.gamma.data() : nullptr,
                *beta = c.affine ? in.beta.data() : nullptr;
    float *sum = c.residual ? out.sum.data() : nullptr;
    launch(rowLaunch(c.rows), [&] {
      layerNormForward(c.cols, in.x.data(), r, gamma, beta, c.eps, out.y.data(),
                       sum, out.mean.data(), out.var.data());
    });
    return out;
  }

  Backward cpuBackward(const Case &c, const Inputs &in, const Forward &f,
                       bool saved, bool accumulate) {
    Backward out{accumulate ? in.dx0 : Floats(c.rows * c.cols),
                 accumulate ? in.dgamma0 : Floats(c.cols),
                 accumulate ? in.dbeta0 : Floats(c.cols)};
    const float *mean = saved ? f.mean.data() : nullptr,
                *var = saved ? f.var.data() : nullptr;
    const float *gamma = c.affine ? in.gamma.data() : nullptr;
    float *dgamma = c.affine ? out.dgamma.data() : nullptr;
    if (c.residual)
      EXPECT_EQ(txrt_add_layer_norm_bwd(
                    cpu_, 4, c.rows, c.cols, in.x.data(), in.r.data(),
                    saved ? f.sum.data() : nullptr, gamma, mean, var, c.eps,
                    in.dy.data(), in.dsum.data(), out.dx.data(), dgamma,
                    out.dbeta.data(), accumulate, accumulate),
                TXRT_OK)
          << txrt_last_error(cpu_);
    else
      EXPECT_EQ(txrt_layer_norm_bwd(cpu_, 4, c.rows, c.cols, in.x.data(), gamma,
                                    mean, var, c.eps, in.dy.data(),
                                    out.dx.data(), dgamma, out.dbeta.data(),
                                    accumulate, accumulate),
                TXRT_OK)
          << txrt_last_error(cpu_);
    return out;
  }

  /// LayerNorm.cu's backward launches: the data kernel leaves the row
  /// statistics in the workspace for the parameters kernel. `paramsBlocks`
  /// > 0 launches that kernel on fewer blocks than columns need (its grid
  /// stride, as past gridFor's cap).
  Backward emulatedBackward(const Case &c, const Inputs &in, const Forward &f,
                            bool saved, bool accumulate,
                            unsigned paramsBlocks = 0) {
    const int64_t n = c.rows * c.cols;
    Backward out{accumulate ? in.dx0 : Floats(n, kNaN),
                 accumulate ? in.dgamma0 : Floats(c.cols, kNaN),
                 accumulate ? in.dbeta0 : Floats(c.cols, kNaN)};
    const NormInput s{c.residual && saved ? f.sum.data() : nullptr, in.x.data(),
                      c.residual ? in.r.data() : nullptr};
    const float *mean = saved ? f.mean.data() : nullptr,
                *var = saved ? f.var.data() : nullptr;
    const float *gamma = c.affine ? in.gamma.data() : nullptr;
    float *dgamma = c.affine ? out.dgamma.data() : nullptr;
    const float *dsum = c.residual ? in.dsum.data() : nullptr;
    Floats workspace(2 * c.rows, kNaN);
    float *rowMean = workspace.data(), *rowVar = rowMean + c.rows;
    launch(rowLaunch(c.rows), [&] {
      layerNormBackwardData(c.cols, s, gamma, mean, var, c.eps, in.dy.data(),
                            dsum, out.dx.data(), accumulate, rowMean, rowVar);
    });
    KernelLaunch columns = paramsLaunch(c.cols);
    if (paramsBlocks > 0)
      columns.blocks = paramsBlocks;
    launch(columns, [&] {
      layerNormBackwardParams(c.rows, c.cols, s, rowMean, rowVar, c.eps,
                              in.dy.data(), dgamma, out.dbeta.data(),
                              accumulate);
    });
    return out;
  }

  void check(const Case &c) {
    Inputs in(c);
    const Forward cpu = cpuForward(c, in);
    const Forward gpu = emulatedForward(c, in);
    const std::string name = c.name;
    expectNear(gpu.y, cpu.y, kStrict, name + " y");
    expectNear(gpu.mean, cpu.mean, kStrict, name + " mean");
    expectNear(gpu.var, cpu.var, kStrict, name + " var");
    if (c.residual)
      expectNear(gpu.sum, cpu.sum, kStrict, name + " sum");
    for (bool saved : {true, false})
      for (bool accumulate : {false, true}) {
        const std::string what = name + (saved ? " (saved" : " (recomputed") +
                                 (accumulate ? ", accumulate)" : ")");
        // Each backward reads the CPU's forward, as the GPU test does.
        const Backward want = cpuBackward(c, in, cpu, saved, accumulate);
        const Backward got = emulatedBackward(c, in, cpu, saved, accumulate);
        expectNear(got.dx, want.dx, kStrict, what + " dx");
        if (c.affine)
          expectNear(got.dgamma, want.dgamma, kStrict, what + " dgamma");
        expectNear(got.dbeta, want.dbeta, kStrict, what + " dbeta");
      }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(LayerNormEmulatedTest, RowsWiderThanABlock) {
  check({"layer norm 19x300", 19, 300, false, true, 1e-5f});
}

TEST_F(LayerNormEmulatedTest, AddLayerNormSavedAndRecomputedSum) {
  check({"add layer norm 13x512", 13, 512, true, true, 1e-6f});
}

TEST_F(LayerNormEmulatedTest, RowsNarrowerThanABlockAndNotWholeWarps) {
  check({"layer norm 5x37", 5, 37, false, true, 1e-5f});
  check({"add layer norm 3x1", 3, 1, true, true, 1e-5f});
}

TEST_F(LayerNormEmulatedTest, WithoutScaleAndShift) {
  check({"layer norm no affine 7x70", 7, 70, false, false, 1e-5f});
}

TEST_F(LayerNormEmulatedTest, ParameterGradientsLoopPastTheirGrid) {
  // One block of 128 threads for 300 columns: each thread takes three.
  const Case c{"grid stride", 6, 300, true, true, 1e-5f};
  Inputs in(c);
  const Forward f = cpuForward(c, in);
  const Backward want = cpuBackward(c, in, f, true, false);
  const Backward got = emulatedBackward(c, in, f, true, false, 1);
  expectNear(got.dgamma, want.dgamma, kStrict, "dgamma");
  expectNear(got.dbeta, want.dbeta, kStrict, "dbeta");
}

} // namespace
