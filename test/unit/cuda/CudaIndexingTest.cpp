//===- CudaIndexingTest.cpp - gather, rope and the gated linear on CUDA ---===//
//
// The calls the GPT and Llama examples add, each against the CPU kernel:
// gather of f32 and bool rows with negative indices and its scatter-add
// gradient, rotary embeddings by position (forward and inverse, in place)
// and by an angle table, and the gated linear layer with a residual in place.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cstring>
#include <limits>

using namespace txrt_cuda_test;

namespace {

class CudaIndexingTest : public CudaTest {};

TEST_F(CudaIndexingTest, GatherRowsAndScatterAddGradient) {
  const int64_t outer = 3, n = 9, inner = 5, count = 7;
  Floats src = randomFloats(outer * n * inner, 120),
         dout = randomFloats(outer * count * inner, 121);
  Ints ids = {0, 8, -1, 3, 3, -9, 4};
  Floats out(outer * count * inner), dsrc(outer * n * inner);
  expectCpuOk(txrt_gather(cpu_, 14, outer, n, inner, 4, ids.data(), count,
                          src.data(), out.data()));
  expectCpuOk(txrt_gather_bwd(cpu_, 14, outer, n, inner, ids.data(), count,
                              dout.data(), dsrc.data()));
  DeviceBuffer<float> gsrc(gpu_, src), gdout(gpu_, dout),
      gout(gpu_, out.size(), kNaN), gdsrc(gpu_, dsrc.size(), kNaN);
  DeviceBuffer<int32_t> gids(gpu_, ids);
  expectGpuOk(txrt_cuda_gather(gpu_, 14, outer, n, inner, 4, gids.get(), count,
                               gsrc.get(), gout.get()));
  expectGpuOk(txrt_cuda_gather_bwd(gpu_, 14, outer, n, inner, gids.get(),
                                   count, gdout.get(), gdsrc.get()));
  Floats got = gout.read();
  EXPECT_EQ(std::memcmp(got.data(), out.data(), out.size() * sizeof(float)),
            0);
  expectNear(gdsrc.read(), dsrc, 1e-5, "dsrc");

  // Bool (byte) rows.
  std::vector<uint8_t> mask(outer * n * inner), maskOut(outer * count * inner);
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = uint8_t((i * 7) % 3 == 0);
  expectCpuOk(txrt_gather(cpu_, 15, outer, n, inner, 1, ids.data(), count,
                          mask.data(), maskOut.data()));
  DeviceBuffer<uint8_t> gmask(gpu_, mask), gmaskOut(gpu_, maskOut.size(), 7);
  expectGpuOk(txrt_cuda_gather(gpu_, 15, outer, n, inner, 1, gids.get(), count,
                               gmask.get(), gmaskOut.get()));
  EXPECT_EQ(gmaskOut.read(), maskOut);

  // An index outside [-n, n) is reported by synchronize.
  DeviceBuffer<int32_t> bad(gpu_, Ints{1, -10});
  expectGpuOk(txrt_cuda_gather(gpu_, 16, outer, n, inner, 4, bad.get(), 2,
                               gsrc.get(), gout.get()));
  EXPECT_EQ(txrt_cuda_synchronize(gpu_), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(txrt_cuda_last_error(gpu_)),
            "txrt_cuda_synchronize: invalid argument: txrt_cuda_gather / "
            "_bwd: index -10 at index 1 is outside [-9, 9)");
}

TEST_F(CudaIndexingTest, RopeByPositionAndByAngleTable) {
  const int64_t outer = 2, seq = 11, heads = 3, headDim = 64;
  const int64_t size = outer * seq * heads * headDim;
  Floats x = randomFloats(size, 130),
         angles = randomFloats(seq * headDim / 2, 131, -20.0f, 20.0f);
  DeviceBuffer<float> gx(gpu_, x), gangles(gpu_, angles);
  for (int32_t inverse : {0, 1}) {
    std::string what = inverse ? "inverse " : "";
    Floats y(size), z(size);
    expectCpuOk(txrt_rope(cpu_, 17, outer, seq, heads, headDim, x.data(),
                          y.data(), 1000, 10000.0f, inverse));
    expectCpuOk(txrt_rope_angles(cpu_, 18, outer, seq, heads, headDim,
                                 x.data(), z.data(), angles.data(), inverse));
    DeviceBuffer<float> gy(gpu_, size, kNaN), gz(gpu_, x);
    expectGpuOk(txrt_cuda_rope(gpu_, 17, outer, seq, heads, headDim, gx.get(),
                               gy.get(), 1000, 10000.0f, inverse));
    // In place.
    expectGpuOk(txrt_cuda_rope_angles(gpu_, 18, outer, seq, heads, headDim,
                                      gz.get(), gz.get(), gangles.get(),
                                      inverse));
    expectNear(gy.read(), y, 1e-5, what + "rope");
    expectNear(gz.read(), z, 1e-5, what + "rope_angles in place");
  }
}

TEST_F(CudaIndexingTest, GatedLinearWithResidualInPlace) {
  const int64_t m = 21, n = 34, k = 19;
  Floats x = randomFloats(m * k, 140), w = randomFloats(n * k, 141),
         bias = randomFloats(n, 142), gate = randomFloats(m * n, 143),
         residual = randomFloats(m * n, 144);
  DeviceBuffer<float> gx(gpu_, x), gw(gpu_, w), gb(gpu_, bias),
      gg(gpu_, gate);
  for (int32_t act : {TXRT_ACTIVATION_SILU, TXRT_ACTIVATION_GELU_TANH}) {
    Floats y = residual;
    expectCpuOk(txrt_linear_gated_fwd(cpu_, 19, m, n, k, x.data(), w.data(),
                                      bias.data(), act, gate.data(), y.data(),
                                      y.data()));
    DeviceBuffer<float> gy(gpu_, residual);
    expectGpuOk(txrt_cuda_linear_gated_fwd(gpu_, 19, m, n, k, gx.get(),
                                           gw.get(), gb.get(), act, gg.get(),
                                           gy.get(), gy.get()));
    expectNear(gy.read(), y, 1e-5, "gated act " + std::to_string(act));
  }
}

} // namespace
