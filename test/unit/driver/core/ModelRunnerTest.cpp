//===- ModelRunnerTest.cpp - training steps as CUDA graphs on a device ----===//
//
// ModelRunner captures a training entry's call as a graph the second time
// it sees the same dims and buffers, and replays it from then on
// (docs/cuda.md "CUDA graphs"). On the fake device (FakeDevice.h) a capture
// keeps the call and a replay runs it on the context's current training
// state, as the CUDA kernels of a captured step read it from the device.
// The fake seq2seq model trained on it must give the CPU's losses and
// arena bit for bit whether its steps are replayed, refused, not
// replayable or off (TXRT_CUDA_GRAPHS=0), with the captures, replays and
// releases the policy says.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "core/FakeDevice.h"
#include "core/ModelRunner.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

class ModelRunnerTest : public ::testing::Test {
protected:
  ModelRunnerTest()
      : cpuModel(ModelInfo::parse(fake_seq2seq_json)),
        deviceModel(ModelInfo::parse(onFakeDevice(fake_seq2seq_json))) {
    fakeDeviceCounts() = {};
    unsetenv("TXRT_CUDA_GRAPHS");
  }
  ~ModelRunnerTest() override {
    setFakeDeviceGraphs(FakeGraphs::Replay);
    unsetenv("TXRT_CUDA_GRAPHS");
  }

  float trainStep(ModelRunner &runner, int64_t step, bool transposed) {
    runner.setTrainState(step, 9);
    FakeSeq2SeqBatch batch = fakeSeq2SeqBatch(step, transposed);
    return runner
        .call(runner.entry("train", "the test"),
              {&batch.src, &batch.tgtIn, &batch.tgtOut})[0]
        .as<float>()[0];
  }

  /// Trains the CPU runner and a device runner side by side over
  /// `shapes` (true: the 3 x 2 batch), checking every loss and, at the
  /// end, the whole arena bit for bit; returns the device runner's stats.
  ModelRunner::GraphStats trainBoth(const std::vector<bool> &shapes) {
    ModelRunner cpu(cpuModel, fake_seq2seq_entry_table, 1);
    ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
    cpu.params().write().initialize(3);
    device.params().write().initialize(3);
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t step = int64_t(i) + 1;
      float expected = trainStep(cpu, step, shapes[i]);
      EXPECT_EQ(bitsOf(trainStep(device, step, shapes[i])), bitsOf(expected))
          << "the loss of step " << step;
    }
    const size_t bytes = size_t(cpuModel.paramArenaBytes);
    // Every parameter, gradient and moment, as they are (bytes()).
    EXPECT_EQ(std::memcmp(
                  const_cast<ParameterArena &>(cpu.params().read()).bytes(),
                  const_cast<ParameterArena &>(device.params().read()).bytes(),
                  bytes),
              0)
        << "the arenas after " << shapes.size() << " steps";
    // Forward entries are never captured: their dims change call by call.
    FakeSeq2SeqBatch batch = fakeSeq2SeqBatch(1);
    for (int i = 0; i < 3; ++i)
      device.call(device.entry("encode", "the test"), {&batch.src});
    return device.graphStats();
  }

  const FakeDeviceCounts &counts() { return fakeDeviceCounts(); }

  ModelInfo cpuModel, deviceModel;
};

TEST_F(ModelRunnerTest, ATrainStepIsCapturedAtItsSecondCallAndReplayed) {
  ModelRunner::GraphStats stats = trainBoth({false, false, false, false, false});
  // Step 1 runs directly (its lazy loads and allocations), step 2 is
  // captured and replayed, steps 3 to 5 are replays.
  EXPECT_EQ(stats.captured, 1);
  EXPECT_EQ(stats.replays, 4);
  EXPECT_EQ(stats.refused, 0);
  EXPECT_EQ(counts().graphsCaptured, 1);
  EXPECT_EQ(counts().graphLaunches, 4);
  EXPECT_EQ(counts().liveGraphs, 0) << "the runner left a graph behind";
}

TEST_F(ModelRunnerTest, EachShapeOfBatchGetsItsOwnGraph) {
  ModelRunner::GraphStats stats =
      trainBoth({false, true, false, true, false, true});
  EXPECT_EQ(stats.captured, 2);
  EXPECT_EQ(stats.replays, 4); // steps 3 to 6
  EXPECT_EQ(counts().liveGraphs, 0);
}

TEST_F(ModelRunnerTest, ARefusedCaptureRunsTheStepsDirectly) {
  setFakeDeviceGraphs(FakeGraphs::Refuse);
  ModelRunner::GraphStats stats = trainBoth({false, false, false, false});
  EXPECT_EQ(stats.captured, 0);
  EXPECT_EQ(stats.replays, 0);
  EXPECT_EQ(stats.refused, 1) << "a refused key is not tried again";
  EXPECT_EQ(counts().graphsRefused, 1);
  EXPECT_EQ(stats.lastRefusal, "the fake device refuses captures");
}

TEST_F(ModelRunnerTest, AGraphThatCannotReplayNowRunsTheStepDirectly) {
  // As under gradient accumulation: the device keeps the graph but runs
  // the call itself.
  setFakeDeviceGraphs(FakeGraphs::NotReplayable);
  ModelRunner::GraphStats stats = trainBoth({false, false, false, false});
  EXPECT_EQ(stats.captured, 1);
  EXPECT_EQ(stats.replays, 0);
  EXPECT_EQ(counts().graphLaunches, 0);
}

TEST_F(ModelRunnerTest, GraphsOffRunsEveryStepDirectly) {
  setenv("TXRT_CUDA_GRAPHS", "0", 1);
  ModelRunner::GraphStats stats = trainBoth({false, false, false, false});
  EXPECT_EQ(stats.captured, 0);
  EXPECT_EQ(stats.replays, 0);
  EXPECT_EQ(counts().graphsCaptured, 0);
}

TEST_F(ModelRunnerTest, TheLeastRecentlyUsedOfTooManyShapesIsReleased) {
  ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
  device.params().write().initialize(3);
  // Ten batch shapes, each twice in a row: ten captures, at most eight
  // graphs alive.
  int64_t step = 0;
  for (int64_t shape = 0; shape < 10; ++shape)
    for (int repeat = 0; repeat < 2; ++repeat) {
      device.setTrainState(++step, 9);
      const int64_t rows = 1 + shape / 2, cols = 2 + shape % 2;
      std::vector<int32_t> ids(size_t(rows * cols), 5);
      Tensor src = intTensor({rows, cols}, ids),
             tgt = intTensor({rows, cols}, ids);
      device.call(device.entry("train", "the test"), {&src, &tgt, &tgt});
    }
  EXPECT_EQ(device.graphStats().captured, 10);
  EXPECT_EQ(counts().liveGraphs, 8);
}

} // namespace
