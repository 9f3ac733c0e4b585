//===- RmsNormEmulatedTest.cpp - the CUDA RMS norm kernels, emulated ------===//
//
// The device code of txrt_cuda_rms_norm_{fwd,bwd}
// (runtime/cuda/kernels/RmsNormKernels.cuh) run on the host under
// CudaEmulation.h with the launches RmsNorm.cu makes, and compared with the
// CPU kernels (txrt_rms_norm_*) at CudaKernelsTest's tolerance: y and sum,
// dx and dgamma with and without a residual, writing and accumulating,
// rows wider and narrower than a block, and the dgamma kernel on a grid
// smaller than the columns.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/RmsNormKernels.cuh"

#include "txrt/txrt.h"

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::rmsnorm;

namespace {

class RmsNormEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// `gammaBlocks` > 0 launches the dgamma kernel on fewer blocks than the
  /// columns need (its grid stride).
  void check(int64_t rows, int64_t cols, unsigned gammaBlocks = 0) {
    const float eps = 1e-6f;
    const Floats x = randomFloats(rows * cols, 90),
                 r = randomFloats(rows * cols, 91),
                 gamma = randomFloats(cols, 92, 0.5f, 1.5f),
                 dy = randomFloats(rows * cols, 93),
                 dsum = randomFloats(rows * cols, 94),
                 dx0 = randomFloats(rows * cols, 95),
                 dg0 = randomFloats(cols, 96);
    for (bool residual : {false, true}) {
      const std::string what =
          std::string(residual ? "rms residual " : "rms ") +
          std::to_string(rows) + "x" + std::to_string(cols) + " ";
      const float *rr = residual ? r.data() : nullptr;
      const float *ds = residual ? dsum.data() : nullptr;
      Floats y(rows * cols), sum(rows * cols);
      ASSERT_EQ(txrt_rms_norm_fwd(cpu_, 11, rows, cols, x.data(), rr,
                                  gamma.data(), eps, y.data(),
                                  residual ? sum.data() : nullptr),
                TXRT_OK);
      Floats gotY(rows * cols, kNaN), gotSum(rows * cols, kNaN);
      launch(rowLaunch(rows), [&] {
        rmsNormForward(cols, x.data(), rr, gamma.data(), eps, gotY.data(),
                       residual ? gotSum.data() : nullptr);
      });
      expectNear(gotY, y, kStrict, what + "y");
      if (residual)
        expectNear(gotSum, sum, kStrict, what + "sum");
      for (bool accumulate : {false, true}) {
        Floats dx = dx0, dgamma = dg0;
        ASSERT_EQ(txrt_rms_norm_bwd(cpu_, 11, rows, cols, x.data(), rr,
                                    gamma.data(), eps, dy.data(), ds, dx.data(),
                                    dgamma.data(), accumulate, accumulate),
                  TXRT_OK);
        // RmsNorm.cu: the data kernel leaves each row's rstd in the
        // workspace for the dgamma kernel.
        Floats gotDx = accumulate ? dx0 : Floats(rows * cols, kNaN),
               gotDg = accumulate ? dg0 : Floats(cols, kNaN),
               rowRstds(rows, kNaN);
        launch(rowLaunch(rows), [&] {
          rmsNormBackwardData(cols, x.data(), rr, gamma.data(), eps, dy.data(),
                              ds, gotDx.data(), accumulate, rowRstds.data());
        });
        KernelLaunch columns = gammaLaunch(cols);
        if (gammaBlocks > 0)
          columns.blocks = gammaBlocks;
        launch(columns, [&] {
          rmsNormBackwardGamma(rows, cols, x.data(), rr, dy.data(),
                               rowRstds.data(), gotDg.data(), accumulate);
        });
        const std::string suffix = accumulate ? " (accumulate)" : "";
        expectNear(gotDx, dx, kStrict, what + "dx" + suffix);
        expectNear(gotDg, dgamma, kStrict, what + "dgamma" + suffix);
      }
    }
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(RmsNormEmulatedTest, WithAndWithoutResidual) { check(11, 384); }

TEST_F(RmsNormEmulatedTest, RowsNarrowerThanABlockAndNotWholeWarps) {
  check(5, 37);
  check(3, 2); // not 1: there the exact gradient is 0, both give rounding
}

TEST_F(RmsNormEmulatedTest, GammaGradientLoopsPastItsGrid) {
  check(4, 300, 1); // one block of 128 threads for 300 columns
}

} // namespace
