//===- GenerationTest.cpp - left padding and the generation loop ----------===//
#include "decoding/Generation.h"
#include "TestUtil.h"
#include "core/ModelInfo.h"
#include "core/ModelRunner.h"
#include "core/FakeDevice.h"

#include <cmath>

using namespace txrt::driver;
using txrt_driver_test::fakeDeviceCounts;
using txrt_driver_test::onFakeDevice;

namespace {

TEST(GenerationTest, LeftPadsToTheLongestRow) {
  Tensor tensor = leftPad({{5, 6, 7}, {8}, {}}, 0);
  ASSERT_EQ(tensor.shape, (Shape{3, 3}));
  std::vector<int32_t> ids(tensor.as<int32_t>(), tensor.as<int32_t>() + 9);
  EXPECT_EQ(ids, (std::vector<int32_t>{5, 6, 7, 0, 0, 8, 0, 0, 0}));
}

TEST(GenerationTest, WindowKeepsTheLastTokens) {
  Tensor tensor = leftPad({{1, 2, 3, 4, 5}, {6, 7}}, 9, 3);
  ASSERT_EQ(tensor.shape, (Shape{2, 3}));
  std::vector<int32_t> ids(tensor.as<int32_t>(), tensor.as<int32_t>() + 6);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 4, 5, 9, 6, 7}));
}

/// Next token = last token + 1, end-of-text after 4; records what it saw.
class CountingModel : public PrefixModel {
public:
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    seen.push_back(prefixes);
    std::vector<float> logits(prefixes.size() * 8, 0.0f);
    for (size_t row = 0; row < prefixes.size(); ++row) {
      int32_t last = prefixes[row].back();
      logits[row * 8 + size_t(last >= 4 ? 0 : last + 1)] = 10.0f;
    }
    return logits;
  }
  int64_t vocabSize() const override { return 8; }
  std::vector<std::vector<TokenIds>> seen;
};

TEST(GenerationTest, RowsStopAtEndOfTextAndKeepTheirPadding) {
  CountingModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 6;
  std::vector<TokenIds> out = generateTokens(model, {{1}, {3}}, settings);
  EXPECT_EQ(out[0], (TokenIds{2, 3, 4}));
  EXPECT_EQ(out[1], (TokenIds{4}));
  // The finished row stays in the batch, so both rows grow together.
  for (const std::vector<TokenIds> &step : model.seen)
    EXPECT_EQ(step[0].size(), step[1].size());
  EXPECT_EQ(model.seen.size(), 4u); // stops once every row has ended
}

/// Logits a diverged model gives: NaN everywhere.
class NanModel : public PrefixModel {
public:
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    return std::vector<float>(prefixes.size() * 8, NAN);
  }
  int64_t vocabSize() const override { return 8; }
};

TEST(GenerationTest, NonFiniteLogitsAreAnErrorNotAnEmptyOutput) {
  // Greedy generation chose id 0 (end-of-text) from NaN logits: an empty
  // continuation with exit 0.
  NanModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 3;
  EXPECT_THROW_MESSAGE(generateTokens(model, {{1}}, settings), KernelError,
                       "the model's logits are not finite (row 0, id 0 at "
                       "nan)");
}

TEST(GenerationTest, SamplingRefusesNonFiniteLogits) {
  // Sampling ranked NaN logits (comparisons all false) and drew an id from
  // NaN weights: made-up text with exit 0.
  NanModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 3;
  settings.sampling.temperature = 0.8;
  settings.sampling.topK = 4;
  EXPECT_THROW_MESSAGE(generateTokens(model, {{1}}, settings), KernelError,
                       "the model's logits are not finite (row 0, id 0 at "
                       "nan)");
}

/// Logits that allow id 5 alone, and a NaN at id 2, an id generation never
/// emits ([SOS]).
class NanAtExcludedIdModel : public PrefixModel {
public:
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    std::vector<float> logits(prefixes.size() * 8, -INFINITY);
    for (size_t row = 0; row < prefixes.size(); ++row) {
      logits[row * 8 + 2] = NAN;
      logits[row * 8 + 5] = 0.0f;
    }
    return logits;
  }
  int64_t vocabSize() const override { return 8; }
};

TEST(GenerationTest, SamplingChecksOnlyTheIdsItMayEmit) {
  // Greedy decoding accepted these weights and sampling refused them: it
  // checked the whole row before excluding the ids it never emits.
  NanAtExcludedIdModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 3;
  settings.allowed.excluded = {2};
  settings.sampling.temperature = 0.8;
  settings.sampling.seed = 1;
  EXPECT_EQ(generateTokens(model, {{1}}, settings)[0], (TokenIds{5, 5, 5}));
}

TEST(GenerationTest, MaxNewTokensBoundsTheOutput) {
  CountingModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 2;
  EXPECT_EQ(generateTokens(model, {{1}}, settings)[0], (TokenIds{2, 3}));
}

TEST(GenerationTest, BatchesHoldPromptsOfOneLength) {
  std::vector<TokenIds> prompts = {{1, 2}, {3}, {4, 5}, {6, 7}, {8}, {9, 1}};
  std::vector<std::vector<size_t>> batches = equalLengthBatches(prompts, 2);
  EXPECT_EQ(batches, (std::vector<std::vector<size_t>>{
                         {0, 2}, {1, 4}, {3, 5}}));
  for (const std::vector<size_t> &batch : batches)
    for (size_t index : batch)
      EXPECT_EQ(prompts[index].size(), prompts[batch[0]].size());
  EXPECT_TRUE(equalLengthBatches({}, 4).empty());
}

TEST(GenerationTest, DrawsAreKeyedByThePromptsIndex) {
  // Sampling at a high temperature: row k's draws depend on its key only,
  // so a prompt sampled alone with key 5 gives what it gives in a batch.
  CountingModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 3;
  settings.sampling.temperature = 100.0;
  settings.sampling.seed = 7;
  std::vector<TokenIds> batched =
      generateTokens(model, {{1}, {2}, {3}}, settings, {9, 5, 2});
  EXPECT_EQ(generateTokens(model, {{2}}, settings, {5})[0], batched[1]);
  EXPECT_EQ(generateTokens(model, {{3}}, settings, {2})[0], batched[2]);
}

/// Logits favouring the ids past a 5-word tokenizer, then [PAD] (0) and
/// [SOS] (2), then id 4; end-of-text (3) least.
class UntrainedRowsModel : public PrefixModel {
public:
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    std::vector<float> logits;
    for (size_t row = 0; row < prefixes.size(); ++row)
      logits.insert(logits.end(), {5.0f, 0.0f, 4.0f, -9.0f, 1.0f, 0.0f, 9.0f,
                                   8.0f});
    return logits;
  }
  int64_t vocabSize() const override { return 8; }
};

TEST(GenerationTest, PicksOnlyIdsTheTokenizerHasWordsFor) {
  // The model's vocab dim (8) is larger than the tokenizer (5 ids): ids 5..7
  // have no word, [PAD] and [SOS] none to print; greedy and sampled picks
  // alike skip them (before, greedy picked 6 every time and printed nothing).
  UntrainedRowsModel model;
  GenerateSettings settings;
  settings.eos = 3;
  settings.maxNewTokens = 4;
  settings.allowed = {5, {0, 2}};
  EXPECT_EQ(generateTokens(model, {{1}}, settings)[0], (TokenIds{4, 4, 4, 4}));
  settings.sampling.temperature = 100.0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    settings.sampling.seed = seed;
    std::vector<TokenIds> out = generateTokens(model, {{1}, {4}}, settings);
    for (int32_t id : out[0])
      EXPECT_TRUE(id == 1 || id == 4) << "seed " << seed << " picked " << id;
    for (int32_t id : out[1])
      EXPECT_TRUE(id == 1 || id == 4) << "seed " << seed << " picked " << id;
  }
  settings.sampling.topK = 1; // the most likely allowed id, not id 6
  EXPECT_EQ(generateTokens(model, {{1}}, settings)[0], (TokenIds{4, 4, 4, 4}));
}

//===----------------------------------------------------------------------===//
// A hand-written language model with logits and lm_step entries
//===----------------------------------------------------------------------===//

// V = 7 ids, pad 0. logits[b, t, v] = W[id_t, v] + 0.5 W[id_{t-1}, (v + 1)
// mod V] (a non-pad previous id) + 0.01 t v. lm_step computes the same for
// its new positions but reads the previous id from the cache (position p
// holds id_p as a float), so lost or misplaced caches change its logits.
const char kFakeLmJson[] = R"json({
  "version": 1, "model": "fake_lm", "kind": "language_model",
  "config": {"vocab": 7, "pad": 0},
  "dims": [{"name": "B", "bound": 4}, {"name": "T", "bound": 12},
           {"name": "C", "bound": 12}],
  "param_arena_bytes": 196,
  "params": [{"name": "w", "dtype": "f32", "shape": [7, 7], "init": "normal",
              "std": 1.0, "offset": 0}],
  "entries": [
    {"name": "logits", "role": "logits", "arena_bytes": 0,
     "inputs": [{"name": "ids", "role": "tokens", "dtype": "i32",
                 "shape": ["B", "T"]}],
     "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", "T", 7]}]},
    {"name": "lm_step", "role": "lm_step", "arena_bytes": 0,
     "inputs": [{"name": "ids", "role": "tokens", "dtype": "i32",
                 "shape": ["B", "T"]},
                {"name": "cache_ids", "role": "cache_ids", "dtype": "i32",
                 "shape": ["B", "C"]},
                {"name": "k.0", "role": "cache", "dtype": "f32",
                 "shape": ["B", "C", 1]}],
     "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", "T", 7]}]}
  ]
})json";

constexpr int64_t kV = 7;

float fakeLogit(const float *w, int32_t id, int32_t previous, int64_t t,
                int64_t v) {
  float value = w[id * kV + v] + 0.01f * float(t) * float(v);
  if (previous != 0)
    value += 0.5f * w[previous * kV + (v + 1) % kV];
  return value;
}

int32_t fakeLogits(void *, void *params, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  const float *w = static_cast<const float *>(params);
  const int32_t *ids = static_cast<const int32_t *>(inputs[0]);
  float *out = static_cast<float *>(outputs[0]);
  const int64_t rows = dims[0], length = dims[1];
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t t = 0; t < length; ++t)
      for (int64_t v = 0; v < kV; ++v)
        out[(b * length + t) * kV + v] =
            fakeLogit(w, ids[b * length + t],
                      t ? ids[b * length + t - 1] : 0, t, v);
  return 0;
}

int32_t fakeLmStep(void *, void *params, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  const float *w = static_cast<const float *>(params);
  const int32_t *ids = static_cast<const int32_t *>(inputs[0]);
  float *cache = static_cast<float *>(inputs[2]);
  float *out = static_cast<float *>(outputs[0]);
  const int64_t rows = dims[0], fresh = dims[1], held = dims[2];
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t j = 0; j < fresh; ++j) {
      int64_t p = held - fresh + j;
      int32_t id = ids[b * fresh + j];
      cache[b * held + p] = float(id);
      int32_t previous = p ? int32_t(cache[b * held + p - 1]) : 0;
      for (int64_t v = 0; v < kV; ++v)
        out[(b * fresh + j) * kV + v] = fakeLogit(w, id, previous, p, v);
    }
  return 0;
}

const txc_entry_fn kFakeLmTable[] = {fakeLogits, fakeLmStep};

TEST(GenerationTest, LmStepCacheMatchesTheRerunAtTemperatureZero) {
  ModelInfo model = ModelInfo::parse(kFakeLmJson);
  ModelRunner runner(model, kFakeLmTable, 1);
  runner.params().write().initialize(3);
  ASSERT_TRUE(LmStepCached::available(model));
  GenerateSettings settings;
  settings.eos = 3;
  settings.maxNewTokens = 8;
  // Prompts of different lengths: left-padded, the cache grows per step.
  std::vector<TokenIds> prompts = {{4, 5, 6}, {1}, {2, 6}};
  LogitsRerun rerun(runner, 0);
  LmStepCached cached(runner, 0);
  std::vector<TokenIds> expected = generateTokens(rerun, prompts, settings);
  EXPECT_EQ(generateTokens(cached, prompts, settings), expected);
  // Sampling too: the same draws over the same logits.
  settings.sampling.temperature = 1.0;
  settings.sampling.seed = 11;
  EXPECT_EQ(generateTokens(cached, prompts, settings),
            generateTokens(rerun, prompts, settings));
  // Past the T bound (12) the cached model re-runs the last 12 tokens.
  settings.maxNewTokens = 14;
  settings.eos = -1;
  EXPECT_EQ(generateTokens(cached, prompts, settings),
            generateTokens(rerun, prompts, settings));
}

// On a device (FakeDevice.h) the caches stay in device memory
// (ResidentTensor.h): an lm_step call copies its tokens and ids in, through
// the call's pinned buffers, and only the greedy choices come back
// (Device::argmaxRows), or every row's last logits when sampling. The same
// tokens as on the CPU.
TEST(GenerationTest, LmStepCacheOnADeviceMatchesTheCpu) {
  ModelInfo cpuModel = ModelInfo::parse(kFakeLmJson);
  ModelInfo deviceModel = ModelInfo::parse(onFakeDevice(kFakeLmJson));
  ModelRunner cpu(cpuModel, kFakeLmTable, 1);
  ModelRunner device(deviceModel, kFakeLmTable, 1);
  ASSERT_NE(device.device(), nullptr);
  cpu.params().write().initialize(3);
  device.params().write().initialize(3);
  fakeDeviceCounts() = {};
  GenerateSettings settings;
  settings.eos = -1;
  settings.maxNewTokens = 6;
  std::vector<TokenIds> prompts = {{4, 5, 6}, {1}, {2, 6}};
  LogitsRerun rerun(cpu, 0);
  LmStepCached cached(device, 0);
  EXPECT_EQ(generateTokens(cached, prompts, settings),
            generateTokens(rerun, prompts, settings));
  EXPECT_EQ(fakeDeviceCounts().arenaToDevice, 1);
  // 6 choices of 3 rows: the first over the prompts' 3 positions (each
  // row's last one chosen on the device), then one token 5 times.
  EXPECT_EQ(fakeDeviceCounts().argmaxCalls, 6);
  EXPECT_EQ(fakeDeviceCounts().otherBytesToHost, 6 * 3 * 4);
  EXPECT_GT(fakeDeviceCounts().withinDevice, 0);
  EXPECT_GT(fakeDeviceCounts().otherPinned, 0);
  EXPECT_EQ(fakeDeviceCounts().otherPinned,
            fakeDeviceCounts().otherToDevice + fakeDeviceCounts().otherToHost);

  // Sampling reads the logits: all 3 positions' once, then a token's.
  fakeDeviceCounts() = {};
  settings.sampling.temperature = 0.8;
  settings.sampling.seed = 5;
  EXPECT_EQ(generateTokens(cached, prompts, settings),
            generateTokens(rerun, prompts, settings));
  EXPECT_EQ(fakeDeviceCounts().argmaxCalls, 0);
  EXPECT_EQ(fakeDeviceCounts().otherBytesToHost,
            (3 * 3 * kV + 5 * 3 * 1 * kV) * 4);

  // A device that does not choose: the host chooses from the logits, with
  // the ids the tokenizer allows.
  settings.sampling.temperature = 0.0;
  settings.allowed = {kV - 1, {1}};
  txrt_driver_test::setFakeDeviceArgmax(false);
  const std::vector<TokenIds> hostChosen =
      generateTokens(cached, prompts, settings);
  txrt_driver_test::setFakeDeviceArgmax(true);
  EXPECT_EQ(hostChosen, generateTokens(rerun, prompts, settings));
  EXPECT_EQ(generateTokens(cached, prompts, settings), hostChosen);
  for (const TokenIds &ids : hostChosen)
    for (int32_t id : ids)
      EXPECT_TRUE(id != 1 && id < kV - 1) << id;
}

// lm_step calls as CUDA graphs: prompt batches of one shape, one after the
// other, replay each position's step (the caches and cache_ids' buffer
// keep their addresses); the CPU's tokens throughout.
TEST(GenerationTest, LmStepsOnADeviceReplayAsGraphs) {
  ModelInfo cpuModel = ModelInfo::parse(kFakeLmJson);
  ModelInfo deviceModel = ModelInfo::parse(onFakeDevice(kFakeLmJson));
  ModelRunner cpu(cpuModel, kFakeLmTable, 1);
  ModelRunner device(deviceModel, kFakeLmTable, 1);
  cpu.params().write().initialize(4);
  device.params().write().initialize(4);
  GenerateSettings settings;
  settings.eos = -1;
  settings.maxNewTokens = 5;
  LmStepCached onCpu(cpu, 0), onDevice(device, 0);
  for (const std::vector<TokenIds> &prompts :
       {std::vector<TokenIds>{{4, 5}, {1, 2}}, {{6, 6}, {3, 1}},
        {{2, 5}, {5, 4}}, {{1, 1}, {6, 2}}})
    EXPECT_EQ(generateTokens(onDevice, prompts, settings),
              generateTokens(onCpu, prompts, settings));
  EXPECT_EQ(device.graphStats().captured, 5);
  EXPECT_GE(device.graphStats().replays, 5);
}

} // namespace
