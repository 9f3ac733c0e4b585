//===- EmaTest.cpp - train --ema: the update, swap, checkpoint round trip -===//
#include "loop/Ema.h"
#include "core/Error.h"
#include "loop/Checkpoint.h"
#include "TestUtil.h"

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
