//===- ParameterHomeTest.cpp - the parameter arena lives on the device ----===//
//
// The fake seq2seq model (FakeSeq2Seq.cpp) run twice side by side: on the
// CPU, and as a --target=cuda model on the fake device (FakeDevice.h),
// whose memory starts as NaN and which counts the parameter arena's copies.
// Every host read must give the CPU's values bit for bit, and the arena
// must cross only when the design says: once in before the first entry,
// never during training steps or forward entries, once back at the first
// host read after updates, once in after each host write. train --ema's
// average (loop/Ema.h) lives on the device too: updated there by the
// fake device's emulated kernel, never copied back after an update, back
// at the first read after updates, in after each write. Then the whole
// driver (train with --every, --ema and --valid, --resume, eval) on both
// must write byte-identical checkpoints.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "commands/Driver.h"
#include "core/Error.h"
#include "core/FakeDevice.h"
#include "core/Memory.h"
#include "core/ModelRunner.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];
extern "C" const char txc_model_json[];
extern "C" const txc_entry_fn txc_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

/// Whether every parameter, gradient and moment of `a` and `b` has the
/// same bits.
void expectSameArena(const ModelInfo &model, const ParameterArena &a,
                     const ParameterArena &b) {
  for (const ParamInfo &param : model.params) {
    size_t bytes = size_t(param.byteSize);
    EXPECT_EQ(std::memcmp(a.param(param), b.param(param), bytes), 0)
        << param.name;
    EXPECT_EQ(std::memcmp(a.gradient(param), b.gradient(param), bytes), 0)
        << "gradient of " << param.name;
    EXPECT_EQ(std::memcmp(a.expAvg(param), b.expAvg(param), bytes), 0)
        << "exp_avg of " << param.name;
    EXPECT_EQ(std::memcmp(a.expAvgSq(param), b.expAvgSq(param), bytes), 0)
        << "exp_avg_sq of " << param.name;
  }
}

void expectSameTensors(const std::vector<Tensor> &a,
                       const std::vector<Tensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].byteSize(), b[i].byteSize());
    EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), a[i].byteSize()), 0)
        << "output " << i;
  }
}

/// Whether the two averages hold the same bits (views(): the host copy,
/// brought back first when the device's is newer).
void expectSameAverage(WeightAverage &cpu, WeightAverage &device) {
  std::vector<SafetensorsTensorView> a = cpu.views(), b = device.views();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].shape, b[i].shape) << a[i].name;
    size_t bytes = sizeof(float);
    for (int64_t dim : a[i].shape)
      bytes *= size_t(dim);
    EXPECT_EQ(std::memcmp(a[i].data, b[i].data, bytes), 0) << a[i].name;
  }
}

/// The fake seq2seq model's parameters: 500 floats (2000 of the arena's
/// 8000 bytes).
constexpr int64_t kParameterFloats = 500;

/// The CPU runner and the fake device's, with the same model but the
/// target.
class ParameterHomeTest : public ::testing::Test {
protected:
  ParameterHomeTest()
      : cpuModel(ModelInfo::parse(fake_seq2seq_json)),
        deviceModel(ModelInfo::parse(onFakeDevice(fake_seq2seq_json))),
        ranges(parameterRanges(deviceModel)) {
    fakeDeviceCounts() = {};
  }
  ~ParameterHomeTest() override { setFakeDeviceAllocationFailure(""); }

  float trainStep(ModelRunner &runner, int64_t step) {
    runner.setTrainState(step, 9);
    FakeSeq2SeqBatch batch = fakeSeq2SeqBatch(step);
    return runner
        .call(runner.entry("train", "the test"),
              {&batch.src, &batch.tgtIn, &batch.tgtOut})[0]
        .as<float>()[0];
  }
  /// Both runners take update `step`; the losses must agree bit for bit.
  void stepBoth(ModelRunner &cpu, ModelRunner &device, int64_t step) {
    float expected = trainStep(cpu, step);
    EXPECT_EQ(bitsOf(trainStep(device, step)), bitsOf(expected))
        << "the loss of step " << step;
  }
  /// encode, then decode on its memory.
  std::vector<Tensor> translate(ModelRunner &runner) {
    FakeSeq2SeqBatch batch = fakeSeq2SeqBatch(1);
    std::vector<Tensor> memory =
        runner.call(runner.entry("encode", "the test"), {&batch.src});
    std::vector<Tensor> logits =
        runner.call(runner.entry("decode", "the test"),
                    {&batch.tgtIn, &memory[0], &batch.src});
    memory.push_back(std::move(logits[0]));
    return memory;
  }

  const FakeDeviceCounts &counts() { return fakeDeviceCounts(); }

  ModelInfo cpuModel, deviceModel;
  std::vector<ArenaRange> ranges;
  ScratchDir dir;
};

TEST_F(ParameterHomeTest, TrainingStepsCopyNothingAndEveryHostReadIsCurrent) {
  ModelRunner cpu(cpuModel, fake_seq2seq_entry_table, 1);
  ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
  ASSERT_EQ(cpu.device(), nullptr);
  ASSERT_NE(device.device(), nullptr);
  EXPECT_EQ(counts().opened, 1);

  cpu.params().write().initialize(1);
  device.params().write().initialize(1);
  EXPECT_FALSE(device.params().deviceCurrent());
  EXPECT_EQ(counts().arenaToDevice, 0) << "copied before an entry needs it";

  // --init reaches the device once; the updates stay there, and the
  // calls reuse their input and output buffers.
  stepBoth(cpu, device, 1);
  const int64_t allocationsOfOneStep = counts().allocations;
  for (int64_t step = 2; step <= 5; ++step)
    stepBoth(cpu, device, step);
  EXPECT_EQ(counts().allocations, allocationsOfOneStep);
  EXPECT_EQ(device.params().copiesToDevice(), 1);
  EXPECT_EQ(counts().arenaToDevice, 1);
  EXPECT_EQ(counts().arenaToHost, 0) << "training steps copied the arena back";
  EXPECT_FALSE(device.params().hostCurrent());

  // The first host read after updates copies the arena back, once.
  expectSameArena(cpuModel, cpu.params().read(), device.params().read());
  EXPECT_EQ(counts().arenaToHost, 1);
  expectSameArena(cpuModel, cpu.params().read(), device.params().read());
  EXPECT_EQ(counts().arenaToHost, 1) << "a current host copy was copied again";

  // A save reads the current host copy: no copy when it is current, one
  // when updates ran since; the files are the CPU's, byte for byte.
  Tokenizer tokenizer;
  TrainingPosition position;
  position.step = 5;
  saveCheckpoint(dir.file("cpu.safetensors"), cpuModel, cpu.params().read(),
                 position, tokenizer);
  saveCheckpoint(dir.file("device.safetensors"), deviceModel,
                 device.params().read(), position, tokenizer);
  EXPECT_EQ(counts().arenaToHost, 1);
  EXPECT_EQ(readFile(dir.file("cpu.safetensors")),
            readFile(dir.file("device.safetensors")));

  // Forward entries read the device's arena and copy none of it.
  expectSameTensors(translate(cpu), translate(device));
  EXPECT_EQ(counts().arenaToDevice, 1);
  EXPECT_EQ(counts().arenaToHost, 1);
  EXPECT_GT(counts().otherToDevice, 0) << "the inputs go in per call";
  EXPECT_GT(counts().otherToHost, 0) << "the outputs come back per call";
  EXPECT_EQ(counts().otherPinned, counts().otherToDevice + counts().otherToHost)
      << "a call's copies go through its pinned buffers";

  // --ema: the average lives on the device beside the arena, and its
  // updates after steps copy nothing back, of the arena or of itself.
  WeightAverage cpuAverage(cpuModel, cpu.params().read(), 0.5);
  WeightAverage deviceAverage(deviceModel, device.params().read(), 0.5,
                              device.device());
  EXPECT_FALSE(deviceAverage.deviceCurrent()) << "it starts on the host";
  for (int64_t step = 6; step <= 7; ++step) {
    stepBoth(cpu, device, step);
    cpuAverage.update(cpu.params());
    deviceAverage.update(device.params());
  }
  EXPECT_EQ(counts().arenaToHost, 1) << "the --ema updates copied back";
  EXPECT_EQ(counts().averageToHost, 0) << "the --ema updates copied back";
  EXPECT_EQ(counts().averageToDevice, 1) << "the start, once";
  EXPECT_EQ(counts().averageUpdateCalls, 2 * int64_t(ranges.size()));
  EXPECT_EQ(counts().averageElementsUpdated, 2 * kParameterFloats);
  EXPECT_EQ(deviceAverage.deviceUpdates(), 2);
  EXPECT_FALSE(deviceAverage.hostCurrent());
  EXPECT_FALSE(device.params().hostCurrent());
  // A checkpoint's read brings it back, once; the CPU's bits.
  expectSameAverage(cpuAverage, deviceAverage);
  EXPECT_EQ(counts().averageToHost, 1);
  EXPECT_EQ(counts().averageBytesToHost, 4 * kParameterFloats);
  expectSameAverage(cpuAverage, deviceAverage);
  EXPECT_EQ(counts().averageToHost, 1) << "a current host copy came back";
  // Scoring it swaps it in (the whole arena back, then in), and both go
  // back in before the next update.
  cpuAverage.swap(cpu.params().write());
  deviceAverage.swap(device.params().write());
  EXPECT_EQ(counts().arenaToHost, 2);
  EXPECT_FALSE(deviceAverage.deviceCurrent());
  expectSameTensors(translate(cpu), translate(device));
  EXPECT_EQ(counts().arenaToDevice, 2);
  cpuAverage.swap(cpu.params().write());
  deviceAverage.swap(device.params().write());
  stepBoth(cpu, device, 8);
  cpuAverage.update(cpu.params());
  deviceAverage.update(device.params());
  EXPECT_EQ(counts().arenaToDevice, 3);
  EXPECT_EQ(counts().averageToDevice, 2);
  EXPECT_EQ(counts().arenaToHost, 2);
  EXPECT_EQ(counts().averageToHost, 1);
  expectSameAverage(cpuAverage, deviceAverage);
  expectSameArena(cpuModel, cpu.params().read(), device.params().read());
  EXPECT_EQ(counts().arenaToHost, 3);
  EXPECT_EQ(counts().averageToHost, 2);

  // train_grad writes only gradients, on the device; they are read back.
  FakeSeq2SeqBatch batch = fakeSeq2SeqBatch(3);
  for (ModelRunner *runner : {&cpu, &device}) {
    runner->setTrainState(9, 9);
    runner->call(runner->entry("train_grad", "the test"),
                 {&batch.src, &batch.tgtIn, &batch.tgtOut});
  }
  EXPECT_FALSE(device.params().hostCurrent());
  expectSameArena(cpuModel, cpu.params().read(), device.params().read());
  EXPECT_EQ(counts().arenaToHost, 4);
  EXPECT_EQ(device.params().copiesToHost(), 4);
  EXPECT_EQ(cpu.params().copiesToDevice() + cpu.params().copiesToHost(), 0);
  EXPECT_EQ(cpuAverage.copiesToDevice() + cpuAverage.copiesToHost() +
                cpuAverage.deviceUpdates(),
            0);
}

// Every write of the average's host copy (reset, load, one swap alone)
// reaches the device before its next update, and every read after updates
// brings the device's back: the average stays the CPU's, bit for bit.
TEST_F(ParameterHomeTest, EveryWriteOfTheAverageReachesTheDevice) {
  ModelRunner cpu(cpuModel, fake_seq2seq_entry_table, 1);
  ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
  cpu.params().write().initialize(2);
  device.params().write().initialize(2);
  WeightAverage cpuAverage(cpuModel, cpu.params().read(), 0.75);
  WeightAverage deviceAverage(deviceModel, device.params().read(), 0.75,
                              device.device());
  auto stepAndUpdate = [&](int64_t step) {
    stepBoth(cpu, device, step);
    cpuAverage.update(cpu.params());
    deviceAverage.update(device.params());
  };
  stepAndUpdate(1);
  stepAndUpdate(2);
  // A checkpoint brings the average back: the CPU's file, byte for byte.
  Tokenizer tokenizer;
  TrainingPosition position;
  position.step = 2;
  saveCheckpoint(dir.file("cpu.safetensors"), cpuModel, cpu.params().read(),
                 position, tokenizer, &cpuAverage);
  saveCheckpoint(dir.file("device.safetensors"), deviceModel,
                 device.params().read(), position, tokenizer, &deviceAverage);
  EXPECT_EQ(counts().averageToHost, 1);
  EXPECT_EQ(readFile(dir.file("cpu.safetensors")),
            readFile(dir.file("device.safetensors")));

  // reset() overwrites the host copy: nothing comes back, it goes in.
  cpuAverage.reset(cpu.params().read());
  deviceAverage.reset(device.params().read());
  EXPECT_FALSE(deviceAverage.deviceCurrent());
  stepAndUpdate(3);
  EXPECT_EQ(counts().averageToDevice, 2);
  EXPECT_EQ(counts().averageToHost, 1) << "reset() read what it overwrote";
  expectSameAverage(cpuAverage, deviceAverage);

  // load() (--resume): the saved average (step 2's) goes in.
  SafetensorsReader saved(dir.file("cpu.safetensors"));
  ASSERT_TRUE(cpuAverage.load(saved));
  ASSERT_TRUE(deviceAverage.load(saved));
  EXPECT_FALSE(deviceAverage.deviceCurrent());
  stepAndUpdate(4);
  EXPECT_EQ(counts().averageToDevice, 3);
  expectSameAverage(cpuAverage, deviceAverage);

  // One swap alone: the host copy now holds the raw weights, and the next
  // update must start from them on the device too.
  cpuAverage.swap(cpu.params().write());
  deviceAverage.swap(device.params().write());
  stepAndUpdate(5);
  EXPECT_EQ(counts().averageToDevice, 4);
  expectSameAverage(cpuAverage, deviceAverage);
  expectSameArena(cpuModel, cpu.params().read(), device.params().read());

  // An update right after a host write of the arena (no entry between)
  // folds in the written weights: the arena goes in first.
  cpu.params().write().initialize(3);
  device.params().write().initialize(3);
  cpuAverage.update(cpu.params());
  deviceAverage.update(device.params());
  EXPECT_EQ(counts().arenaToDevice, 3);
  expectSameAverage(cpuAverage, deviceAverage);
}

TEST_F(ParameterHomeTest, NoDeviceMemoryForTheAverageIsAResourceError) {
  setFakeDeviceAllocationFailure("the --ema weight average");
  ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
  device.params().write().initialize(1);
  EXPECT_THROW_MESSAGE(
      WeightAverage(deviceModel, device.params().read(), 0.5, device.device()),
      ResourceError,
      "cannot allocate the --ema weight average (" +
          formatBytes(4 * kParameterFloats) + ") on cuda:0 (host stand-in)");
}

TEST_F(ParameterHomeTest, ResumeCopiesTheCheckpointInOnce) {
  Tokenizer tokenizer;
  TrainingPosition position;
  position.step = 3;
  position.epoch = 1;
  position.batchSize = 2;
  {
    ModelRunner cpu(cpuModel, fake_seq2seq_entry_table, 1);
    cpu.params().write().initialize(4);
    for (int64_t step = 1; step <= 3; ++step)
      trainStep(cpu, step);
    saveCheckpoint(dir.file("ckpt.safetensors"), cpuModel, cpu.params().read(),
                   position, tokenizer);
  }
  ModelRunner cpu(cpuModel, fake_seq2seq_entry_table, 1);
  ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
  loadCheckpoint(dir.file("ckpt.safetensors"), cpuModel, cpu.params().write());
  loadCheckpoint(dir.file("ckpt.safetensors"), deviceModel,
                 device.params().write());
  for (int64_t step = 4; step <= 6; ++step)
    stepBoth(cpu, device, step);
  EXPECT_EQ(counts().arenaToDevice, 1);
  EXPECT_EQ(counts().arenaToHost, 0);
  expectSameArena(cpuModel, cpu.params().read(), device.params().read());
  EXPECT_EQ(counts().arenaToHost, 1);
}

// The host arena is frozen in the context (its linears may read packed
// weights) from a forward entry until anything could change it: a host
// write or a training entry thaws it first. A device arena is never frozen.
TEST_F(ParameterHomeTest,
       ForwardEntriesFreezeTheHostArenaUntilAWriteOrATrainingStep) {
  ModelRunner cpu(cpuModel, fake_seq2seq_entry_table, 1);
  cpu.params().write().initialize(1);
  EXPECT_FALSE(cpu.params().frozen());
  translate(cpu);
  EXPECT_TRUE(cpu.params().frozen());
  cpu.params().read();
  EXPECT_TRUE(cpu.params().frozen()) << "a read changes nothing";
  trainStep(cpu, 1);
  EXPECT_FALSE(cpu.params().frozen()) << "a training entry updates the arena";
  translate(cpu);
  EXPECT_TRUE(cpu.params().frozen());
  cpu.params().write();
  EXPECT_FALSE(cpu.params().frozen()) << "a host write";

  ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
  device.params().write().initialize(1);
  translate(device);
  EXPECT_FALSE(device.params().frozen());
}

TEST_F(ParameterHomeTest, TheRunnerReleasesEveryDeviceBuffer) {
  {
    ModelRunner device(deviceModel, fake_seq2seq_entry_table, 1);
    device.params().write().initialize(1);
    trainStep(device, 1);
    translate(device);
    EXPECT_GT(counts().liveAllocations, 0);
    EXPECT_GT(counts().livePinned, 0);
  }
  EXPECT_EQ(counts().liveAllocations, 0);
  EXPECT_EQ(counts().livePinned, 0);
}

TEST_F(ParameterHomeTest, AFailedCallOnTheDeviceNamesTheEntryAndTheDevice) {
  ModelInfo model = ModelInfo::parse(onFakeDevice(txc_model_json));
  ModelRunner device(model, txc_entry_table, 1);
  ASSERT_NE(device.device(), nullptr);
  Tensor x = floatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW_MESSAGE(device.call(device.entry("fail", "the test"), {&x}),
                       KernelError, "entry 'fail' failed (",
                       ") on cuda:0 (host stand-in): ", "txrt_linear_fwd");
  // The runner still works after it.
  std::vector<Tensor> y = device.call(device.entry("apply", "the test"), {&x});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_TRUE(std::isfinite(y[0].as<float>()[0]));
}

/// The whole driver: what `train` writes on the fake device is what it
/// writes on the CPU, byte for byte, through saves, --ema, validation and
/// --resume; eval reads the same numbers.
class ParameterHomeDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    writeFile(dir.file("train.tsv"), "i love you\tte amo\n"
                                     "you love me\tme amas\n"
                                     "i see you\tte veo\n"
                                     "you see me\tme ves\n"
                                     "i like pizza\tme gusta pizza\n");
    deviceJson = onFakeDevice(fake_seq2seq_json);
    fakeDeviceCounts() = {};
  }
  DriverResult drive(bool onDevice, std::vector<std::string> args) {
    DriverResult result = runDriverCaptured(
        "fake-seq2seq", args, onDevice ? deviceJson.c_str() : fake_seq2seq_json,
        fake_seq2seq_entry_table);
    EXPECT_EQ(result.code, 0) << result.err;
    return result;
  }
  /// train (or resume) to `steps`, saving at `save` (prefix "cpu" or
  /// "device"), with --ema and validation every 3 steps when `ema`.
  DriverResult train(bool onDevice, int64_t steps, const std::string &save,
                     bool ema, const std::string &resume = "") {
    std::vector<std::string> args = {"train",
                                     "--data",
                                     dir.file("train.tsv"),
                                     "--batch",
                                     "2",
                                     "--seed",
                                     "7",
                                     "--threads",
                                     "1",
                                     "--steps",
                                     std::to_string(steps),
                                     "--every",
                                     "2",
                                     "--save",
                                     file(onDevice, save),
                                     "--verbose"};
    if (ema)
      args.insert(args.end(), {"--ema", "0.5", "--valid", dir.file("train.tsv"),
                               "--valid-every", "3", "--keep-best"});
    if (resume.empty()) {
      args.push_back("--init");
      args.push_back("5");
    } else {
      args.push_back("--resume");
      args.push_back(file(onDevice, resume));
    }
    return drive(onDevice, args);
  }
  std::string file(bool onDevice, const std::string &name) {
    return dir.file((onDevice ? "device-" : "cpu-") + name);
  }
  void expectSameFile(const std::string &name) {
    std::string cpu = readFile(file(false, name));
    ASSERT_FALSE(cpu.empty()) << name;
    EXPECT_TRUE(cpu == readFile(file(true, name))) << name << " differs";
  }

  ScratchDir dir;
  std::string deviceJson;
};

/// What --verbose reports of the copies: the parameter arena's, back, and
/// with --ema the average's updates and copies; -1 where it says nothing.
struct VerboseCopies {
  int arenaBack = -1;
  int averageUpdates = -1, averageIn = -1, averageBack = -1;
};
VerboseCopies verboseCopies(const std::string &err) {
  VerboseCopies copies;
  size_t at = err.find("parameter arena (");
  if (at != std::string::npos &&
      (at = err.find("x, back ", at)) != std::string::npos)
    std::sscanf(err.c_str() + at, "x, back %dx", &copies.arenaBack);
  at = err.find("weight average (--ema, ");
  if (at != std::string::npos &&
      (at = err.find("): ", at)) != std::string::npos)
    std::sscanf(err.c_str() + at,
                "): updated on the device %dx, copied in %dx, back %dx",
                &copies.averageUpdates, &copies.averageIn, &copies.averageBack);
  return copies;
}

// Which updates the divergence scan follows depends on the clock (its time
// budget, Divergence.h), so the arena's copies back are bounded by what the
// design guarantees for every timing: only a training entry makes the host
// stale, so each update brings at most one copy back; the first update is
// always scanned; a save or validation after an update always reads the
// whole arena. --ema's average copies nothing back after an update: every
// copy of the arena back is a whole one, and the average comes back only
// for a save or a validation, which the counts below follow exactly.
TEST_F(ParameterHomeDriverTest, TrainEmaValidateResumeEvalMatchTheCpu) {
  train(false, 6, "ema.safetensors", true);
  fakeDeviceCounts() = {};
  DriverResult fresh = train(true, 6, "ema.safetensors", true);
  expectSameFile("ema.safetensors");
  expectSameFile("ema.best.safetensors");
  const FakeDeviceCounts counts = fakeDeviceCounts();
  // --init goes in once, and each of the two validations swaps the average
  // in (a copy in) and the weights back (a copy in before the next step;
  // none after the last).
  EXPECT_EQ(counts.arenaToDevice, 1 + 2 + 1);
  // Whole copies back after updates 1 (scan), 2 and 4 (saves), 3 and 6
  // (validations), and 5 when its scan ran; nothing else.
  VerboseCopies copies = verboseCopies(fresh.err);
  EXPECT_GE(copies.arenaBack, 5) << fresh.err;
  EXPECT_LE(copies.arenaBack, 6) << fresh.err;
  EXPECT_EQ(counts.arenaToHost, copies.arenaBack);
  EXPECT_EQ(counts.arenaBytesToHost, copies.arenaBack * 8000)
      << "a copy back of less than the arena: parameters for --ema?";
  // The average: 6 updates on the device, a call per run of parameters;
  // in at the start and after the validation of step 3 (it swapped); back
  // for the saves of steps 2 and 4 and the validations of steps 3 and 6
  // (the best's saves and the last save find it current).
  EXPECT_EQ(copies.averageUpdates, 6) << fresh.err;
  EXPECT_EQ(counts.averageUpdateCalls,
            6 * int64_t(parameterRanges(ModelInfo::parse(deviceJson)).size()));
  EXPECT_EQ(counts.averageElementsUpdated, 6 * kParameterFloats);
  EXPECT_EQ(copies.averageIn, 2) << fresh.err;
  EXPECT_EQ(copies.averageBack, 4) << fresh.err;
  EXPECT_EQ(counts.averageToDevice, 2);
  EXPECT_EQ(counts.averageToHost, 4);
  EXPECT_EQ(counts.averageBytesToHost, 4 * 4 * kParameterFloats);

  train(false, 9, "resumed.safetensors", true, "ema.safetensors");
  fakeDeviceCounts() = {};
  DriverResult resumed =
      train(true, 9, "resumed.safetensors", true, "ema.safetensors");
  expectSameFile("resumed.safetensors");
  EXPECT_EQ(fakeDeviceCounts().arenaToDevice, 1 + 1) << "resume, validation";
  // Whole copies after update 7 (scan), 8 (save) and 9 (validation).
  copies = verboseCopies(resumed.err);
  EXPECT_EQ(copies.arenaBack, 3) << resumed.err;
  EXPECT_EQ(fakeDeviceCounts().arenaToHost, 3);
  // The resumed average goes in once; back for the save of step 8 and the
  // validation of step 9.
  EXPECT_EQ(copies.averageUpdates, 3) << resumed.err;
  EXPECT_EQ(copies.averageIn, 1) << resumed.err;
  EXPECT_EQ(copies.averageBack, 2) << resumed.err;

  // eval loads the average (a copy in) and runs forward entries only.
  std::string evalOut[2];
  for (bool onDevice : {false, true}) {
    fakeDeviceCounts() = {};
    evalOut[onDevice] =
        drive(onDevice,
              {"eval", "--load", file(onDevice, "resumed.safetensors"),
               "--data", dir.file("train.tsv"), "--threads", "1"})
            .out;
  }
  EXPECT_EQ(fakeDeviceCounts().arenaToDevice, 1);
  EXPECT_EQ(fakeDeviceCounts().arenaToHost, 0);
  EXPECT_NE(evalOut[0].find("loss "), std::string::npos) << evalOut[0];
  EXPECT_EQ(evalOut[0], evalOut[1]);
}

TEST_F(ParameterHomeDriverTest, WithoutEmaOnlySavesAndScansCopyBack) {
  DriverResult cpu = train(false, 6, "plain.safetensors", false);
  DriverResult device = train(true, 6, "plain.safetensors", false);
  expectSameFile("plain.safetensors");
  EXPECT_EQ(fakeDeviceCounts().arenaToDevice, 1);
  // Saves at steps 2, 4 and 6 each read the weights; the divergence scan
  // may read after other updates within its time budget.
  EXPECT_GE(fakeDeviceCounts().arenaToHost, 3);
  EXPECT_LE(fakeDeviceCounts().arenaToHost, 6);
  EXPECT_EQ(fakeDeviceCounts().averageUpdateCalls, 0);
  // --verbose says so on a device, and nothing of it on the CPU.
  EXPECT_NE(device.err.find("parameter arena (7.8 KiB) on cuda:0 (host "
                            "stand-in): copied in 1x, back " +
                            std::to_string(fakeDeviceCounts().arenaToHost) +
                            "x\n"),
            std::string::npos)
      << device.err;
  EXPECT_EQ(device.err.find("weight average"), std::string::npos) << device.err;
  EXPECT_EQ(cpu.err.find("parameter arena"), std::string::npos) << cpu.err;
}

TEST_F(ParameterHomeDriverTest,
       NoDeviceMemoryForTheAverageStopsBeforeTraining) {
  setFakeDeviceAllocationFailure("the --ema weight average");
  DriverResult result = runDriverCaptured(
      "fake-seq2seq",
      {"train", "--data", dir.file("train.tsv"), "--batch", "2", "--steps", "2",
       "--threads", "1", "--ema", "0.5", "--save", dir.file("oom.safetensors")},
      deviceJson.c_str(), fake_seq2seq_entry_table);
  setFakeDeviceAllocationFailure("");
  EXPECT_EQ(result.code, kExitFailure);
  EXPECT_NE(
      result.err.find("error: cannot allocate the --ema weight average (" +
                      formatBytes(4 * kParameterFloats) +
                      ") on cuda:0 (host stand-in): out of device "
                      "memory"),
      std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("training '"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("oom.safetensors")));
}

} // namespace
