//===- CheckpointTest.cpp - metadata v2, training checkpoints -------------===//
#include "loop/Checkpoint.h"
#include "core/Error.h"
#include "core/ModelInfo.h"
#include "core/Optimizer.h"
#include "formats/Safetensors.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>

extern "C" const char fake_seq2seq_json[]; // FakeSeq2Seq.cpp

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(ModelInfoV2Test, ParsesKindsOffsetsAndOptimizer) {
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  EXPECT_EQ(model.version, 2);
  EXPECT_TRUE(model.hasTrainingState());
  EXPECT_EQ(model.findEntry("train")->kind, EntryKind::TrainStep);
  EXPECT_EQ(model.findEntry("train_grad")->kind, EntryKind::TrainGrad);
  EXPECT_EQ(model.findEntry("decode")->kind, EntryKind::Forward);
  EXPECT_EQ(model.findEntryOfKind(EntryKind::TrainStep)->name, "train");
  const ParamInfo *bias = model.findParam("out.bias");
  EXPECT_EQ(bias->gradOffset, 3920);
  EXPECT_EQ(bias->expAvgOffset, 5920);
  EXPECT_EQ(bias->expAvgSqOffset, 7920);
  ASSERT_TRUE(model.optimizer.has_value());
  EXPECT_EQ(model.optimizer->beta2, 0.98);
  EXPECT_EQ(learningRate(model.optimizer->lr, 10), 0.05);
  EXPECT_EQ(describeOptimizer(*model.optimizer),
            "adam(lr = 0.05, beta1 = 0.9, beta2 = 0.98, eps = 1e-09)");
  // With the digits a value needs: a beta1 of 0.99999994 read "1".
  OptimizerInfo close = *model.optimizer;
  close.beta1 = 0.99999994;
  close.lr.value = 1.0 / 3;
  EXPECT_EQ(describeOptimizer(close), "adam(lr = 0.3333333333333333, beta1 = "
                                      "0.99999994, beta2 = 0.98, eps = 1e-09)");
}

TEST(ModelInfoV2Test, NoamSchedule) {
  LearningRateSchedule noam;
  noam.kind = LearningRateSchedule::Kind::Noam;
  noam.dModel = 512;
  noam.warmup = 4000;
  noam.factor = 1;
  // Rises linearly to the warmup step, then decays as step^-0.5.
  EXPECT_NEAR(learningRate(noam, 1), std::pow(512, -0.5) * std::pow(4000, -1.5),
              1e-15);
  EXPECT_NEAR(learningRate(noam, 4000),
              std::pow(512, -0.5) * std::pow(4000, -0.5), 1e-15);
  EXPECT_NEAR(learningRate(noam, 16000),
              std::pow(512, -0.5) * std::pow(16000, -0.5), 1e-15);
}

std::string withParam(const std::string &param) {
  return R"({"version": 2, "model": "m", "dims": [], "param_arena_bytes": 64,
    "params": [)" + param + R"(], "entries": []})";
}

TEST(ModelInfoV2Test, RejectsBadStateOffsets) {
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(withParam(
          R"({"name": "w", "dtype": "f32", "shape": [4], "init": "zeros",
              "offset": 0, "grad_offset": 16, "exp_avg_offset": 24,
              "exp_avg_sq_offset": 48})")),
      ModelError, "the gradient of 'w' and exp_avg of 'w' overlap");
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(withParam(
          R"({"name": "w", "dtype": "f32", "shape": [4], "init": "zeros",
              "offset": 0, "grad_offset": 16, "exp_avg_offset": 32,
              "exp_avg_sq_offset": 56})")),
      ModelError, "params[0].exp_avg_sq_offset ('w') at offset 56",
      "does not fit the parameter arena of 64 bytes");
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(withParam(
          R"({"name": "w", "dtype": "f32", "shape": [4], "init": "zeros",
              "offset": 0, "grad_offset": 16})")),
      ModelError, "must have all of grad_offset");
  std::string badKind = R"({"version": 2, "model": "m", "dims": [],
    "param_arena_bytes": 0, "params": [], "entries": [{"name": "e",
    "kind": "sideways", "arena_bytes": 0, "inputs": [], "outputs": []}]})";
  EXPECT_THROW_MESSAGE(ModelInfo::parse(badKind), ModelError,
                       "entries[0].kind 'sideways' is not one of forward");
}

TEST(CheckpointTest, RoundTripWithMomentsAndPosition) {
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParameterArena params(model);
  params.initialize(3);
  for (const ParamInfo &info : model.params)
    for (int64_t i = 0; i < info.numElements; ++i) {
      EXPECT_EQ(params.expAvg(info)[i], 0.0f);
      params.expAvg(info)[i] = float(i) * 0.5f;
      params.expAvgSq(info)[i] = float(i) * 0.25f;
    }
  TrainingPosition position;
  position.step = 12;
  position.seed = 99;
  position.epoch = 1;
  position.batchInEpoch = 4;
  position.batchSize = 8;
  position.minFreq = 2;
  position.updateFreq = 4;
  position.ranks = 2;
  position.dataPath = "train.tsv";
  position.dataHash = 0xfeedface12345678ull;
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"hello", "world"}}, 1, 0);
  tokenizer.target = Vocabulary::build({{"hola", "mundo", "hola"}}, 1, 0);
  saveCheckpoint(dir.file("c.safetensors"), model, params, position, tokenizer);

  SafetensorsReader file(dir.file("c.safetensors"));
  EXPECT_NE(file.find("out.weight.exp_avg"), nullptr);
  EXPECT_NE(file.find("out.weight.exp_avg_sq"), nullptr);
  // The tokenizer is inside the checkpoint.
  std::optional<Tokenizer> stored = checkpointTokenizer(file);
  ASSERT_TRUE(stored);
  EXPECT_TRUE(stored->sameVocabularies(tokenizer));
  EXPECT_EQ(stored->target.words()[4], "hola");

  ParameterArena loaded(model);
  TrainingPosition back =
      loadCheckpoint(dir.file("c.safetensors"), model, loaded);
  EXPECT_EQ(back.step, 12);
  EXPECT_EQ(back.seed, 99u);
  EXPECT_EQ(back.batchSize, 8);
  EXPECT_EQ(back.minFreq, 2);
  EXPECT_EQ(back.updateFreq, 4);
  EXPECT_EQ(back.ranks, 2);
  EXPECT_EQ(back.dataHash, position.dataHash);
  EXPECT_FALSE(back.validation); // no --valid, no best
  EXPECT_EQ(std::memcmp(loaded.data(), params.data(), 2000), 0);
  EXPECT_EQ(std::memcmp(static_cast<char *>(loaded.data()) + 4000,
                        static_cast<char *>(params.data()) + 4000, 4000),
            0);

  // The parameters alone load into run/translate/eval.
  ParameterArena paramsOnly(model);
  paramsOnly.load(dir.file("c.safetensors"));
  EXPECT_EQ(std::memcmp(paramsOnly.data(), params.data(), 2000), 0);
}

TEST(CheckpointTest, BlockAndPrecisionRoundTrip) {
  // A language model's --block and the writer's precision are recorded, so
  // --resume cuts the text as before and info --load can show both; older
  // checkpoints have neither (0 and empty).
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  model.precision = "bf16";
  ParameterArena params(model);
  params.initialize(1);
  TrainingPosition position;
  position.batchSize = 2;
  position.block = 8;
  saveCheckpoint(dir.file("c.safetensors"), model, params, position,
                 Tokenizer());
  SafetensorsReader file(dir.file("c.safetensors"));
  EXPECT_EQ(recordedBlock(file), 8);
  ParameterArena loaded(model);
  TrainingPosition back = loadCheckpoint(file, model, loaded);
  EXPECT_EQ(back.block, 8);
  EXPECT_EQ(back.precision, "bf16");

  position.block = 0;
  model.precision = "fp32";
  saveCheckpoint(dir.file("d.safetensors"), model, params, position,
                 Tokenizer());
  SafetensorsReader other(dir.file("d.safetensors"));
  EXPECT_EQ(other.metadataValue("block"), nullptr);
  EXPECT_EQ(recordedBlock(other), 0);
  EXPECT_EQ(loadCheckpoint(other, model, loaded).precision, "fp32");
}

TEST(CheckpointTest, BestValidationRoundTripsExactly) {
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParameterArena params(model);
  params.initialize(3);
  TrainingPosition position;
  position.batchSize = 2;
  ValidationRecord record;
  record.validPath = "valid.tsv";
  record.validHash = 0x0123456789abcdefull;
  record.by = BestBy::Accuracy;
  record.bestStep = 20;
  record.bestLoss = 2.7388123456789012;
  record.bestAccuracy = 1.0 / 6.0;
  record.bestBleu = 10.213;
  record.sinceBest = 3;
  position.validation = record;
  saveCheckpoint(dir.file("c.safetensors"), model, params, position,
                 Tokenizer());

  ParameterArena loaded(model);
  TrainingPosition back =
      loadCheckpoint(dir.file("c.safetensors"), model, loaded);
  ASSERT_TRUE(back.validation);
  EXPECT_EQ(back.validation->validPath, "valid.tsv");
  EXPECT_EQ(back.validation->validHash, record.validHash);
  EXPECT_EQ(back.validation->by, BestBy::Accuracy);
  EXPECT_EQ(back.validation->bestStep, 20);
  // Bit-exact, so a resumed run compares as the uninterrupted one does.
  EXPECT_EQ(back.validation->bestLoss, record.bestLoss);
  EXPECT_EQ(back.validation->bestAccuracy, record.bestAccuracy);
  EXPECT_EQ(back.validation->bestBleu, record.bestBleu);
  EXPECT_EQ(back.validation->sinceBest, 3);
}

TEST(CheckpointTest, MismatchedCheckpointsAreRefusedNamingTheTensor) {
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParameterArena params(model);
  params.initialize(0);
  params.save(dir.file("params.safetensors"));
  EXPECT_THROW_MESSAGE(
      loadCheckpoint(dir.file("params.safetensors"), model, params),
      InputError, "is not a training checkpoint");

  std::vector<float> zeros(160, 0.0f);
  writeSafetensors(dir.file("bad.safetensors"),
                   {{"src_embed.weight", DType::F32, {20, 8}, zeros.data()},
                    {"src_embed.weight.exp_avg", DType::F32, {8, 20},
                     zeros.data()}},
                   {{"format", "txc-checkpoint"}, {"model", "fake_seq2seq"}});
  EXPECT_THROW_MESSAGE(
      loadCheckpoint(dir.file("bad.safetensors"), model, params), InputError,
      "tensor 'tgt_embed.weight' is missing",
      "tensor 'src_embed.weight.exp_avg' is F32 [8, 20]",
      "tensor 'src_embed.weight.exp_avg_sq' is missing");

  writeFile(dir.file("corrupt.safetensors"), std::string("\x10\0\0\0\0\0\0\0{", 9));
  EXPECT_THROW_MESSAGE(
      loadCheckpoint(dir.file("corrupt.safetensors"), model, params),
      InputError, "corrupt.safetensors' is truncated");
  EXPECT_EQ(checkpointSibling("a/ckpt.safetensors", ".tokenizer.json"),
            "a/ckpt.tokenizer.json");
  EXPECT_EQ(checkpointSibling("ckpt.bin", ".loss.csv"), "ckpt.bin.loss.csv");
}

TEST(CheckpointTest, ANegativeSecondMomentIsRefused) {
  // exp_avg_sq is a mean of squares; a negative one (a damaged or edited
  // file) resumed silently and made sqrt(v) NaN or a step many times lr.
  ScratchDir dir;
  ModelInfo model = ModelInfo::parse(fake_seq2seq_json);
  ParameterArena params(model);
  params.initialize(3);
  const ParamInfo &last = model.params.back();
  params.expAvgSq(last)[1] = -0.25f;
  TrainingPosition position;
  position.batchSize = 2;
  Tokenizer tokenizer;
  tokenizer.source = Vocabulary::build({{"a"}}, 1, 0);
  tokenizer.target = Vocabulary::build({{"b"}}, 1, 0);
  saveCheckpoint(dir.file("c.safetensors"), model, params, position, tokenizer);
  ParameterArena loaded(model);
  EXPECT_THROW_MESSAGE(loadCheckpoint(dir.file("c.safetensors"), model, loaded),
                       InputError, "tensor '" + last.name + ".exp_avg_sq' in '",
                       "(Adam's second moment) holds a negative value (-0.25 "
                       "at [");
}

// A float config item of integral value: 1 in checkpoints saved before the
// metadata said which items are floats, 1.0 since. The same number is no
// change (it would have been "eps = 1.0 (was 1)" and a warning).
TEST(ConfigChangesTest, TheSameNumberWrittenTwoWaysIsNoChange) {
  std::string json = fake_seq2seq_json;
  const std::string config = "\"config\": {";
  json.replace(json.find(config), config.size(),
               "\"float_configs\": [\"eps\"], \"config\": {\"eps\": 1, ");
  ModelInfo model = ModelInfo::parse(json);
  std::vector<std::pair<std::string, std::string>> saved =
      modelConfigRecord(model);
  bool found = false;
  for (auto &[key, value] : saved)
    if (key == "eps") {
      EXPECT_EQ(value, "1.0");
      value = "1";
      found = true;
    }
  ASSERT_TRUE(found);
  ConfigChanges same = describeConfigChanges(saved, model, {});
  EXPECT_EQ(same.changes, "");
  for (auto &[key, value] : saved)
    if (key == "eps")
      value = "2";
  ConfigChanges other = describeConfigChanges(saved, model, {});
  EXPECT_EQ(other.changes, "eps = 1.0 (was 2)");
  EXPECT_EQ(other.flags, " -D eps=2");
  // An item the spec no longer has: no flags build the trained model.
  saved.push_back({"scale", "2.5"});
  ConfigChanges gone = describeConfigChanges(saved, model, {});
  EXPECT_EQ(gone.changes, "eps = 1.0 (was 2), scale (was 2.5) is gone");
  EXPECT_EQ(gone.flags, "");
}

} // namespace
