//===- CudaGraphTest.cpp - a captured training step replays like the calls ===//
//
// The plan of docs/cuda.md runs each train step as one CUDA graph. This
// captures a small step (dropout, linear + ReLU, cross-entropy forward and
// backward, linear backward, Adam on both parameters) once and replays it
// three times; the parameters and the loss must equal three rounds of the
// same calls made directly. It shows that these kernels, cuBLASLt with its
// workspace included, are capture-safe.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

using namespace txrt_cuda_test;

namespace {

class CudaGraphTest : public CudaTest {};

struct Step {
  static constexpr int64_t m = 24, n = 10, k = 16;
  DeviceBuffer<float> x, xd, w, b, y, lse, loss, dy, dw, db, mw, vw, mb, vb,
      dloss;
  DeviceBuffer<int32_t> targets;
  Step(txrt_cuda_context *gpu, const Floats &x0, const Floats &w0,
       const Floats &b0, const Ints &t)
      : x(gpu, x0), xd(gpu, m * k, 0.0f), w(gpu, w0), b(gpu, b0),
        y(gpu, m * n, 0.0f), lse(gpu, m, 0.0f), loss(gpu, 1, 0.0f),
        dy(gpu, m * n, 0.0f), dw(gpu, n * k, 0.0f), db(gpu, n, 0.0f),
        mw(gpu, n * k, 0.0f), vw(gpu, n * k, 0.0f), mb(gpu, n, 0.0f),
        vb(gpu, n, 0.0f), dloss(gpu, Floats{1.0f}), targets(gpu, t) {}

  /// Queues one step; returns the first failure.
  txrt_status queue(txrt_cuda_context *gpu) {
    txrt_status s = TXRT_OK;
    auto run = [&](txrt_status next) {
      if (s == TXRT_OK)
        s = next;
    };
    run(txrt_cuda_dropout_fwd(gpu, 1, m * k, 0.25f, 7, 3, x.get(), xd.get()));
    run(txrt_cuda_linear_fwd(gpu, 2, m, n, k, xd.get(), w.get(), b.get(),
                             TXRT_ACTIVATION_RELU, nullptr, y.get()));
    run(txrt_cuda_cross_entropy_fwd(gpu, 3, m, n, y.get(), targets.get(), -1,
                                    0.1f, TXRT_LOSS_MEAN, loss.get(),
                                    lse.get(), nullptr, nullptr));
    run(txrt_cuda_cross_entropy_bwd(gpu, 4, m, n, y.get(), targets.get(),
                                    lse.get(), -1, 0.1f, TXRT_LOSS_MEAN,
                                    dloss.get(), dy.get()));
    run(txrt_cuda_linear_bwd(gpu, 5, m, n, k, xd.get(), w.get(), dy.get(),
                             nullptr, dw.get(), db.get(), 0, 0));
    run(txrt_cuda_adam_update(gpu, 6, n * k, w.get(), dw.get(), mw.get(),
                              vw.get(), 1e-2f, 0.9f, 0.98f, 1e-9f, 0.0f, 1));
    run(txrt_cuda_adam_update(gpu, 7, n, b.get(), db.get(), mb.get(),
                              vb.get(), 1e-2f, 0.9f, 0.98f, 1e-9f, 0.0f, 1));
    return s;
  }
};

TEST_F(CudaGraphTest, ReplayedStepEqualsTheDirectCalls) {
  Floats x0 = randomFloats(Step::m * Step::k, 110),
         w0 = randomFloats(Step::n * Step::k, 111),
         b0 = randomFloats(Step::n, 112);
  Ints t(Step::m);
  for (int64_t i = 0; i < Step::m; ++i)
    t[i] = int32_t((i * 3) % Step::n);
  Step direct(gpu_, x0, w0, b0, t), graphed(gpu_, x0, w0, b0, t);
  expectGpuOk(txrt_cuda_synchronize(gpu_));
  for (int round = 0; round < 3; ++round)
    expectGpuOk(direct.queue(gpu_));

  txrt_cuda_graph *graph = nullptr;
  expectGpuOk(txrt_cuda_capture_begin(gpu_));
  txrt_status queued = graphed.queue(gpu_);
  expectGpuOk(txrt_cuda_capture_end(gpu_, &graph));
  expectGpuOk(queued);
  ASSERT_NE(graph, nullptr);
  // Capturing ran nothing: the parameters are still the initial ones.
  expectNear(graphed.w.read(), w0, 0.0, "w before any replay");
  for (int round = 0; round < 3; ++round)
    expectGpuOk(txrt_cuda_graph_launch(gpu_, graph));
  expectNear(graphed.w.read(), direct.w.read(), 1e-6, "w");
  expectNear(graphed.b.read(), direct.b.read(), 1e-6, "b");
  expectNear(graphed.loss.read(), direct.loss.read(), 1e-6, "loss");
  txrt_cuda_graph_destroy(graph);
}

} // namespace
