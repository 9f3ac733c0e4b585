//===- CudaGradientExchangeTest.cpp - accumulation and NCCL on the GPU ---===//
//
// The device exchange (runtime/cuda/GradientExchange.cpp) against the CPU
// library's (runtime/lib/GradientExchange.cpp) in the same modes: two
// micro-batches accumulated then applied, with and without a one-rank NCCL
// communicator (what a machine with one GPU can run: the buckets go
// through ncclAllReduce on the second stream and Adam waits for them), and
// with gradient clipping. Buckets of 0.01 MB, so every site below has its
// own and several allreduces are in flight. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cstdlib>
#include <deque>

namespace {

using namespace txrt_cuda_test;

constexpr int kSites = 3;

/// Three sites of Adam, each with its own parameters and moments, trained
/// with two micro-batches (scales 0.25 and 0.75) on the CPU and the GPU.
class CudaGradientExchangeTest : public CudaTest {
protected:
  void SetUp() override {
    setenv("TXRT_BUCKET_MB", "0.01", 1);
    CudaTest::SetUp();
  }
  void TearDown() override {
    CudaTest::TearDown();
    unsetenv("TXRT_BUCKET_MB");
  }

  /// One update of two micro-batches; clip > 0: the step clips.
  void runUpdate(bool nccl, float clip) {
    const int64_t sizes[kSites] = {4099, 1000, 3001};
    if (nccl) {
      char id[TXRT_CUDA_NCCL_ID_BYTES];
      ASSERT_EQ(txrt_cuda_nccl_unique_id(id, sizeof(id)), TXRT_OK)
          << txrt_cuda_last_error(nullptr);
      expectGpuOk(txrt_cuda_context_join_ranks(gpu_, 0, 1, id, sizeof(id)));
    }
    if (clip > 0) {
      expectCpuOk(txrt_context_set_gradient_clip(cpu_, clip));
      expectGpuOk(txrt_cuda_context_set_gradient_clip(gpu_, clip));
    }
    txrt_context_set_train_state(cpu_, 1, 7);
    txrt_cuda_context_set_train_state(gpu_, 1, 7);
    std::vector<Floats> param, m, v;
    // A deque: DeviceBuffer neither copies nor moves.
    std::deque<DeviceBuffer<float>> gp, gm, gv;
    for (int s = 0; s < kSites; ++s) {
      param.push_back(randomFloats(size_t(sizes[s]), uint32_t(10 + s)));
      m.emplace_back(size_t(sizes[s]), 0.0f);
      v.emplace_back(size_t(sizes[s]), 0.0f);
    }
    for (int s = 0; s < kSites; ++s) {
      gp.emplace_back(gpu_, param[size_t(s)]);
      gm.emplace_back(gpu_, m[size_t(s)]);
      gv.emplace_back(gpu_, v[size_t(s)]);
    }
    const float one = 1.0f;
    DeviceBuffer<float> gscale(gpu_, Floats{1.0f});
    for (int micro = 0; micro < 2; ++micro) {
      int32_t mode = micro ? TXRT_GRADIENTS_APPLY : TXRT_GRADIENTS_ACCUMULATE;
      float scale = micro ? 0.75f : 0.25f;
      expectCpuOk(txrt_context_set_gradient_mode(cpu_, mode, scale));
      expectGpuOk(txrt_cuda_context_set_gradient_mode(gpu_, mode, scale));
      // The backward pass completes the sites last to first.
      for (int s = kSites - 1; s >= 0; --s) {
        Floats grad = randomFloats(size_t(sizes[s]), uint32_t(100 + 10 * micro + s),
                                   -3.0f, 3.0f);
        DeviceBuffer<float> gg(gpu_, grad);
        expectCpuOk(txrt_adam_step(cpu_, s, sizes[s], param[size_t(s)].data(),
                                   grad.data(), m[size_t(s)].data(),
                                   v[size_t(s)].data(), clip > 0 ? &one : nullptr,
                                   TXRT_LR_CONSTANT, 1e-3f, 0.0f, 0.0f, 0.9f,
                                   0.98f, 1e-9f, 0.0f));
        expectGpuOk(txrt_cuda_adam_step(
            gpu_, s, sizes[s], gp[size_t(s)].get(), gg.get(),
            gm[size_t(s)].get(), gv[size_t(s)].get(),
            clip > 0 ? gscale.get() : nullptr, TXRT_LR_CONSTANT, 1e-3f, 0.0f,
            0.0f, 0.9f, 0.98f, 1e-9f, 0.0f));
        // The gradient's buffer is freed here: the device must have read
        // it (the accumulation copies it into the bucket).
        expectGpuOk(txrt_cuda_synchronize(gpu_));
      }
    }
    expectCpuOk(txrt_context_finish_update(cpu_));
    expectGpuOk(txrt_cuda_context_finish_update(gpu_));
    for (int s = 0; s < kSites; ++s) {
      expectNear(gp[size_t(s)].read(), param[size_t(s)], kStrict, "param");
      expectNear(gm[size_t(s)].read(), m[size_t(s)], kStrict, "m");
      expectNear(gv[size_t(s)].read(), v[size_t(s)], kStrict, "v");
    }
    double waited = 0.0;
    int64_t bytes = 0;
    txrt_cuda_context_allreduce_stats(gpu_, &waited, &bytes);
    EXPECT_EQ(bytes, nccl ? int64_t(4099 + 1000 + 3001) * 4 : 0);
  }
};

TEST_F(CudaGradientExchangeTest, AccumulateThenApplyIsAdamOnTheScaledSum) {
  runUpdate(false, 0.0f);
}

TEST_F(CudaGradientExchangeTest, OneRankNcclSumsTheBucketsBeforeAdam) {
  runUpdate(true, 0.0f);
}

TEST_F(CudaGradientExchangeTest, ClippingOverNcclScalesByTheNormOfTheWholeUpdate) {
  // The gradients' norm is about 100: a bound of 1 bites.
  runUpdate(true, 1.0f);
}

TEST_F(CudaGradientExchangeTest, ClippingWithoutTheBoundIsAnError) {
  expectGpuOk(txrt_cuda_context_set_gradient_mode(gpu_, TXRT_GRADIENTS_APPLY,
                                                  1.0f));
  txrt_cuda_context_set_train_state(gpu_, 1, 7);
  Floats zeros(16, 0.0f);
  DeviceBuffer<float> p(gpu_, zeros), g(gpu_, zeros), m(gpu_, zeros),
      v(gpu_, zeros), scale(gpu_, Floats{1.0f});
  EXPECT_EQ(txrt_cuda_adam_step(gpu_, 0, 16, p.get(), g.get(), m.get(),
                                v.get(), scale.get(), TXRT_LR_CONSTANT, 1e-3f,
                                0.0f, 0.0f, 0.9f, 0.98f, 1e-9f, 0.0f),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_)).find("needs the bound"),
            std::string::npos)
      << txrt_cuda_last_error(gpu_);
}

} // namespace
