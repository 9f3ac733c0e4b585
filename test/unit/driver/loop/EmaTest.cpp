//===- EmaTest.cpp - train --ema: the update, swap, checkpoint round trip -===//
#include "loop/Ema.h"
#include "core/Error.h"
#include "loop/Checkpoint.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <sstream>

extern "C" const char fake_seq2seq_json[]; // FakeSeq2Seq.cpp

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(EmaTest, UpdateIsDecayTimesAveragePlusTheRestTimesWeights) {
  std::vector<float> ema = {1.0f, -2.0f, 0.0f}, param = {3.0f, 2.0f, 5.0f};
  updateAverage(ema.data(), param.data(), 3, 0.75f);
  EXPECT_FLOAT_EQ(ema[0], 0.75f * 1.0f + 0.25f * 3.0f);
  EXPECT_FLOAT_EQ(ema[1], 0.75f * -2.0f + 0.25f * 2.0f);
  EXPECT_FLOAT_EQ(ema[2], 0.25f * 5.0f);
  // Repeated with fixed weights it converges on them.
  for (int i = 0; i < 200; ++i)
    updateAverage(ema.data(), param.data(), 3, 0.75f);
  EXPECT_NEAR(ema[1], 2.0f, 1e-5);
}

// Each element is round(round(decay * ema) + round((1 - decay) * param)):
// the products are rounded before the sum and never fused into an FMA, the
// bits a device's average must have too (runtime/cuda/kernels/
// EmaKernels.cuh). The inputs are ones where an FMA, either way round,
// gives other bits.
TEST(EmaTest, UpdateRoundsEachProductBeforeTheSum) {
  const float decay = 0.9f, keep = decay, take = 1.0f - decay;
  std::vector<float> ema, param;
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24) * 4.0f - 2.0f;
  };
  while (ema.size() < 257) {
    float e = next(), p = next();
    volatile float kept = keep * e, taken = take * p;
    float separate = kept + taken;
    if (std::fma(keep, e, taken) != separate &&
        std::fma(take, p, kept) != separate) {
      ema.push_back(e);
      param.push_back(p);
    }
  }
  std::vector<float> got = ema;
  updateAverage(got.data(), param.data(), int64_t(got.size()), decay);
  for (size_t i = 0; i < got.size(); ++i) {
    volatile float kept = keep * ema[i], taken = take * param[i];
    float want = kept + taken;
    ASSERT_EQ(std::memcmp(&got[i], &want, sizeof(float)), 0)
        << "element " << i << ": " << got[i] << " instead of " << want;
  }
}

// The average holds every parameter (the host copy keeps them back to back
// in arena order): each view is its parameter's, updated on its own.
TEST(EmaTest, EveryParameterHasItsOwnAverage) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParameterArena params(model), start(model);
  params.initialize(5);
  start.initialize(5);
  WeightAverage average(model, params, 0.25);
  params.initialize(6);
  average.update(params);
  std::vector<SafetensorsTensorView> views = average.views();
  ASSERT_EQ(views.size(), model.params.size());
  for (size_t i = 0; i < model.params.size(); ++i) {
    const ParamInfo &info = model.params[i];
    EXPECT_EQ(views[i].name, kEmaPrefix + info.name);
    EXPECT_EQ(views[i].shape, info.shape);
    std::vector<float> want(start.param(info),
                            start.param(info) + info.numElements);
    updateAverage(want.data(), params.param(info), info.numElements, 0.25f);
    EXPECT_EQ(
        std::memcmp(views[i].data, want.data(), want.size() * sizeof(float)), 0)
        << info.name;
  }
}

TEST(EmaTest, SwapExchangesAndCheckpointsRoundTrip) {
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParameterArena params(model);
  params.initialize(3);
  const ParamInfo &first = model.params[0];
  float start = params.param(first)[0];
  WeightAverage average(model, params, 0.5);
  params.param(first)[0] = start + 2.0f; // an "update"
  average.update(params);
  std::vector<SafetensorsTensorView> views = average.views();
  EXPECT_EQ(views[0].name, kEmaPrefix + first.name);
  EXPECT_FLOAT_EQ(static_cast<const float *>(views[0].data)[0], start + 1.0f);
  average.swap(params);
  EXPECT_FLOAT_EQ(params.param(first)[0], start + 1.0f);
  average.swap(params);
  EXPECT_FLOAT_EQ(params.param(first)[0], start + 2.0f);

  TrainingPosition position;
  position.batchSize = 2;
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"a"}}, 1, 0);
  tokenizer.target = Vocabulary::build({{"b"}}, 1, 0);
  saveCheckpoint(dir.file("c.safetensors"), model, params, position,
                 tokenizer, &average);
  SafetensorsReader file(dir.file("c.safetensors"));
  EXPECT_EQ(checkpointDecay(file), 0.5);
  ASSERT_TRUE(hasAveragedWeights(file, model));

  // --resume restores the average; the raw weights load as before.
  ParameterArena resumed(model);
  loadCheckpoint(file, model, resumed);
  EXPECT_FLOAT_EQ(resumed.param(first)[0], start + 2.0f);
  WeightAverage back(model, resumed, 0.5);
  EXPECT_TRUE(back.load(file));
  back.swap(resumed);
  EXPECT_FLOAT_EQ(resumed.param(first)[0], start + 1.0f);

  // translate / eval: the average unless --no-ema.
  std::ostringstream err;
  ParameterArena inference(model);
  loadWeightsForInference(file, model, inference, false, err);
  EXPECT_FLOAT_EQ(inference.param(first)[0], start + 1.0f);
  loadWeightsForInference(file, model, inference, true, err);
  EXPECT_FLOAT_EQ(inference.param(first)[0], start + 2.0f);
  EXPECT_NE(err.str().find("--no-ema for the raw weights"), std::string::npos);

  // A checkpoint without one: no average, no note.
  saveCheckpoint(dir.file("plain.safetensors"), model, params, position,
                 tokenizer);
  SafetensorsReader plain(dir.file("plain.safetensors"));
  EXPECT_FALSE(hasAveragedWeights(plain, model));
  EXPECT_FALSE(checkpointDecay(plain));
  EXPECT_FALSE(back.load(plain));
}

} // namespace
