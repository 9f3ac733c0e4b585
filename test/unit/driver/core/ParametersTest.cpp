//===- ParametersTest.cpp - the parameter arena: init, load, save ---------===//
#include "core/Parameters.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

const char *kModel = R"({"version": 1, "model": "tiny",
  "dims": [], "param_arena_bytes": 256,
  "params": [
    {"name": "w", "dtype": "f32", "shape": [4, 4], "init": "xavier_uniform", "offset": 0},
    {"name": "b", "dtype": "f32", "shape": [4], "init": "zeros", "offset": 64},
    {"name": "g", "dtype": "f32", "shape": [4], "init": "ones", "offset": 128}],
  "entries": []})";

class ParametersTest : public ::testing::Test {
protected:
  ModelInfo model = ModelInfo::parse(kModel);
  ScratchDir dir;
  std::vector<float> w = std::vector<float>(16, 0.5f);
  std::vector<float> b = {1, 2, 3, 4}, g = {5, 6, 7, 8};

  std::string write(const std::string &name,
                    std::vector<SafetensorsTensorView> tensors) {
    std::string path = dir.file(name);
    writeSafetensors(path, tensors);
    return path;
  }
  std::vector<SafetensorsTensorView> goodTensors() {
    return {{"w", DType::F32, {4, 4}, w.data()},
            {"b", DType::F32, {4}, b.data()},
            {"g", DType::F32, {4}, g.data()}};
  }
};

TEST_F(ParametersTest, InitializesByInitializer) {
  ParameterArena arena(model);
  arena.initialize(3);
  const float *pw = arena.param(*model.findParam("w"));
  const float *pb = arena.param(*model.findParam("b"));
  const float *pg = arena.param(*model.findParam("g"));
  float bound = float(std::sqrt(6.0 / 8.0));
  bool anyNonZero = false;
  for (int i = 0; i < 16; ++i) {
    EXPECT_LE(std::abs(pw[i]), bound);
    anyNonZero |= pw[i] != 0;
  }
  EXPECT_TRUE(anyNonZero);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pb[i], 0.0f);
    EXPECT_EQ(pg[i], 1.0f);
  }
}

TEST_F(ParametersTest, SaveThenLoadRoundTrips) {
  ParameterArena arena(model);
  arena.initialize(11);
  std::string path = dir.file("ckpt.safetensors");
  arena.save(path, {{"format", "txc"}});
  ParameterArena loaded(model);
  loaded.load(path);
  EXPECT_EQ(std::memcmp(arena.data(), loaded.data(), 256), 0);
  SafetensorsReader reader(path);
  EXPECT_EQ(reader.tensors().size(), 3u);
  EXPECT_EQ(reader.tensors()[0].name, "w");
}

TEST_F(ParametersTest, LoadsByNameInAnyOrderAndIgnoresTrainingState) {
  float m[16] = {}, step = 3;
  std::string path =
      write("w.safetensors", {{"g", DType::F32, {4}, g.data()},
                              {"__adam_m__.w", DType::F32, {4, 4}, m},
                              {"w", DType::F32, {4, 4}, w.data()},
                              {"__step__", DType::F32, {}, &step},
                              {"b", DType::F32, {4}, b.data()}});
  ParameterArena arena(model);
  arena.load(path);
  EXPECT_EQ(arena.param(*model.findParam("w"))[15], 0.5f);
  EXPECT_EQ(arena.param(*model.findParam("b"))[2], 3.0f);
  EXPECT_EQ(arena.param(*model.findParam("g"))[0], 5.0f);
}

TEST_F(ParametersTest, ReportsEveryMismatchAndLoadsNothing) {
  std::vector<double> w64(16, 1.0);
  std::vector<float> wrongShape(12, 9.0f);
  std::string path =
      write("bad.safetensors", {{"w", DType::F64, {4, 4}, w64.data()},
                                {"b", DType::F32, {3, 4}, wrongShape.data()},
                                {"extra.bias", DType::F32, {4}, g.data()}});
  ParameterArena arena(model);
  arena.initialize(0);
  std::vector<char> before(256);
  std::memcpy(before.data(), arena.data(), 256);
  try {
    arena.load(path);
    FAIL() << "no error";
  } catch (const InputError &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("tensor 'w' has dtype F64 in '" + path +
                           "' but the model expects F32"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("tensor 'b' has shape [3, 4] in '" + path +
                           "' but the model expects [4]"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("tensor 'g' is missing from '" + path +
                           "' (the model expects F32 [4])"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("tensor 'extra.bias' [4] in '" + path +
                           "' is not a parameter of model 'tiny'"),
              std::string::npos)
        << message;
    // What to do with the F64 tensor, first.
    EXPECT_EQ(message.find("'" + path +
                           "' holds F64 tensors and the model "
                           "reads F32"),
              0u)
        << message;
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 4);
  }
  EXPECT_EQ(std::memcmp(before.data(), arena.data(), 256), 0);
}

// An extra parameter of a training checkpoint (a layer the model has not)
// is one problem, not three: its Adam moments go with it (they were each
// listed as "not a parameter" too).
TEST_F(ParametersTest, AnExtraParametersMomentsAreNotListed) {
  std::string path = write(
      "extra.safetensors",
      {{"w", DType::F32, {4, 4}, w.data()},
       {"b", DType::F32, {4}, b.data()},
       {"g", DType::F32, {4}, g.data()},
       {"extra.bias", DType::F32, {4}, g.data()},
       {"extra.bias.exp_avg", DType::F32, {4}, g.data()},
       {"extra.bias.exp_avg_sq", DType::F32, {4}, g.data()},
       {"lone.exp_avg", DType::F32, {4}, g.data()}});
  SafetensorsReader file(path);
  std::vector<std::string> problems = checkCheckpointAgainstModel(file, model);
  ASSERT_EQ(problems.size(), 2u) << ::testing::PrintToString(problems);
  EXPECT_NE(problems[0].find("tensor 'extra.bias' [4]"), std::string::npos)
      << problems[0];
  // A moment whose parameter the file lacks is named itself.
  EXPECT_NE(problems[1].find("tensor 'lone.exp_avg' [4]"), std::string::npos)
      << problems[1];
}

// Hugging Face checkpoints that do not fit say what to do, once, first:
// weights stored transposed (GPT-2's Conv1D [in, out]), a tied output
// weight saved beside the embedding, a buffer, one shard of several, and a
// spec whose names have a prefix the file's lack. Each was a list of
// per-tensor lines only; transposing the tensors named left the square
// ones as they were, which then loaded without a word.
TEST_F(ParametersTest, HuggingFaceFilesGetWhatToDo) {
  std::vector<float> wt(16, 0.5f);
  auto first = [&](const std::string &file) {
    SafetensorsReader reader(file);
    std::vector<std::string> problems =
        checkCheckpointAgainstModel(reader, model);
    return problems.empty() ? std::string() : problems.front();
  };
  auto last = [&](const std::string &file) {
    SafetensorsReader reader(file);
    return checkCheckpointAgainstModel(reader, model).back();
  };
  // "w" is [4, 4] here: a model with a [2, 8] weight would show the
  // transpose; "b" [4] and "g" [4] are not 2-D.
  ModelInfo wide = model;
  wide.params[0].shape = {2, 8};
  std::string transposed =
      write("t.safetensors", {{"w", DType::F32, {8, 2}, wt.data()},
                              {"b", DType::F32, {4}, b.data()},
                              {"g", DType::F32, {4}, g.data()}});
  {
    SafetensorsReader reader(transposed);
    std::string hint = checkCheckpointAgainstModel(reader, wide).front();
    EXPECT_NE(hint.find("has the model's shape transposed ('w')"),
              std::string::npos)
        << hint;
    EXPECT_NE(hint.find("its square weights too"), std::string::npos) << hint;
  }
  std::string tied = write("tied.safetensors",
                           {{"w", DType::F32, {4, 4}, w.data()},
                            {"b", DType::F32, {4}, b.data()},
                            {"g", DType::F32, {4}, g.data()},
                            {"lm_head.weight", DType::F32, {4, 4}, w.data()}});
  EXPECT_EQ(last(tied), "'lm_head.weight' in '" + tied +
                            "' equals 'w' (tied embeddings, as Hugging Face's "
                            "save_pretrained writes both): the model ties "
                            "them, so leave it out of the file");
  // The file's own output weight beside a spec that ties it: called a
  // buffer, and "leave it out" dropped the trained layer.
  std::vector<float> other(16, 0.25f);
  std::string untied =
      write("untied.safetensors",
            {{"w", DType::F32, {4, 4}, w.data()},
             {"b", DType::F32, {4}, b.data()},
             {"g", DType::F32, {4}, g.data()},
             {"lm_head.weight", DType::F32, {4, 4}, other.data()}});
  EXPECT_NE(last(untied).find("'lm_head.weight' in '" + untied +
                              "' has the shape of 'w' but other values: the "
                              "file's model has a weight of its own there"),
            std::string::npos)
      << last(untied);
  EXPECT_EQ(last(untied).find("buffer"), std::string::npos) << last(untied);
  std::string buffer =
      write("buffer.safetensors",
            {{"w", DType::F32, {4, 4}, w.data()},
             {"b", DType::F32, {4}, b.data()},
             {"g", DType::F32, {4}, g.data()},
             {"rotary_emb.inv_freq", DType::F32, {2}, g.data()}});
  EXPECT_NE(last(buffer).find("'rotary_emb.inv_freq' is a module's buffer, "
                              "not a parameter"),
            std::string::npos)
      << last(buffer);
  // A notebook's buffer with another name (a sinusoidal table `pe`) beside
  // every parameter: the torch.save hint's state_dict led there, and the
  // per-tensor line said nothing of what to do.
  std::string notebook =
      write("pe.safetensors",
            {{"w", DType::F32, {4, 4}, w.data()},
             {"b", DType::F32, {4}, b.data()},
             {"g", DType::F32, {4}, g.data()},
             {"positional_encoding.pe", DType::F32, {1, 4}, g.data()}});
  EXPECT_NE(last(notebook).find("'positional_encoding.pe' is in the file "
                                "beside every parameter of the model: a "
                                "module's buffer"),
            std::string::npos)
      << last(notebook);
  EXPECT_NE(last(notebook).find("model.named_parameters()"), std::string::npos)
      << last(notebook);
  std::string shard = write("model-00001-of-00002.safetensors",
                            {{"w", DType::F32, {4, 4}, w.data()}});
  EXPECT_NE(first(shard).find("is one shard of a sharded checkpoint (00002 "
                              "files"),
            std::string::npos)
      << first(shard);
  ModelInfo prefixed = model;
  for (ParamInfo &info : prefixed.params)
    info.name = "model." + info.name;
  {
    SafetensorsReader reader(write("plain.safetensors", goodTensors()));
    std::string hint = checkCheckpointAgainstModel(reader, prefixed).front();
    EXPECT_NE(hint.find("is there without the prefix 'model.' ('w' for "
                        "'model.w')"),
              std::string::npos)
        << hint;
  }
}

// A Hugging Face state_dict keeps its parameters under a prefix
// (`transformer.`): each was reported missing and each tensor "not a
// parameter", 2 x N lines, without the one thing to change.
TEST_F(ParametersTest, ParametersUnderAPrefixAreNamedOnce) {
  std::vector<float> w(16, 0.5f);
  std::string path = write("prefixed.safetensors",
                           {{"transformer.w", DType::F32, {4, 4}, w.data()},
                            {"transformer.b", DType::F32, {4}, b.data()},
                            {"transformer.g", DType::F32, {4}, g.data()}});
  ParameterArena arena(model);
  EXPECT_THROW_MESSAGE(
      arena.load(path), InputError,
      "every parameter missing from '" + path +
          "' is there under the prefix 'transformer.' ('transformer.w' for "
          "'w'): save the tensors without it (in PyTorch, "
          "{k.removeprefix('transformer.'): v for k, v in "
          "state_dict.items()})");
  // A prefix ends at a dot, and a parameter is no prefixed copy of
  // another: 'layers.0.input_layernorm.weight' was read as 'norm.weight'
  // under 'layers.0.input_layer', advice that renamed every tensor.
  ModelInfo withNorm = model;
  withNorm.params.push_back(model.params.back());
  withNorm.params.back().name = "n.g";
  for (const char *name : {"big", "n.g"}) {
    std::string file = write(std::string("no-g-") + name + ".safetensors",
                             {{"w", DType::F32, {4, 4}, w.data()},
                              {"b", DType::F32, {4}, b.data()},
                              {name, DType::F32, {4}, g.data()}});
    SafetensorsReader reader(file);
    for (const std::string &problem :
         checkCheckpointAgainstModel(reader, withNorm))
      EXPECT_EQ(problem.find("under the prefix"), std::string::npos) << problem;
  }
  // Only part of them under a prefix: no hint.
  std::string some = write("some.safetensors",
                           {{"transformer.w", DType::F32, {4, 4}, w.data()},
                            {"b", DType::F32, {4}, b.data()}});
  try {
    arena.load(some);
    FAIL() << "no error";
  } catch (const InputError &error) {
    EXPECT_EQ(std::string(error.what()).find("prefix"), std::string::npos)
        << error.what();
  }
}

TEST_F(ParametersTest, ShapeMismatchMessageNamesBothShapes) {
  std::vector<float> big(16, 0.0f);
  std::string path =
      write("shape.safetensors", {{"w", DType::F32, {3, 4}, big.data()},
                                  {"b", DType::F32, {4}, b.data()},
                                  {"g", DType::F32, {4}, g.data()}});
  ParameterArena arena(model);
  EXPECT_THROW_MESSAGE(arena.load(path), InputError,
                       "tensor 'w' has shape [3, 4] in '" + path +
                           "' but the model expects [4, 4]");
}

TEST_F(ParametersTest, TruncatedCheckpointIsAnError) {
  std::string path = write("t.safetensors", goodTensors());
  std::string bytes = readFile(path);
  writeFile(path, bytes.substr(0, bytes.size() - 10));
  ParameterArena arena(model);
  EXPECT_THROW_MESSAGE(arena.load(path), InputError, "is truncated",
                       "tensor 'g'");
}

} // namespace

namespace {

// A --precision=bf16 model: w has a bf16 copy at bf16_offset 192; b none.
const char *kBf16Model = R"({"version": 1, "model": "tiny", "precision": "bf16",
  "dims": [], "param_arena_bytes": 256,
  "params": [
    {"name": "w", "dtype": "f32", "shape": [4, 4], "init": "ones", "offset": 0,
     "bf16_offset": 192},
    {"name": "b", "dtype": "f32", "shape": [4], "init": "zeros", "offset": 64}],
  "entries": []})";

/// Element i of w's bf16 copy, as the compiled entries read it.
uint16_t copyBits(ParameterArena &arena, int i) {
  uint16_t bits;
  std::memcpy(&bits, static_cast<char *>(arena.data()) + 192 + 2 * i, 2);
  return bits;
}

TEST(ParametersBf16Test, CopiesAreRoundedAfterInitWriteAndLoad) {
  ModelInfo model = ModelInfo::parse(kBf16Model);
  const ParamInfo &w = *model.findParam("w");
  ASSERT_EQ(w.bf16Offset, 192);
  EXPECT_EQ(model.findParam("b")->bf16Offset, -1);
  ParameterArena arena(model);
  arena.initialize(0);
  EXPECT_EQ(copyBits(arena, 0), 0x3f80); // 1.0f
  // 1 + 2^-8 + 2^-9 lies above the halfway point: rounds up.
  arena.param(w)[5] = 1.0f + 1.0f / 256 + 1.0f / 512;
  EXPECT_EQ(copyBits(arena, 5), 0x3f81);
  // A load writes the copies too.
  ScratchDir dir;
  std::vector<float> values(16, -2.5f), bias(4, 0.0f);
  values[3] = 1.0f + 1.0f / 256; // halfway, even below: stays 1.0
  std::string path = dir.file("p.safetensors");
  writeSafetensors(path, {{"w", DType::F32, {4, 4}, values.data()},
                          {"b", DType::F32, {4}, bias.data()}});
  arena.load(path);
  EXPECT_EQ(copyBits(arena, 0), 0xc020);
  EXPECT_EQ(copyBits(arena, 3), 0x3f80);
  EXPECT_EQ(copyBits(arena, 5), 0xc020);
}

TEST(ParametersBf16Test, CopyOutsideTheArenaIsAModelError) {
  std::string json = kBf16Model;
  json.replace(json.find("192"), 3, "250");
  EXPECT_THROW_MESSAGE(ModelInfo::parse(json), ModelError, "bf16_offset",
                       "does not fit the parameter arena");
}

TEST(ParametersBf16Test, CopyOverlappingAParameterIsAModelError) {
  std::string json = kBf16Model;
  json.replace(json.find("192"), 3, "64");
  EXPECT_THROW_MESSAGE(ModelInfo::parse(json), ModelError,
                       "the bf16 copy of 'w'", "overlap");
}

} // namespace
