//===- CudaKernelsTest.cpp - each CUDA kernel against the CPU kernel ------===//
//
// Inputs are random (never zeros), outputs are poisoned with NaN before each
// run so an unwritten element fails, and every comparison is with libtxrt's
// CPU kernel of the same name on the same inputs and options (saved or
// recomputed statistics alike): 1e-5 relative in strict fp32, 5e-3 under
// TF32 (expectNear says how), dropout and train --ema's update (against
// the driver's host loop) bit for bit.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "decoding/Decoding.h"
#include "loop/Ema.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace txrt_cuda_test;

namespace {

class CudaLinearTest : public CudaTest {};

TEST_F(CudaLinearTest, ForwardEveryEpilogueMatchesCpu) {
  const int64_t m = 37, n = 53, k = 29;
  Floats x = randomFloats(m * k, 1), w = randomFloats(n * k, 2),
         bias = randomFloats(n, 3), residual = randomFloats(m * n, 4);
  DeviceBuffer<float> dx(gpu_, x), dw(gpu_, w), dbias(gpu_, bias),
      dres(gpu_, residual);
  for (int32_t act : {TXRT_ACTIVATION_NONE, TXRT_ACTIVATION_RELU,
                      TXRT_ACTIVATION_GELU, TXRT_ACTIVATION_GELU_TANH,
                      TXRT_ACTIVATION_SILU}) {
    for (bool withBias : {false, true}) {
      for (bool withResidual : {false, true}) {
        std::string what = "act " + std::to_string(act) +
                           (withBias ? " bias" : "") +
                           (withResidual ? " residual" : "");
        Floats expected(m * n);
        expectCpuOk(txrt_linear_fwd(cpu_, 1, m, n, k, x.data(), w.data(),
                                    withBias ? bias.data() : nullptr, act,
                                    withResidual ? residual.data() : nullptr,
                                    expected.data()));
        DeviceBuffer<float> y(gpu_, m * n, kNaN);
        expectGpuOk(txrt_cuda_linear_fwd(
            gpu_, 1, m, n, k, dx.get(), dw.get(),
            withBias ? dbias.get() : nullptr, act,
            withResidual ? dres.get() : nullptr, y.get()));
        expectNear(y.read(), expected, kStrict, what);
      }
    }
  }
}

TEST_F(CudaLinearTest, BackwardMatchesCpuAndAccumulates) {
  const int64_t m = 41, n = 23, k = 31;
  Floats x = randomFloats(m * k, 5), w = randomFloats(n * k, 6),
         dy = randomFloats(m * n, 7);
  Floats dx0 = randomFloats(m * k, 8), dw0 = randomFloats(n * k, 9),
         db0 = randomFloats(n, 10);
  DeviceBuffer<float> gx(gpu_, x), gw(gpu_, w), gdy(gpu_, dy);
  for (int32_t accumulate : {0, 1}) {
    Floats dx = dx0, dw = dw0, db = db0;
    expectCpuOk(txrt_linear_bwd(cpu_, 2, m, n, k, x.data(), w.data(),
                                dy.data(), dx.data(), dw.data(), db.data(),
                                accumulate, accumulate));
    DeviceBuffer<float> gdx(gpu_, accumulate ? dx0 : Floats(m * k, kNaN));
    DeviceBuffer<float> gdw(gpu_, accumulate ? dw0 : Floats(n * k, kNaN));
    DeviceBuffer<float> gdb(gpu_, accumulate ? db0 : Floats(n, kNaN));
    expectGpuOk(txrt_cuda_linear_bwd(gpu_, 2, m, n, k, gx.get(), gw.get(),
                                     gdy.get(), gdx.get(), gdw.get(),
                                     gdb.get(), accumulate, accumulate));
    std::string what = accumulate ? " (accumulate)" : "";
    expectNear(gdx.read(), dx, kStrict, "dx" + what);
    expectNear(gdw.read(), dw, kStrict, "dw" + what);
    expectNear(gdb.read(), db, kStrict, "dbias" + what);
  }
}

TEST_F(CudaLinearTest, Tf32OnlyUnderTheOptionWithinItsBound) {
  const int64_t m = 64, n = 64, k = 256;
  Floats x = randomFloats(m * k, 11), w = randomFloats(n * k, 12);
  Floats expected(m * n);
  expectCpuOk(txrt_linear_fwd(cpu_, 3, m, n, k, x.data(), w.data(), nullptr,
                              TXRT_ACTIVATION_NONE, nullptr, expected.data()));
  DeviceBuffer<float> gx(gpu_, x), gw(gpu_, w), y(gpu_, m * n, kNaN);
  expectGpuOk(txrt_cuda_linear_fwd(gpu_, 3, m, n, k, gx.get(), gw.get(),
                                   nullptr, TXRT_ACTIVATION_NONE, nullptr,
                                   y.get()));
  expectNear(y.read(), expected, kStrict, "strict fp32");
  expectGpuOk(
      txrt_cuda_context_set_option(gpu_, TXRT_CUDA_OPTION_ALLOW_TF32, 1));
  expectGpuOk(txrt_cuda_linear_fwd(gpu_, 3, m, n, k, gx.get(), gw.get(),
                                   nullptr, TXRT_ACTIVATION_NONE, nullptr,
                                   y.get()));
  // TF32 keeps 10 mantissa bits: a relative error near 1e-3 on dot products
  // of k = 256 terms; 5e-3 of the tensor's scale is the stated bound.
  expectNear(y.read(), expected, 5e-3, "tf32");
}

struct MatmulCase {
  const char *name;
  int64_t batch0, batch1, m, n, k;
  std::vector<int64_t> aStrides, bStrides, cStrides;
  int64_t aSize, bSize, cSize;
  bool bias, residual;
  int32_t activation;
  float alpha, beta;
};

TEST_F(CudaLinearTest, StridedBatchedMatmulMatchesCpu) {
  const int64_t B = 2, h = 3, T = 5, S = 7, d = 4, m = 6, n = 9, k = 8;
  const std::vector<MatmulCase> cases = {
      {"dense",
       1,
       1,
       m,
       n,
       k,
       {0, 0, k, 1},
       {0, 0, n, 1},
       {0, 0, n, 1},
       m * k,
       k * n,
       m * n,
       false,
       false,
       TXRT_ACTIVATION_NONE,
       1.0f,
       0.0f},
      {"x w^T, epilogue, accumulate",
       1,
       1,
       m,
       n,
       k,
       {0, 0, k, 1},
       {0, 0, 1, k},
       {0, 0, n, 1},
       m * k,
       n * k,
       m * n,
       true,
       true,
       TXRT_ACTIVATION_GELU,
       0.5f,
       1.0f},
      // Q K^T of [B, T, h*d] and [B, S, h*d] as heads, into [B, h, T, S].
      {"heads",
       B,
       h,
       T,
       S,
       d,
       {T * h * d, d, h * d, 1},
       {S * h * d, d, 1, h * d},
       {h * T * S, T * S, S, 1},
       B * T * h * d,
       B * S * h * d,
       B * h * T * S,
       false,
       false,
       TXRT_ACTIVATION_NONE,
       0.5f,
       0.0f},
      {"broadcast b",
       B,
       h,
       m,
       n,
       k,
       {h * m * k, m * k, k, 1},
       {0, 0, n, 1},
       {h * m * n, m * n, n, 1},
       B * h * m * k,
       k * n,
       B * h * m * n,
       true,
       false,
       TXRT_ACTIVATION_RELU,
       1.0f,
       0.0f},
      // k = 0 (an empty sequence): the epilogue of a zero product, where
      // both kernels returned with c unwritten.
      {"empty contraction",
       1,
       2,
       m,
       n,
       0,
       {0, m, 1, 1},
       {0, n, n, 1},
       {0, m * n, n, 1},
       1,
       1,
       2 * m * n,
       true,
       true,
       TXRT_ACTIVATION_GELU,
       1.0f,
       1.0f},
  };
  for (const MatmulCase &c : cases) {
    Floats a = randomFloats(c.aSize, 160), b = randomFloats(c.bSize, 161),
           bias = randomFloats(c.n, 162), residual = randomFloats(c.cSize, 163),
           c0 = randomFloats(c.cSize, 164);
    Floats expected = c0;
    expectCpuOk(txrt_matmul(cpu_, 23, c.batch0, c.batch1, c.m, c.n, c.k,
                            a.data(), c.aStrides.data(), b.data(),
                            c.bStrides.data(), expected.data(),
                            c.cStrides.data(), c.bias ? bias.data() : nullptr,
                            c.activation,
                            c.residual ? residual.data() : nullptr, c.alpha,
                            c.beta));
    DeviceBuffer<float> ga(gpu_, a), gb(gpu_, b), gbias(gpu_, bias),
        gres(gpu_, residual),
        gc(gpu_, c.beta != 0.0f ? c0 : Floats(c.cSize, kNaN));
    expectGpuOk(txrt_cuda_matmul(
        gpu_, 23, c.batch0, c.batch1, c.m, c.n, c.k, ga.get(),
        c.aStrides.data(), gb.get(), c.bStrides.data(), gc.get(),
        c.cStrides.data(), c.bias ? gbias.get() : nullptr, c.activation,
        c.residual ? gres.get() : nullptr, c.alpha, c.beta));
    expectNear(gc.read(), expected, kStrict, c.name);
  }
}

class CudaLayerNormTest : public CudaTest {};

TEST_F(CudaLayerNormTest, ForwardAndBackwardMatchCpu) {
  const int64_t rows = 19, cols = 300;
  const float eps = 1e-5f;
  Floats x = randomFloats(rows * cols, 20, -2.0f, 3.0f),
         gamma = randomFloats(cols, 21, 0.5f, 1.5f),
         beta = randomFloats(cols, 22), dy = randomFloats(rows * cols, 23);
  Floats y(rows * cols), mean(rows), var(rows);
  expectCpuOk(txrt_layer_norm_fwd(cpu_, 4, rows, cols, x.data(), gamma.data(),
                                  beta.data(), eps, y.data(), mean.data(),
                                  var.data()));
  DeviceBuffer<float> gx(gpu_, x), gg(gpu_, gamma), gb(gpu_, beta),
      gdy(gpu_, dy), gy(gpu_, rows * cols, kNaN), gmean(gpu_, rows, kNaN),
      gvar(gpu_, rows, kNaN);
  expectGpuOk(txrt_cuda_layer_norm_fwd(gpu_, 4, rows, cols, gx.get(),
                                       gg.get(), gb.get(), eps, gy.get(),
                                       gmean.get(), gvar.get()));
  expectNear(gy.read(), y, kStrict, "y");
  expectNear(gmean.read(), mean, kStrict, "mean");
  expectNear(gvar.read(), var, kStrict, "var");

  Floats dx(rows * cols), dgamma(cols), dbeta(cols);
  expectCpuOk(txrt_layer_norm_bwd(cpu_, 4, rows, cols, x.data(), gamma.data(),
                                  mean.data(), var.data(), eps, dy.data(),
                                  dx.data(), dgamma.data(), dbeta.data(), 0,
                                  0));
  for (bool saved : {true, false}) {
    std::string what = saved ? " (saved)" : " (recomputed)";
    expectCpuOk(txrt_layer_norm_bwd(
        cpu_, 4, rows, cols, x.data(), gamma.data(),
        saved ? mean.data() : nullptr, saved ? var.data() : nullptr, eps,
        dy.data(), dx.data(), dgamma.data(), dbeta.data(), 0, 0));
    DeviceBuffer<float> gdx(gpu_, rows * cols, kNaN), gdg(gpu_, cols, kNaN),
        gdb(gpu_, cols, kNaN);
    expectGpuOk(txrt_cuda_layer_norm_bwd(
        gpu_, 4, rows, cols, gx.get(), gg.get(),
        saved ? gmean.get() : nullptr, saved ? gvar.get() : nullptr, eps,
        gdy.get(), gdx.get(), gdg.get(), gdb.get(), 0, 0));
    expectNear(gdx.read(), dx, kStrict, "dx" + what);
    expectNear(gdg.read(), dgamma, kStrict, "dgamma" + what);
    expectNear(gdb.read(), dbeta, kStrict, "dbeta" + what);
  }
}

TEST_F(CudaLayerNormTest, AddLayerNormForwardAndBackwardMatchCpu) {
  const int64_t rows = 13, cols = 512;
  const float eps = 1e-6f;
  Floats x = randomFloats(rows * cols, 30), r = randomFloats(rows * cols, 31),
         gamma = randomFloats(cols, 32, 0.5f, 1.5f),
         beta = randomFloats(cols, 33), dy = randomFloats(rows * cols, 34),
         dsum = randomFloats(rows * cols, 35);
  Floats y(rows * cols), sum(rows * cols), mean(rows), var(rows);
  expectCpuOk(txrt_add_layer_norm_fwd(cpu_, 5, rows, cols, x.data(), r.data(),
                                      gamma.data(), beta.data(), eps, y.data(),
                                      sum.data(), mean.data(), var.data()));
  DeviceBuffer<float> gx(gpu_, x), gr(gpu_, r), gg(gpu_, gamma),
      gb(gpu_, beta), gdy(gpu_, dy), gdsum(gpu_, dsum),
      gy(gpu_, rows * cols, kNaN), gsum(gpu_, rows * cols, kNaN),
      gmean(gpu_, rows, kNaN), gvar(gpu_, rows, kNaN);
  expectGpuOk(txrt_cuda_add_layer_norm_fwd(
      gpu_, 5, rows, cols, gx.get(), gr.get(), gg.get(), gb.get(), eps,
      gy.get(), gsum.get(), gmean.get(), gvar.get()));
  expectNear(gy.read(), y, kStrict, "y");
  expectNear(gsum.read(), sum, kStrict, "sum");

  Floats dx(rows * cols), dgamma(cols), dbeta(cols);
  expectCpuOk(txrt_add_layer_norm_bwd(
      cpu_, 5, rows, cols, x.data(), r.data(), sum.data(), gamma.data(),
      mean.data(), var.data(), eps, dy.data(), dsum.data(), dx.data(),
      dgamma.data(), dbeta.data(), 0, 0));
  // From the saved sum and statistics, and with both recomputed.
  for (bool saved : {true, false}) {
    std::string what = saved ? " (saved)" : " (recomputed)";
    expectCpuOk(txrt_add_layer_norm_bwd(
        cpu_, 5, rows, cols, x.data(), r.data(), saved ? sum.data() : nullptr,
        gamma.data(), saved ? mean.data() : nullptr,
        saved ? var.data() : nullptr, eps, dy.data(), dsum.data(), dx.data(),
        dgamma.data(), dbeta.data(), 0, 0));
    DeviceBuffer<float> gdx(gpu_, rows * cols, kNaN), gdg(gpu_, cols, kNaN),
        gdb(gpu_, cols, kNaN);
    expectGpuOk(txrt_cuda_add_layer_norm_bwd(
        gpu_, 5, rows, cols, gx.get(), gr.get(), saved ? gsum.get() : nullptr,
        gg.get(), saved ? gmean.get() : nullptr, saved ? gvar.get() : nullptr,
        eps, gdy.get(), gdsum.get(), gdx.get(), gdg.get(), gdb.get(), 0, 0));
    expectNear(gdx.read(), dx, kStrict, "dx" + what);
    expectNear(gdg.read(), dgamma, kStrict, "dgamma" + what);
    expectNear(gdb.read(), dbeta, kStrict, "dbeta" + what);
  }
}

TEST_F(CudaLayerNormTest, RmsNormWithResidualForwardAndBackwardMatchCpu) {
  const int64_t rows = 11, cols = 384;
  const float eps = 1e-6f;
  Floats x = randomFloats(rows * cols, 90), r = randomFloats(rows * cols, 91),
         gamma = randomFloats(cols, 92, 0.5f, 1.5f),
         dy = randomFloats(rows * cols, 93), dsum = randomFloats(rows * cols, 94),
         dx0 = randomFloats(rows * cols, 95), dg0 = randomFloats(cols, 96);
  DeviceBuffer<float> gx(gpu_, x), gr(gpu_, r), gg(gpu_, gamma), gdy(gpu_, dy),
      gdsum(gpu_, dsum);
  for (bool residual : {false, true}) {
    std::string what = residual ? "rms residual " : "rms ";
    const float *rr = residual ? r.data() : nullptr;
    const float *grr = residual ? gr.get() : nullptr;
    Floats y(rows * cols), sum(rows * cols);
    expectCpuOk(txrt_rms_norm_fwd(cpu_, 11, rows, cols, x.data(), rr,
                                  gamma.data(), eps, y.data(),
                                  residual ? sum.data() : nullptr));
    DeviceBuffer<float> gy(gpu_, rows * cols, kNaN),
        gsum(gpu_, rows * cols, kNaN);
    expectGpuOk(txrt_cuda_rms_norm_fwd(gpu_, 11, rows, cols, gx.get(), grr,
                                       gg.get(), eps, gy.get(),
                                       residual ? gsum.get() : nullptr));
    expectNear(gy.read(), y, kStrict, what + "y");
    if (residual)
      expectNear(gsum.read(), sum, kStrict, what + "sum");
    for (int32_t accumulate : {0, 1}) {
      Floats dx = dx0, dgamma = dg0;
      expectCpuOk(txrt_rms_norm_bwd(cpu_, 11, rows, cols, x.data(), rr,
                                    gamma.data(), eps, dy.data(),
                                    residual ? dsum.data() : nullptr,
                                    dx.data(), dgamma.data(), accumulate,
                                    accumulate));
      DeviceBuffer<float> gdx(gpu_, accumulate ? dx0 : Floats(rows * cols, kNaN)),
          gdg(gpu_, accumulate ? dg0 : Floats(cols, kNaN));
      expectGpuOk(txrt_cuda_rms_norm_bwd(
          gpu_, 11, rows, cols, gx.get(), grr, gg.get(), eps, gdy.get(),
          residual ? gdsum.get() : nullptr, gdx.get(), gdg.get(), accumulate,
          accumulate));
      std::string suffix = accumulate ? " (accumulate)" : "";
      expectNear(gdx.read(), dx, kStrict, what + "dx" + suffix);
      expectNear(gdg.read(), dgamma, kStrict, what + "dgamma" + suffix);
    }
  }
}

class CudaActivationTest : public CudaTest {};

TEST_F(CudaActivationTest, ForwardAndBackwardOfEachMatchCpu) {
  const int64_t n = 5003;
  Floats x = randomFloats(n, 100, -4.0f, 4.0f), dy = randomFloats(n, 101);
  x[0] = 0.0f; // relu'(0) = 0, as oneDNN's
  DeviceBuffer<float> gx(gpu_, x), gdy(gpu_, dy);
  for (int32_t act : {TXRT_ACTIVATION_RELU, TXRT_ACTIVATION_GELU,
                      TXRT_ACTIVATION_GELU_TANH, TXRT_ACTIVATION_SILU}) {
    std::string what = "activation " + std::to_string(act);
    Floats y(n), dx(n);
    expectCpuOk(txrt_activation_fwd(cpu_, 12, act, n, x.data(), y.data()));
    expectCpuOk(
        txrt_activation_bwd(cpu_, 12, act, n, x.data(), dy.data(), dx.data()));
    DeviceBuffer<float> gy(gpu_, n, kNaN), gdx(gpu_, n, kNaN);
    expectGpuOk(txrt_cuda_activation_fwd(gpu_, 12, act, n, gx.get(), gy.get()));
    expectGpuOk(txrt_cuda_activation_bwd(gpu_, 12, act, n, gx.get(), gdy.get(),
                                         gdx.get()));
    expectNear(gy.read(), y, kStrict, what + " y");
    expectNear(gdx.read(), dx, kStrict, what + " dx");
  }
}

// relu's gradient selects (as the CPU kernel and PyTorch): an infinite dy
// where x <= 0 gives 0, not inf * 0 = NaN.
TEST_F(CudaActivationTest, ReluBackwardOfAnInfiniteGradientIsZeroWhereCut) {
  const float inf = std::numeric_limits<float>::infinity();
  Floats x = {-1.0f, 0.0f, 2.0f, -3.0f}, dy = {inf, inf, inf, 0.5f};
  DeviceBuffer<float> gx(gpu_, x), gdy(gpu_, dy), gdx(gpu_, 4, kNaN);
  expectGpuOk(txrt_cuda_activation_bwd(gpu_, 13, TXRT_ACTIVATION_RELU, 4,
                                       gx.get(), gdy.get(), gdx.get()));
  EXPECT_EQ(gdx.read(), (Floats{0.0f, 0.0f, inf, 0.0f}));
}

class CudaBroadcastTest : public CudaTest {};

TEST_F(CudaBroadcastTest, BinaryOpsBroadcastLikeTheCpu) {
  const std::vector<int64_t> aDims = {2, 1, 5, 4}, bDims = {1, 3, 5, 1};
  const int64_t aSize = 2 * 5 * 4, bSize = 3 * 5, cSize = 2 * 3 * 5 * 4;
  Floats a = randomFloats(aSize, 150), b = randomFloats(bSize, 151, 0.5f, 2.0f);
  DeviceBuffer<float> ga(gpu_, a), gb(gpu_, b);
  for (int32_t op = TXRT_BINARY_ADD; op <= TXRT_BINARY_MIN; ++op) {
    Floats c(cSize);
    expectCpuOk(txrt_binary(cpu_, 20, op, 4, aDims.data(), a.data(),
                            bDims.data(), b.data(), c.data()));
    DeviceBuffer<float> gc(gpu_, cSize, kNaN);
    expectGpuOk(txrt_cuda_binary(gpu_, 20, op, 4, aDims.data(), ga.get(),
                                 bDims.data(), gb.get(), gc.get()));
    expectNear(gc.read(), c, kStrict, "binary op " + std::to_string(op));
  }
}

TEST_F(CudaBroadcastTest, ReductionsOverSeveralDims) {
  const std::vector<int64_t> xDims = {3, 4, 5, 6};
  Floats x = randomFloats(3 * 4 * 5 * 6, 152);
  DeviceBuffer<float> gx(gpu_, x);
  for (std::vector<int64_t> yDims :
       {std::vector<int64_t>{3, 1, 5, 1}, std::vector<int64_t>{1, 4, 5, 6},
        std::vector<int64_t>{1, 1, 1, 1}, std::vector<int64_t>{3, 4, 5, 1}}) {
    int64_t ySize = yDims[0] * yDims[1] * yDims[2] * yDims[3];
    for (int32_t op = TXRT_REDUCE_SUM; op <= TXRT_REDUCE_MIN; ++op) {
      Floats y(ySize);
      expectCpuOk(txrt_reduce(cpu_, 21, op, 4, xDims.data(), x.data(),
                              yDims.data(), y.data()));
      DeviceBuffer<float> gy(gpu_, ySize, kNaN);
      expectGpuOk(txrt_cuda_reduce(gpu_, 21, op, 4, xDims.data(), gx.get(),
                                   yDims.data(), gy.get()));
      expectNear(gy.read(), y, kStrict,
                 "reduce op " + std::to_string(op) + " to " +
                     std::to_string(ySize));
    }
  }
}

TEST_F(CudaBroadcastTest, ArgmaxTakesTheFirstMaximum) {
  const int64_t rows = 6, cols = 1000;
  Floats x = randomFloats(rows * cols, 153);
  x[1 * cols + 10] = x[1 * cols + 700] = 5.0f; // a tie: the first wins
  x[2 * cols + 999] = 9.0f;
  std::vector<int32_t> out(rows);
  expectCpuOk(txrt_argmax(cpu_, 22, rows, cols, x.data(), out.data()));
  DeviceBuffer<float> gx(gpu_, x);
  DeviceBuffer<int32_t> gout(gpu_, rows, -1);
  expectGpuOk(txrt_cuda_argmax(gpu_, 22, rows, cols, gx.get(), gout.get()));
  EXPECT_EQ(gout.read(), out);
  EXPECT_EQ(out[1], 10);
}

class CudaSoftmaxTest : public CudaTest {};

TEST_F(CudaSoftmaxTest, SoftmaxAndLogSoftmaxForwardBackwardMatchCpu) {
  const int64_t rows = 17, cols = 1000;
  Floats x = randomFloats(rows * cols, 80, -5.0f, 5.0f),
         dy = randomFloats(rows * cols, 81);
  DeviceBuffer<float> gx(gpu_, x), gdy(gpu_, dy);
  for (int32_t log : {0, 1}) {
    std::string what = log ? "log_softmax " : "softmax ";
    Floats y(rows * cols), dx(rows * cols);
    expectCpuOk(txrt_softmax_fwd(cpu_, 9, rows, cols, x.data(), y.data(), log));
    expectCpuOk(txrt_softmax_bwd(cpu_, 9, rows, cols, y.data(), dy.data(),
                                 dx.data(), log));
    DeviceBuffer<float> gy(gpu_, rows * cols, kNaN),
        gdx(gpu_, rows * cols, kNaN);
    expectGpuOk(
        txrt_cuda_softmax_fwd(gpu_, 9, rows, cols, gx.get(), gy.get(), log));
    expectNear(gy.read(), y, kStrict, what + "y");
    expectGpuOk(txrt_cuda_softmax_bwd(gpu_, 9, rows, cols, gy.get(),
                                      gdy.get(), gdx.get(), log));
    expectNear(gdx.read(), dx, kStrict, what + "dx");
  }
}

TEST_F(CudaSoftmaxTest, SumSquaresAccumulates) {
  const int64_t n = 300007;
  Floats x = randomFloats(n, 82);
  float expected = 0.5f;
  expectCpuOk(txrt_sum_squares(cpu_, 10, n, x.data(), &expected));
  DeviceBuffer<float> gx(gpu_, x), acc(gpu_, Floats{0.5f});
  expectGpuOk(txrt_cuda_sum_squares(gpu_, 10, n, gx.get(), acc.get()));
  expectNear(acc.read(), Floats{expected}, kStrict, "sum of squares");
}

class CudaCrossEntropyTest : public CudaTest {};

TEST_F(CudaCrossEntropyTest, SmoothingIgnoreIndexBothReductions) {
  const int64_t n = 29, classes = 1000;
  const int32_t ignore = 0;
  Floats logits = randomFloats(n * classes, 40, -4.0f, 4.0f);
  Ints targets(n);
  for (int64_t i = 0; i < n; ++i)
    targets[i] = int32_t((i * 37 + 5) % classes);
  targets[3] = targets[11] = ignore;
  DeviceBuffer<float> gl(gpu_, logits);
  DeviceBuffer<int32_t> gt(gpu_, targets);
  for (int32_t reduction : {TXRT_LOSS_MEAN, TXRT_LOSS_SUM}) {
    for (float smoothing : {0.0f, 0.1f}) {
      std::string what = std::string(reduction ? "sum" : "mean") +
                         " smoothing " + std::to_string(smoothing);
      float loss = 0.0f;
      int64_t count = 0;
      Floats lse(n), rowLoss(n);
      expectCpuOk(txrt_cross_entropy_fwd(
          cpu_, 6, n, classes, logits.data(), targets.data(), ignore,
          smoothing, reduction, &loss, lse.data(), rowLoss.data(), &count));
      DeviceBuffer<float> gloss(gpu_, 1, kNaN), glse(gpu_, n, kNaN),
          grow(gpu_, n, kNaN);
      DeviceBuffer<int64_t> gcount(gpu_, 1, -1);
      expectGpuOk(txrt_cuda_cross_entropy_fwd(
          gpu_, 6, n, classes, gl.get(), gt.get(), ignore, smoothing,
          reduction, gloss.get(), glse.get(), grow.get(), gcount.get()));
      expectNear(gloss.read(), Floats{loss}, kStrict, "loss " + what);
      expectNear(glse.read(), lse, kStrict, "lse " + what);
      expectNear(grow.read(), rowLoss, kStrict, "row loss " + what);
      EXPECT_EQ(gcount.read()[0], count) << what;

      const float dloss = 0.75f;
      Floats dlogits(n * classes);
      expectCpuOk(txrt_cross_entropy_bwd(
          cpu_, 6, n, classes, logits.data(), targets.data(), lse.data(),
          ignore, smoothing, reduction, &dloss, dlogits.data()));
      DeviceBuffer<float> gdloss(gpu_, Floats{dloss});
      for (bool saved : {true, false}) {
        expectCpuOk(txrt_cross_entropy_bwd(
            cpu_, 6, n, classes, logits.data(), targets.data(),
            saved ? lse.data() : nullptr, ignore, smoothing, reduction, &dloss,
            dlogits.data()));
        DeviceBuffer<float> gdl(gpu_, n * classes, kNaN);
        expectGpuOk(txrt_cuda_cross_entropy_bwd(
            gpu_, 6, n, classes, gl.get(), gt.get(),
            saved ? glse.get() : nullptr, ignore, smoothing, reduction,
            gdloss.get(), gdl.get()));
        expectNear(gdl.read(), dlogits, kStrict,
                   "dlogits " + what + (saved ? " (saved lse)" : ""));
      }
    }
  }
}

class CudaEmbeddingTest : public CudaTest {};

TEST_F(CudaEmbeddingTest, GatherWithPositionsAndScatterAdd) {
  const int64_t vocab = 50, dim = 64, seqLen = 7, n = 3 * seqLen;
  const float scale = 8.0f;
  Floats table = randomFloats(vocab * dim, 50), pos = randomFloats(seqLen * dim, 51),
         dout = randomFloats(n * dim, 52), dtable0 = randomFloats(vocab * dim, 53);
  Ints ids(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = int32_t((i * 7) % 11); // repeats, and the padding id 0
  Floats out(n * dim);
  expectCpuOk(txrt_embedding_fwd(cpu_, 7, n, vocab, dim, ids.data(),
                                 table.data(), scale, pos.data(), seqLen,
                                 out.data()));
  DeviceBuffer<float> gtable(gpu_, table), gpos(gpu_, pos), gdout(gpu_, dout),
      gout(gpu_, n * dim, kNaN);
  DeviceBuffer<int32_t> gids(gpu_, ids);
  expectGpuOk(txrt_cuda_embedding_fwd(gpu_, 7, n, vocab, dim, gids.get(),
                                      gtable.get(), scale, gpos.get(), seqLen,
                                      gout.get()));
  expectNear(gout.read(), out, kStrict, "out");
  for (int32_t accumulate : {0, 1}) {
    Floats dtable = dtable0;
    expectCpuOk(txrt_embedding_bwd(cpu_, 7, n, vocab, dim, ids.data(),
                                   dout.data(), scale, 0, dtable.data(),
                                   accumulate));
    DeviceBuffer<float> gdt(gpu_, accumulate ? dtable0 : Floats(vocab * dim, kNaN));
    expectGpuOk(txrt_cuda_embedding_bwd(gpu_, 7, n, vocab, dim, gids.get(),
                                        gdout.get(), scale, 0, gdt.get(),
                                        accumulate));
    expectNear(gdt.read(), dtable, kStrict,
               accumulate ? "dtable (accumulate)" : "dtable");
  }
}

TEST_F(CudaEmbeddingTest, BadIdsAndTargetsAreReportedBySynchronize) {
  const int64_t vocab = 10, dim = 8, n = 4;
  Floats table = randomFloats(vocab * dim, 54);
  DeviceBuffer<float> gtable(gpu_, table), gout(gpu_, n * dim, kNaN);
  DeviceBuffer<int32_t> gids(gpu_, Ints{1, 2, 12, 3});
  expectGpuOk(txrt_cuda_embedding_fwd(gpu_, 7, n, vocab, dim, gids.get(),
                                      gtable.get(), 1.0f, nullptr, 1,
                                      gout.get()));
  EXPECT_EQ(txrt_cuda_synchronize(gpu_), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(txrt_cuda_last_error(gpu_)),
            "txrt_cuda_synchronize: invalid argument: txrt_cuda_embedding_fwd "
            "/ _bwd: id 12 at index 2 is outside [0, 10)");
  // Reported once; the context goes on.
  expectGpuOk(txrt_cuda_synchronize(gpu_));

  DeviceBuffer<float> glogits(gpu_, randomFloats(2 * 5, 55)),
      gloss(gpu_, 1, kNaN);
  DeviceBuffer<int32_t> gtargets(gpu_, Ints{4, -3});
  expectGpuOk(txrt_cuda_cross_entropy_fwd(gpu_, 6, 2, 5, glogits.get(),
                                          gtargets.get(), -100, 0.0f,
                                          TXRT_LOSS_MEAN, gloss.get(), nullptr,
                                          nullptr, nullptr));
  EXPECT_EQ(txrt_cuda_synchronize(gpu_), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(txrt_cuda_last_error(gpu_)),
            "txrt_cuda_synchronize: invalid argument: "
            "txrt_cuda_cross_entropy_fwd / _bwd: target -3 at index 1 is "
            "outside [0, 5)");
  expectGpuOk(txrt_cuda_synchronize(gpu_));
}

class CudaDropoutTest : public CudaTest {};

TEST_F(CudaDropoutTest, SameMaskAndValuesAsCpuBitForBit) {
  for (int64_t n : {1, 3, 63, 64, 65, 1000, 100003}) {
    for (float p : {0.0f, 0.1f, 0.5f}) {
      Floats x = randomFloats(n, uint32_t(n), 0.5f, 1.5f), y(n);
      expectCpuOk(txrt_dropout_fwd(cpu_, 17, n, p, 0x123456789ull, 42,
                                   x.data(), y.data()));
      DeviceBuffer<float> gx(gpu_, x), gy(gpu_, n, kNaN);
      expectGpuOk(txrt_cuda_dropout_fwd(gpu_, 17, n, p, 0x123456789ull, 42,
                                        gx.get(), gy.get()));
      Floats got = gy.read();
      ASSERT_EQ(std::memcmp(got.data(), y.data(), n * sizeof(float)), 0)
          << "forward n " << n << " p " << p;
      Floats dx(n);
      expectCpuOk(txrt_dropout_bwd(cpu_, 17, n, p, 0x123456789ull, 42,
                                   x.data(), dx.data()));
      DeviceBuffer<float> gdx(gpu_, n, kNaN);
      expectGpuOk(txrt_cuda_dropout_bwd(gpu_, 17, n, p, 0x123456789ull, 42,
                                        gx.get(), gdx.get()));
      got = gdx.read();
      ASSERT_EQ(std::memcmp(got.data(), dx.data(), n * sizeof(float)), 0)
          << "backward n " << n << " p " << p;
    }
  }
}

TEST_F(CudaDropoutTest, APieceOfTheBatchDrawsItsRowsMasks) {
  // Rows [first, first + count) of a batch of 7 rows of `width` elements
  // (widths that do and do not fill Philox's 4-word counters) drop what
  // the whole batch drops in those rows, as on the CPU.
  for (int64_t width : {1, 3, 4, 37}) {
    const int64_t rows = 7, n = rows * width;
    Floats x = randomFloats(size_t(n), uint32_t(width), 0.5f, 1.5f), whole(n);
    expectCpuOk(txrt_dropout_fwd(cpu_, 5, n, 0.3f, 99, 3, x.data(),
                                 whole.data()));
    for (int64_t first : {0, 1, 2, 5}) {
      const int64_t count = rows - first < 2 ? rows - first : 2;
      const int64_t m = count * width;
      Floats piece(x.begin() + first * width, x.begin() + first * width + m);
      txrt_cuda_context_set_batch_rows(gpu_, first, count);
      DeviceBuffer<float> gx(gpu_, piece), gy(gpu_, m, kNaN);
      expectGpuOk(txrt_cuda_dropout_fwd(gpu_, 5, m, 0.3f, 99, 3, gx.get(),
                                        gy.get()));
      Floats got = gy.read();
      ASSERT_EQ(std::memcmp(got.data(), whole.data() + first * width,
                            size_t(m) * sizeof(float)),
                0)
          << "width " << width << " rows " << first << ".." << first + count;
    }
    txrt_cuda_context_set_batch_rows(gpu_, 0, 0);
  }
}

class CudaAdamTest : public CudaTest {};

TEST_F(CudaAdamTest, ThreeStepsMatchCpu) {
  const int64_t n = 10007;
  Floats param = randomFloats(n, 60), m(n, 0.0f), v(n, 0.0f);
  DeviceBuffer<float> gp(gpu_, param), gm(gpu_, m), gv(gpu_, v);
  for (int64_t step = 1; step <= 3; ++step) {
    Floats grad = randomFloats(n, uint32_t(60 + step));
    DeviceBuffer<float> gg(gpu_, grad);
    expectCpuOk(txrt_adam_update(cpu_, 8, n, param.data(), grad.data(),
                                 m.data(), v.data(), 1e-3f, 0.9f, 0.98f, 1e-9f,
                                 0.01f, step));
    expectGpuOk(txrt_cuda_adam_update(gpu_, 8, n, gp.get(), gg.get(), gm.get(),
                                      gv.get(), 1e-3f, 0.9f, 0.98f, 1e-9f,
                                      0.01f, step));
  }
  expectNear(gp.read(), param, kStrict, "param");
  expectNear(gm.read(), m, kStrict, "m");
  expectNear(gv.read(), v, kStrict, "v");
}

TEST_F(CudaAdamTest, StepUsesTheTrainStateScheduleAndGradScale) {
  const int64_t n = 4099;
  Floats param = randomFloats(n, 64), m = randomFloats(n, 65, 0.0f, 0.1f),
         v = randomFloats(n, 66, 0.0f, 0.1f), grad = randomFloats(n, 67);
  DeviceBuffer<float> gp(gpu_, param), gm(gpu_, m), gv(gpu_, v),
      gg(gpu_, grad), gscale(gpu_, Floats{0.5f});
  // Without a training step it is an error, as on the CPU.
  EXPECT_EQ(txrt_cuda_adam_step(gpu_, 13, n, gp.get(), gg.get(), gm.get(),
                                gv.get(), nullptr, TXRT_LR_NOAM, 1.0f, 64.0f,
                                100.0f, 0.9f, 0.98f, 1e-9f, 0.0f),
            TXRT_ERROR_INVALID_ARGUMENT);
  txrt_context_set_train_state(cpu_, 7, 42);
  txrt_cuda_context_set_train_state(gpu_, 7, 42);
  int64_t step = 0, seed = 0;
  expectGpuOk(txrt_cuda_train_state(gpu_, &step, &seed));
  EXPECT_EQ(step, 7);
  EXPECT_EQ(seed, 42);
  const float scale = 0.5f;
  expectCpuOk(txrt_adam_step(cpu_, 13, n, param.data(), grad.data(), m.data(),
                             v.data(), &scale, TXRT_LR_NOAM, 1.0f, 64.0f,
                             100.0f, 0.9f, 0.98f, 1e-9f, 0.0f));
  expectGpuOk(txrt_cuda_adam_step(gpu_, 13, n, gp.get(), gg.get(), gm.get(),
                                  gv.get(), gscale.get(), TXRT_LR_NOAM, 1.0f,
                                  64.0f, 100.0f, 0.9f, 0.98f, 1e-9f, 0.0f));
  expectNear(gp.read(), param, kStrict, "param");
  expectNear(gm.read(), m, kStrict, "m");
  expectNear(gv.read(), v, kStrict, "v");
}

class CudaEmaTest : public CudaTest {};

// train --ema's device update against the driver's host update
// (runtime/driver/loop/Ema.cpp) bit for bit: odd sizes, three updates in a
// row, decays near 1, as DriverDevice.cpp calls it after every step.
TEST_F(CudaEmaTest, UpdateAverageHasTheHostUpdatesBits) {
  for (int64_t n : {1, 37, 3001, 1000003})
    for (float decay : {0.5f, 0.9f, 0.999f}) {
      const Floats params = randomFloats(size_t(n), uint32_t(70 + n));
      Floats average = randomFloats(size_t(n), uint32_t(71 + n), -3.0f, 3.0f);
      DeviceBuffer<float> gp(gpu_, params), ga(gpu_, average);
      for (int update = 0; update < 3; ++update) {
        txrt::driver::updateAverage(average.data(), params.data(), n, decay);
        expectGpuOk(
            txrt_cuda_update_average(gpu_, ga.get(), gp.get(), n, decay));
      }
      const Floats got = ga.read();
      EXPECT_EQ(std::memcmp(got.data(), average.data(), size_t(n) * 4), 0)
          << "n " << n << ", decay " << decay;
    }
}

TEST_F(CudaEmaTest, UpdateAverageChecksItsArguments) {
  DeviceBuffer<float> ga(gpu_, Floats{1.0f}), gp(gpu_, Floats{2.0f});
  EXPECT_EQ(txrt_cuda_update_average(gpu_, ga.get(), gp.get(), -1, 0.5f),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_cuda_update_average(gpu_, ga.get(), gp.get(), 1, 1.5f),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_cuda_update_average(gpu_, nullptr, gp.get(), 1, 0.5f),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_)).find("NULL"),
            std::string::npos);
  expectGpuOk(txrt_cuda_update_average(gpu_, nullptr, nullptr, 0, 0.5f));
  // A decay that rounds to 1 keeps the average, as on the host.
  expectGpuOk(txrt_cuda_update_average(gpu_, ga.get(), gp.get(), 1, 1.0f));
  EXPECT_EQ(ga.read(), Floats{1.0f});
}

class CudaArgmaxTest : public CudaTest {};

// Greedy decoding's choice on the device (kernels/Argmax.cu) against the
// driver's host search (AllowedIds::choose, decoding/Decoding.h): random
// rows of several widths, ties, NaN at id 0 and elsewhere, masked ids
// holding the largest logits, rows a stride apart.
TEST_F(CudaArgmaxTest, ChoosesAsTheHostSearch) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t vocab : {1, 255, 1000, 32003})
    for (int64_t stride : {vocab, 3 * vocab}) {
      const int64_t rows = 6;
      Floats logits = randomFloats(size_t(rows * stride), uint32_t(vocab),
                                   -4.0f, 4.0f);
      if (vocab > 300) {
        logits[size_t(0 * stride + 299)] = logits[size_t(0 * stride + 17)] = 9;
        logits[size_t(1 * stride + 0)] = kNaN;
        logits[size_t(2 * stride + 5)] = kNaN;
        logits[size_t(3 * stride + vocab - 1)] = 50.0f; // past emittable
        logits[size_t(4 * stride + 2)] = 50.0f;         // excluded
        for (int64_t id = 0; id < vocab; ++id)
          logits[size_t(5 * stride + id)] = -inf;
      }
      for (const txrt::driver::AllowedIds &allowed :
           {txrt::driver::AllowedIds{},
            txrt::driver::AllowedIds{vocab - 1, {2, 0}}}) {
        DeviceBuffer<float> gl(gpu_, logits);
        DeviceBuffer<int32_t> gi(gpu_, std::vector<int32_t>(rows, -1));
        expectGpuOk(txrt_cuda_argmax_rows(
            gpu_, gl.get(), rows, vocab, stride, allowed.emittable,
            allowed.excluded.data(), int64_t(allowed.excluded.size()),
            gi.get()));
        const std::vector<int32_t> got = gi.read();
        for (int64_t row = 0; row < rows; ++row) {
          // A choice whose logit is not finite comes back as -1 - id
          // (ArgmaxKernels.cuh), for the host to refuse: rows 1 and 2 (a
          // NaN wins, as in torch.argmax) and 5 (every logit -inf).
          const float *logitsOfRow = logits.data() + row * stride;
          const int32_t id = allowed.choose(logitsOfRow, vocab);
          const int32_t expected =
              std::isfinite(logitsOfRow[id]) ? id : -1 - id;
          EXPECT_EQ(got[size_t(row)], expected)
              << "vocab " << vocab << " stride " << stride << " row " << row
              << " emittable " << allowed.emittable;
        }
      }
    }
}

TEST_F(CudaArgmaxTest, ChecksItsArguments) {
  DeviceBuffer<float> gl(gpu_, Floats{1.0f, 2.0f});
  DeviceBuffer<int32_t> gi(gpu_, std::vector<int32_t>{0});
  const int32_t many[17] = {};
  EXPECT_EQ(txrt_cuda_argmax_rows(gpu_, gl.get(), 1, 2, 1, 0, nullptr, 0,
                                  gi.get()),
            TXRT_ERROR_INVALID_ARGUMENT); // stride below vocab
  EXPECT_EQ(txrt_cuda_argmax_rows(gpu_, gl.get(), 1, 2, 2, 0, many, 17,
                                  gi.get()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_cuda_argmax_rows(gpu_, nullptr, 1, 2, 2, 0, nullptr, 0,
                                  gi.get()),
            TXRT_ERROR_INVALID_ARGUMENT);
  expectGpuOk(txrt_cuda_argmax_rows(gpu_, nullptr, 0, 2, 2, 0, nullptr, 0,
                                    nullptr));
  expectGpuOk(txrt_cuda_argmax_rows(gpu_, gl.get(), 1, 2, 2, 0, nullptr, 0,
                                    gi.get()));
  EXPECT_EQ(gi.read(), std::vector<int32_t>{1});
}

} // namespace
