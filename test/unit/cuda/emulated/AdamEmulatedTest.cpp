//===- AdamEmulatedTest.cpp - the CUDA Adam kernel, emulated --------------===//
//
// The device code of txrt_cuda_adam_update / _step
// (runtime/cuda/kernels/AdamKernels.cuh) run on the host under
// CudaEmulation.h with the constants and launch Adam.cu computes, and
// compared with the CPU kernels (txrt_adam_update, txrt_adam_step) at
// CudaKernelsTest's tolerance: param, m and v over three steps with weight
// decay, the noam schedule with a grad scale, sizes that end a block part
// way, and a grid smaller than the elements.
//
//===----------------------------------------------------------------------===//
#include "EmulatedTestUtil.h"

#include "kernels/AdamKernels.cuh"

#include "txrt/txrt.h"

#include <cstring>

using namespace emu_test;
using namespace txrt::cuda;
using namespace txrt::cuda::adam;

namespace {

struct State {
  Floats param, m, v;
};

class AdamEmulatedTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override { txrt_context_destroy(cpu_); }

  /// Adam.cu's adamUpdate; `blocks` > 0 launches fewer blocks than the
  /// elements need (the grid stride).
  void emulatedUpdate(State &s, const Floats &grad, const float *gradScale,
                      float lr, float beta1, float beta2, float eps,
                      float weightDecay, int64_t step, unsigned blocks = 0) {
    const int64_t n = int64_t(s.param.size());
    const AdamConstants k = adamConstants(lr, beta1, beta2, step);
    KernelLaunch elements = adamLaunch(n);
    if (blocks > 0)
      elements.blocks = blocks;
    launch(elements, [&] {
      adamKernel(n, s.param.data(), grad.data(), gradScale, s.m.data(),
                 s.v.data(), k.stepSize, k.sqrtCorrection2, k.oneMinusBeta1,
                 k.beta2, k.oneMinusBeta2, eps, weightDecay, nullptr);
    });
  }

  /// The launch a captured step makes: the step-dependent scalars from the
  /// device's StepState slot, the host arguments stale (those of step 1).
  void emulatedCapturedUpdate(State &s, const Floats &grad, float beta1,
                              float beta2, float eps,
                              const AdamStepScalars *slot) {
    const int64_t n = int64_t(s.param.size());
    const AdamConstants stale = adamConstants(1.0f, beta1, beta2, 1);
    launch(adamLaunch(n), [&] {
      adamKernel(n, s.param.data(), grad.data(), nullptr, s.m.data(),
                 s.v.data(), stale.stepSize, stale.sqrtCorrection2,
                 stale.oneMinusBeta1, stale.beta2, stale.oneMinusBeta2, eps,
                 0.0f, slot);
    });
  }

  void expectSame(const State &got, const State &want,
                  const std::string &what) {
    expectNear(got.param, want.param, kStrict, what + " param");
    expectNear(got.m, want.m, kStrict, what + " m");
    expectNear(got.v, want.v, kStrict, what + " v");
  }

  /// Three steps of txrt_adam_update from zero moments.
  void checkThreeSteps(int64_t n, unsigned blocks = 0) {
    State cpu{randomFloats(n, 60), Floats(n, 0.0f), Floats(n, 0.0f)};
    State gpu = cpu;
    for (int64_t step = 1; step <= 3; ++step) {
      const Floats grad = randomFloats(n, uint32_t(60 + step));
      ASSERT_EQ(txrt_adam_update(cpu_, 8, n, cpu.param.data(), grad.data(),
                                 cpu.m.data(), cpu.v.data(), 1e-3f, 0.9f, 0.98f,
                                 1e-9f, 0.01f, step),
                TXRT_OK)
          << txrt_last_error(cpu_);
      emulatedUpdate(gpu, grad, nullptr, 1e-3f, 0.9f, 0.98f, 1e-9f, 0.01f, step,
                     blocks);
    }
    expectSame(gpu, cpu, "n " + std::to_string(n));
  }

  txrt_context *cpu_ = nullptr;
};

TEST_F(AdamEmulatedTest, ThreeStepsMatchCpu) { checkThreeSteps(10007); }

TEST_F(AdamEmulatedTest, SizesThatEndABlockPartWay) {
  checkThreeSteps(1);
  checkThreeSteps(257);
}

TEST_F(AdamEmulatedTest, AGridSmallerThanTheElementsLoops) {
  checkThreeSteps(2000, 3); // 768 threads, three passes
}

TEST_F(AdamEmulatedTest, StepUsesTheScheduleAndGradScale) {
  // txrt_cuda_adam_step: the rate of txrt_learning_rate at the train step,
  // grad_scale read on the device.
  const int64_t n = 4099, step = 7;
  const float scale = 0.5f;
  State cpu{randomFloats(n, 64), randomFloats(n, 65, 0.0f, 0.1f),
            randomFloats(n, 66, 0.0f, 0.1f)};
  State gpu = cpu;
  const Floats grad = randomFloats(n, 67);
  txrt_context_set_train_state(cpu_, step, 42);
  ASSERT_EQ(txrt_adam_step(cpu_, 13, n, cpu.param.data(), grad.data(),
                           cpu.m.data(), cpu.v.data(), &scale, TXRT_LR_NOAM,
                           1.0f, 64.0f, 100.0f, 0.9f, 0.98f, 1e-9f, 0.0f),
            TXRT_OK)
      << txrt_last_error(cpu_);
  const float rate = txrt_learning_rate(TXRT_LR_NOAM, 1.0, 64.0, 100.0, step);
  emulatedUpdate(gpu, grad, &scale, rate, 0.9f, 0.98f, 1e-9f, 0.0f, step);
  expectSame(gpu, cpu, "noam step 7");
}

// A replayed step: the kernel's arguments are the captured step's, its
// learning rate and bias corrections the StepState slot the host rewrote
// for this step (with the direct call's own adamConstants): the same
// bits as the direct launch with that step's constants.
TEST_F(AdamEmulatedTest, ReplayReadsTheStepsScalarsFromTheDevice) {
  const int64_t n = 3001;
  State direct{randomFloats(n, 70), Floats(n, 0.0f), Floats(n, 0.0f)};
  State replayed = direct;
  StepState state{};
  for (int64_t step = 1; step <= 4; ++step) {
    const Floats grad = randomFloats(n, uint32_t(70 + step));
    const float rate =
        txrt_learning_rate(TXRT_LR_NOAM, 1.0, 64.0, 3.0, step);
    const AdamConstants k = adamConstants(rate, 0.9f, 0.98f, step);
    state.adam[2] = {k.stepSize, k.sqrtCorrection2};
    emulatedUpdate(direct, grad, nullptr, rate, 0.9f, 0.98f, 1e-9f, 0.0f, step);
    emulatedCapturedUpdate(replayed, grad, 0.9f, 0.98f, 1e-9f, &state.adam[2]);
    ASSERT_EQ(std::memcmp(replayed.param.data(), direct.param.data(),
                          size_t(n) * sizeof(float)),
              0)
        << "step " << step;
    ASSERT_EQ(std::memcmp(replayed.v.data(), direct.v.data(),
                          size_t(n) * sizeof(float)),
              0)
        << "step " << step;
  }
}

} // namespace
