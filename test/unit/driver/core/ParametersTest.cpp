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
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 3);
  }
  EXPECT_EQ(std::memcmp(before.data(), arena.data(), 256), 0);
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
