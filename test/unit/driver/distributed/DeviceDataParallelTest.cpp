//===- DeviceDataParallelTest.cpp - accumulation on a device, in the driver ===//
//
// What a --target=cuda executable's driver does with --update-freq and
// mpirun, run here without a GPU on the fake device (core/FakeDevice.h),
// given a gradient exchange that forwards to its context's gradient modes
// while recording the calls. A model of target "cuda" with one parameter
// tensor and a train step that ends in txrt_adam_step, with clipping (so
// every update waits for the device's finishUpdate), then trains: two micro-batches must give
// one step on the whole batch, which needs the driver to set the modes on
// the device, finish there and read the arena back afterwards.
//
//===----------------------------------------------------------------------===//
#include "core/FakeDevice.h"
#include "core/ModelRunner.h"
#include "data/BatchSource.h"
#include "data/TextCorpus.h"
#include "distributed/Communicator.h"
#include "distributed/DataParallel.h"
#include "TestUtil.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace txrt::driver;
using txrt_driver_test::setFakeDeviceGradients;

namespace {

// param w [4] at 0, its gradient at 16, Adam's moments at 32 and 48 bytes.
constexpr const char *kModelJson = R"json({
  "version": 2, "model": "fake_device_lm", "kind": "language_model",
  "target": "cuda", "source": "DeviceDataParallelTest.cpp",
  "compile_flags": "", "config": {"pad": 0},
  "dims": [{"name": "B", "bound": 8}, {"name": "T", "bound": 3}],
  "param_arena_bytes": 64,
  "params": [{"name": "w", "dtype": "f32", "shape": [4], "init": "zeros",
              "offset": 0, "grad_offset": 16, "exp_avg_offset": 32,
              "exp_avg_sq_offset": 48}],
  "optimizer": {"name": "adam", "beta1": 0.9, "beta2": 0.98, "eps": 1e-9,
                "weight_decay": 0, "clip": 0.5,
                "lr": {"schedule": "constant", "value": 0.1}},
  "entries": [
    {"name": "train", "kind": "train_step", "arena_bytes": 0, "role": "train",
     "inputs": [{"name": "tokens", "role": "tokens", "dtype": "i32", "shape": ["B", "T"]},
                {"name": "targets", "role": "targets", "dtype": "i32", "shape": ["B", "T"]}],
     "outputs": [{"name": "loss", "dtype": "f32", "shape": []}]}]
})json";

/// loss = mean over the non-pad targets i of w[target_i % 4] * token_i, so
/// the gradient of w[j] is the mean of the tokens whose target is j mod 4;
/// then Adam with the gradient clipped to norm 0.5 (the compiled step's own
/// factor, which the modes other than UPDATE replace).
int32_t trainEntry(void *ctx, void *params, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  auto *context = static_cast<txrt_context *>(ctx);
  float *arena = static_cast<float *>(params);
  const auto *tokens = static_cast<const int32_t *>(inputs[0]);
  const auto *targets = static_cast<const int32_t *>(inputs[1]);
  const int64_t n = dims[0] * dims[1];
  double loss = 0.0, sums[4] = {0, 0, 0, 0};
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (targets[i] == 0)
      continue;
    ++count;
    loss += double(arena[targets[i] % 4]) * tokens[i];
    sums[targets[i] % 4] += tokens[i];
  }
  double norm = 0.0;
  for (int j = 0; j < 4; ++j) {
    arena[4 + j] = count ? float(sums[j] / double(count)) : 0.0f;
    norm += double(arena[4 + j]) * arena[4 + j];
  }
  *static_cast<float *>(outputs[0]) = count ? float(loss / double(count)) : 0;
  const float clip = std::min(1.0f, 0.5f / (float(std::sqrt(norm)) + 1e-6f));
  return txrt_adam_step(context, 0, 4, arena, arena + 4, arena + 8,
                        arena + 12, &clip, TXRT_LR_CONSTANT, 0.1f, 0.0f, 0.0f,
                        0.9f, 0.98f, 1e-9f, 0.0f);
}

const txc_entry_fn kEntries[] = {trainEntry};

/// What the driver asked of the device's exchange.
struct Calls {
  std::vector<int32_t> modes;
  std::vector<std::pair<int64_t, int64_t>> batchRows;
  int finishes = 0;
  int joins = 0;
  float clip = 0.0f;
};
Calls &calls() {
  static Calls recorded;
  return recorded;
}

class HostGradients : public DeviceGradients {
public:
  explicit HostGradients(txrt_context *ctx) : ctx_(ctx) {}
  void joinRanks(int, int,
                 const std::function<void(void *, size_t)> &) override {
    ++calls().joins;
  }
  void setMode(int32_t mode, float scale) override {
    calls().modes.push_back(mode);
    ASSERT_EQ(txrt_context_set_gradient_mode(ctx_, mode, scale), TXRT_OK);
  }
  void setBatchRows(int64_t firstRow, int64_t rows) override {
    calls().batchRows.emplace_back(firstRow, rows);
  }
  void setClip(float clip) override {
    calls().clip = clip;
    ASSERT_EQ(txrt_context_set_gradient_clip(ctx_, clip), TXRT_OK);
  }
  void finishUpdate() override {
    ++calls().finishes;
    ASSERT_EQ(txrt_context_finish_update(ctx_), TXRT_OK);
  }
  void stats(double &waitSeconds, int64_t &bytes) override {
    waitSeconds = 0.0;
    bytes = 0;
  }

private:
  txrt_context *ctx_;
};

/// w after `steps` updates of `updateFreq` micro-batches of batch/updateFreq
/// rows each (the batches of one step on `batch` rows).
std::vector<float> train(int64_t batch, int64_t updateFreq, int64_t steps) {
  setFakeDeviceGradients([](txrt_context *ctx) {
    return std::make_unique<HostGradients>(ctx);
  });
  ModelInfo model = ModelInfo::parse(kModelJson);
  ModelRunner runner(model, kEntries, 1);
  setFakeDeviceGradients({});
  EXPECT_NE(runner.device(), nullptr);
  std::vector<int32_t> stream;
  for (int32_t i = 1; i <= 25; ++i)
    stream.push_back(i % 7 + 1);
  LanguageModelBatches source(TokenBlocks(stream, 3, 0), batch, 5);
  const EntryInfo &entry = runner.entry("train", "training");
  DataParallelUpdate update(runner, entry, updateFreq, Communicator::world());
  for (int64_t step = 1; step <= steps; ++step)
    update.run(source, step, 5);
  const float *w = runner.params().read().param(model.params[0]);
  return std::vector<float>(w, w + 4);
}

TEST(DeviceDataParallelTest, MicroBatchesOnTheDeviceAreOneStepOnTheBatch) {
  calls() = Calls{};
  std::vector<float> whole = train(8, 1, 3);
  EXPECT_TRUE(calls().modes.empty()) << "one micro-batch: the plain step";
  EXPECT_EQ(calls().finishes, 0);

  calls() = Calls{};
  std::vector<float> pieces = train(8, 2, 3);
  // Per update: accumulate, apply, finish on the device, back to UPDATE.
  EXPECT_EQ(calls().modes,
            (std::vector<int32_t>{1, 2, 0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(calls().finishes, 3);
  // Each micro-batch's rows in the batch (its dropout masks), then none.
  EXPECT_EQ(calls().batchRows,
            (std::vector<std::pair<int64_t, int64_t>>{
                {0, 4}, {4, 4}, {0, 0}, {0, 4}, {4, 4}, {0, 0}, {0, 4},
                {4, 4}, {0, 0}}));
  EXPECT_EQ(calls().clip, 0.5f);
  EXPECT_EQ(calls().joins, 0) << "not started by mpirun: no ranks to join";
  for (int j = 0; j < 4; ++j) {
    EXPECT_NE(whole[size_t(j)], 0.0f) << "w[" << j << "] never trained";
    EXPECT_NEAR(pieces[size_t(j)], whole[size_t(j)],
                1e-6 * std::fabs(whole[size_t(j)]) + 1e-9)
        << "w[" << j << "]";
  }
}

} // namespace
