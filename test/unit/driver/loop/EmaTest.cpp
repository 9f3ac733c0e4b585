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

/// A trained checkpoint of the fake model, with a weight average.
std::string savedWithAverage(ScratchDir &dir, const ModelInfo &model) {
  ParameterArena params(model);
  params.initialize(3);
  WeightAverage average(model, params, 0.5);
  TrainingPosition position;
  position.batchSize = 2;
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"a"}}, 1, 0);
  tokenizer.target = Vocabulary::build({{"b"}}, 1, 0);
  saveCheckpoint(dir.file("c.safetensors"), model, params, position, tokenizer,
                 &average);
  return dir.file("c.safetensors");
}

TEST(EmaTest, APartOfTheAverageIsAnError) {
  // A checkpoint missing one __ema tensor (damaged, or edited with its
  // checksum entry removed) read as one without an average: predict and
  // eval used the raw weights, --resume a new average, all silently.
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  SafetensorsReader whole(savedWithAverage(dir, model));
  std::vector<std::vector<float>> data;
  std::vector<SafetensorsTensorView> kept;
  std::string dropped;
  for (const SafetensorsEntry &entry : whole.tensors()) {
    if (dropped.empty() && entry.name.rfind(kEmaPrefix, 0) == 0) {
      dropped = entry.name;
      continue;
    }
    data.emplace_back(size_t(entry.end - entry.begin) / sizeof(float));
    whole.read(entry, data.back().data());
    kept.push_back({entry.name, DType::F32, entry.shape, data.back().data()});
  }
  writeSafetensors(dir.file("part.safetensors"), kept,
                   {{"format", "txc-checkpoint"},
                    {"model", "fake_seq2seq"},
                    {kEmaDecayKey, "0.5"}});
  SafetensorsReader part(dir.file("part.safetensors"));
  EXPECT_THROW_MESSAGE(hasAveragedWeights(part, model), InputError,
                       "tensor '" + dropped + "' is missing from '",
                       "of the " + std::to_string(model.params.size()) +
                           " tensors of a weight average (--ema)");
  std::ostringstream err;
  ParameterArena inference(model);
  EXPECT_THROW(loadWeightsForInference(part, model, inference, false, err),
               InputError);

  // An ema_decay with no average at all.
  std::vector<SafetensorsTensorView> raw;
  for (const SafetensorsTensorView &view : kept)
    if (view.name.rfind(kEmaPrefix, 0) != 0)
      raw.push_back(view);
  writeSafetensors(dir.file("none.safetensors"), raw,
                   {{"format", "txc-checkpoint"},
                    {"model", "fake_seq2seq"},
                    {kEmaDecayKey, "0.5"}});
  EXPECT_THROW_MESSAGE(
      hasAveragedWeights(SafetensorsReader(dir.file("none.safetensors")),
                         model),
      InputError,
      "no weight average although its __metadata__ has 'ema_decay'");
}

TEST(EmaTest, AnotherConfigOfTheSameShapesIsWarnedAbout) {
  // A checkpoint trained with heads = 2 loaded silently into a build with
  // heads = 4 (the same tensors) and computed another function.
  ScratchDir dir;
  ModelInfo trained = ModelInfo::parse(fake_seq2seq_json);
  SafetensorsReader file(savedWithAverage(dir, trained));
  ModelInfo other = trained;
  for (ConfigValue &value : other.config)
    if (value.key == "label_smoothing") {
      value.json = "0.1";
      value.number = 0.1;
    }
  std::ostringstream same, warned, noted;
  ParameterArena params(trained);
  loadWeightsForInference(file, trained, params, false, same);
  EXPECT_EQ(same.str().find("config"), std::string::npos) << same.str();
  loadWeightsForInference(file, other, params, false, warned);
  EXPECT_NE(warned.str().find(
                "warning: '" + file.path() +
                "' was trained with another config (this executable: "
                "label_smoothing = 0.1 (was 0.0)): its tensors fit, but a "
                "value that shapes the model (heads, eps, a scale) makes "
                "this executable compute another function of them; txc -D "
                "label_smoothing=0.0 builds the model it trained (values "
                "used only in training, such as dropout or warmup, change "
                "nothing here)"),
            std::string::npos)
      << warned.str();
  // A file that records no config (a PyTorch state_dict): nothing to
  // compare, no warning (every key read as new).
  std::ostringstream foreign;
  params.save(dir.file("w.safetensors"), {{"format", "pt"}});
  loadWeightsForInference(SafetensorsReader(dir.file("w.safetensors")), other,
                          params, false, foreign);
  EXPECT_EQ(foreign.str(), "");
  // An export records the config (it loaded into another config's build
  // without a word): warned as the checkpoint is.
  std::ostringstream exported;
  exportParameters(dir.file("e.safetensors"), trained, params);
  loadWeightsForInference(SafetensorsReader(dir.file("e.safetensors")), other,
                          params, false, exported);
  EXPECT_NE(exported.str().find("was trained with another config (this "
                                "executable: label_smoothing = 0.1 (was "
                                "0.0))"),
            std::string::npos)
      << exported.str();
  // train --init-from starts from them: a note.
  loadWeightsForInference(file, other, params, false, noted,
                          WeightsUse::Training);
  EXPECT_NE(noted.str().find("note: '" + file.path() +
                             "' was trained with another config (this model: "
                             "label_smoothing = 0.1 (was 0.0)); training "
                             "starts from its weights"),
            std::string::npos)
      << noted.str();
}

TEST(EmaTest, ATrainingOnlyConfigChangeIsANoteWithTheSameFingerprint) {
  // A checkpoint trained with label_smoothing = 0.0 loaded by a build with
  // 0.1 was warned about as another function, although nothing the
  // inference entries compute reads it: txc's inference fingerprint (the
  // same in both builds) tells, and the warning stays for another one.
  ScratchDir dir;
  ModelInfo trained = ModelInfo::parse(fake_seq2seq_json);
  trained.inferenceFingerprint = "0123456789abcdef";
  SafetensorsReader file(savedWithAverage(dir, trained));
  EXPECT_EQ(sameInferenceFingerprint(file, trained), true);
  ModelInfo other = trained;
  for (ConfigValue &value : other.config)
    if (value.key == "label_smoothing") {
      value.json = "0.1";
      value.number = 0.1;
    }
  ParameterArena params(trained);
  std::ostringstream same;
  loadWeightsForInference(file, other, params, false, same);
  EXPECT_NE(same.str().find(
                "note: '" + file.path() +
                "' was trained with another config (this executable: "
                "label_smoothing = 0.1 (was 0.0)), which changes nothing the "
                "entries that do not train compute (txc compiled them to the "
                "same program)"),
            std::string::npos)
      << same.str();
  EXPECT_EQ(same.str().find("warning"), std::string::npos) << same.str();
  // The pad id is read by the driver too (it pads batches with it): with
  // the same fingerprint, still the warning.
  ModelInfo otherPad = other;
  for (ConfigValue &value : otherPad.config)
    if (value.key == "pad") {
      value.json = "1";
      value.number = 1;
    }
  std::ostringstream pad;
  noteConfigChanges(file, otherPad, pad, WeightsUse::Inference);
  EXPECT_NE(pad.str().find("warning: '" + file.path() +
                           "' was trained with another config"),
            std::string::npos)
      << pad.str();
  // A training entry run on them as they are (train_grad): still warned.
  std::ostringstream gradients;
  noteConfigChanges(file, other, gradients, WeightsUse::TrainingEntry);
  EXPECT_NE(gradients.str().find("warning: '" + file.path() +
                                 "' was trained with another config"),
            std::string::npos)
      << gradients.str();
  // Another fingerprint (heads = 2 against 4): the warning, without the
  // remark that training-only values change nothing (they are not what
  // differs in what this executable computes).
  other.inferenceFingerprint = "fedcba9876543210";
  EXPECT_EQ(sameInferenceFingerprint(file, other), false);
  std::ostringstream changed;
  loadWeightsForInference(file, other, params, false, changed);
  EXPECT_NE(changed.str().find(
                "warning: '" + file.path() +
                "' was trained with another config (this executable: "
                "label_smoothing = 0.1 (was 0.0)): its tensors fit, but a "
                "value that shapes the model (heads, eps, a scale) makes "
                "this executable compute another function of them; txc -D "
                "label_smoothing=0.0 builds the model it trained\n"),
            std::string::npos)
      << changed.str();
  // A build without one (an older txc): nothing to compare.
  other.inferenceFingerprint.clear();
  EXPECT_EQ(sameInferenceFingerprint(file, other), std::nullopt);
}

} // namespace
