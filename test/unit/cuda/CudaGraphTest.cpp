//===- CudaGraphTest.cpp - a captured training step replays like the calls ===//
//
// The plan of docs/cuda.md runs each train step as one CUDA graph. This
// captures a small step (dropout, linear + ReLU, cross-entropy forward and
// backward, linear backward, Adam on both parameters) once, at step 1, and
// replays it for steps 1, 2 and 3, the context's training state set before
// each; the parameters and the loss must equal three steps of the same
// calls made directly, bit for bit: each replay draws its step's dropout
// mask and uses its step's bias corrections, which the kernels read from
// the context's device state inside a capture. It shows that these
// kernels, cuBLASLt with its workspace included, are capture-safe, and
// that what a replay cannot redo is refused at capture.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <string>

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

  /// Queues one step at the context's training state (seed 7, `step`);
  /// returns the first failure.
  txrt_status queue(txrt_cuda_context *gpu, int64_t step) {
    txrt_status s = TXRT_OK;
    auto run = [&](txrt_status next) {
      if (s == TXRT_OK)
        s = next;
    };
    run(txrt_cuda_dropout_fwd(gpu, 1, m * k, 0.25f, 7, step, x.get(),
                              xd.get()));
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
    run(txrt_cuda_adam_step(gpu, 6, n * k, w.get(), dw.get(), mw.get(),
                            vw.get(), nullptr, TXRT_LR_NOAM, 1.0f, 16.0f,
                            2.0f, 0.9f, 0.98f, 1e-9f, 0.0f));
    run(txrt_cuda_adam_step(gpu, 7, n, b.get(), db.get(), mb.get(), vb.get(),
                            nullptr, TXRT_LR_CONSTANT, 1e-2f, 0.0f, 0.0f, 0.9f,
                            0.98f, 1e-9f, 0.0f));
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
  for (int64_t step = 1; step <= 3; ++step) {
    txrt_cuda_context_set_train_state(gpu_, step, 7);
    expectGpuOk(direct.queue(gpu_, step));
  }

  txrt_cuda_graph *graph = nullptr;
  txrt_cuda_context_set_train_state(gpu_, 1, 7);
  expectGpuOk(txrt_cuda_capture_begin(gpu_));
  txrt_status queued = graphed.queue(gpu_, 1);
  expectGpuOk(txrt_cuda_capture_end(gpu_, &graph));
  expectGpuOk(queued);
  ASSERT_NE(graph, nullptr);
  // Capturing ran nothing: the parameters are still the initial ones.
  expectNear(graphed.w.read(), w0, 0.0, "w before any replay");
  for (int64_t step = 1; step <= 3; ++step) {
    txrt_cuda_context_set_train_state(gpu_, step, 7);
    expectGpuOk(txrt_cuda_graph_launch(gpu_, graph));
  }
  expectGpuOk(txrt_cuda_synchronize(gpu_));
  expectNear(graphed.w.read(), direct.w.read(), 0.0, "w");
  expectNear(graphed.b.read(), direct.b.read(), 0.0, "b");
  expectNear(graphed.loss.read(), direct.loss.read(), 0.0, "loss");
  expectNear(graphed.mw.read(), direct.mw.read(), 0.0, "exp_avg of w");
  txrt_cuda_graph_destroy(graph);
}

// What a replay could not redo fails the capture instead of replaying the
// captured step's values: a dropout seed or step other than the context's
// training state, an Adam update that takes its step as an argument, and a
// piece of the batch; after each, the stream captures and replays again.
TEST_F(CudaGraphTest, WhatAReplayCannotRedoIsRefused) {
  DeviceBuffer<float> x(gpu_, 64, 1.0f), y(gpu_, 64, 0.0f), m(gpu_, 64, 0.0f),
      v(gpu_, 64, 0.0f);
  txrt_cuda_context_set_train_state(gpu_, 4, 7);
  txrt_cuda_graph *graph = nullptr;

  expectGpuOk(txrt_cuda_capture_begin(gpu_));
  EXPECT_NE(txrt_cuda_dropout_fwd(gpu_, 1, 64, 0.5f, 8, 4, x.get(), y.get()),
            TXRT_OK);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_))
                .find("not the context's training state"),
            std::string::npos)
      << txrt_cuda_last_error(gpu_);
  txrt_cuda_capture_end(gpu_, &graph);
  txrt_cuda_graph_destroy(graph);

  expectGpuOk(txrt_cuda_capture_begin(gpu_));
  EXPECT_NE(txrt_cuda_adam_update(gpu_, 2, 64, y.get(), x.get(), m.get(),
                                  v.get(), 1e-3f, 0.9f, 0.98f, 1e-9f, 0.0f, 4),
            TXRT_OK);
  graph = nullptr;
  txrt_cuda_capture_end(gpu_, &graph);
  txrt_cuda_graph_destroy(graph);

  txrt_cuda_context_set_batch_rows(gpu_, 2, 4);
  EXPECT_NE(txrt_cuda_capture_begin(gpu_), TXRT_OK);
  EXPECT_EQ(txrt_cuda_graph_replayable(gpu_), 0);
  txrt_cuda_context_set_batch_rows(gpu_, 0, 0);
  EXPECT_EQ(txrt_cuda_graph_replayable(gpu_), 1);

  // The stream is usable: a capture of the context's own state replays.
  graph = nullptr;
  expectGpuOk(txrt_cuda_capture_begin(gpu_));
  expectGpuOk(txrt_cuda_dropout_fwd(gpu_, 1, 64, 0.5f, 7, 4, x.get(), y.get()));
  expectGpuOk(txrt_cuda_capture_end(gpu_, &graph));
  ASSERT_NE(graph, nullptr);
  expectGpuOk(txrt_cuda_graph_launch(gpu_, graph));
  expectGpuOk(txrt_cuda_synchronize(gpu_));
  txrt_cuda_graph_destroy(graph);
}

} // namespace
