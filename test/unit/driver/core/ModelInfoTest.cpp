//===- ModelInfoTest.cpp - parsing and validating the embedded metadata ---===//
#include "core/ModelInfo.h"
#include "core/Error.h"
#include "TestUtil.h"

extern "C" const char txc_model_json[]; // FakeModel.cpp

using namespace txrt::driver;

namespace {

TEST(ModelInfoTest, ParsesTheFakeModel) {
  ModelInfo model = ModelInfo::parse(txc_model_json);
  EXPECT_EQ(model.model, "fake");
  EXPECT_EQ(model.compileFlags, "-D vocab=10");
  ASSERT_EQ(model.dims.size(), 2u);
  EXPECT_EQ(model.dims[1].name, "T");
  EXPECT_EQ(model.dims[1].bound, 5);
  EXPECT_EQ(model.paramArenaBytes, 128);
  const ParamInfo *weight = model.findParam("proj.weight");
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->shape, (Shape{4, 3}));
  EXPECT_EQ(weight->init, InitKind::XavierUniform);
  EXPECT_EQ(weight->byteSize, 48);
  EXPECT_EQ(model.totalParamElements(), 12);
  const EntryInfo *apply = model.findEntry("apply");
  ASSERT_NE(apply, nullptr);
  EXPECT_EQ(apply->arenaBytes, 64);
  EXPECT_EQ(apply->tensorBytes, 160);
  EXPECT_EQ(model.formatSignature(apply->inputs[0]), "x: f32[B, 3]");
  EXPECT_EQ(model.formatSignature(model.findEntry("lengths")->outputs[0]),
            "n: i32[B]");
  EXPECT_EQ(model.configNumber("vocab"), 10.0);
  EXPECT_EQ(model.configNumber("dropout"), 0.1);
  EXPECT_FALSE(model.configNumber("missing").has_value());
  EXPECT_EQ(model.findEntry("nope"), nullptr);
}

TEST(ModelInfoTest, EntrySizesMustFitAtTheirBounds) {
  // txc -D batch=2**62: the arenas were planned at the bounds with sizes
  // that overflowed, so running any entry would write outside them.
  auto model = [](const std::string &bound, const std::string &shape) {
    return R"({"version": 1, "model": "m", "config": {"batch": )" + bound +
           R"(}, "dims": [{"name": "B", "bound": )" + bound +
           R"(}, {"name": "S", "bound": 16}],
               "param_arena_bytes": 0, "params": [],
               "entries": [{"name": "encode", "arena_bytes": 4160,
                 "inputs": [{"name": "src", "dtype": "i32", "shape": ["B", "S"]}],
                 "outputs": [{"name": "memory", "dtype": "f32", "shape": )" +
           shape + "}]}]}";
  };
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(model("4611686018427387904", R"(["B", "S", 64])")),
      ModelError,
      "model metadata: entry 'encode' input 'src: i32[B, S]' needs more than "
      "9223372036854775807 bytes at the bounds of its dims (B <= "
      "4611686018427387904, S <= 16), so the compiled arena sizes and offsets "
      "overflowed; recompile with smaller bounds (txc -D batch=N)");
  // A constant dim can overflow too.
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(model("8", R"(["B", 1152921504606846976])")), ModelError,
      "entry 'encode' output 'memory: f32[B, 1152921504606846976]'",
      "(B <= 8)");
  EXPECT_NO_THROW(
      ModelInfo::parse(model("1099511627776", R"(["B", "S", 64])")));
}

TEST(ModelInfoTest, MalformedMetadataIsAModelError) {
  auto wrap = [](const std::string &params, const std::string &entries) {
    return R"({"version": 1, "model": "m", "dims": [{"name": "B", "bound": 4}],
               "param_arena_bytes": 64, "params": [)" +
           params + R"(], "entries": [)" + entries + "]}";
  };
  const std::string entry =
      R"({"name": "e", "arena_bytes": 0, "inputs": [%IN%], "outputs": []})";
  auto withInput = [&](const std::string &input) {
    std::string text = entry;
    return wrap("", text.replace(text.find("%IN%"), 4, input));
  };
  struct Case {
    std::string json, fragment;
  };
  const std::vector<Case> cases = {
      {"{", "invalid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"version": 3})",
       "unsupported metadata version 3 (this driver reads 1 and 2)"},
      {R"({"version": 1, "model": "m"})", "metadata has no member 'dims'"},
      {wrap(
           R"({"name": "w", "dtype": "f32", "shape": [4, 8], "init": "zeros", "offset": 0})",
           ""),
       "does not fit the parameter arena of 64 bytes"},
      {wrap(
           R"({"name": "w", "dtype": "f32", "shape": [4], "init": "magic", "offset": 0})",
           ""),
       "params[0].init 'magic' is not one of"},
      {wrap(
           R"({"name": "w", "dtype": "f32", "shape": [4], "init": "xavier_uniform", "offset": 0})",
           ""),
       "xavier_uniform needs a rank >= 2 shape"},
      {wrap(
           R"({"name": "w", "dtype": "f32", "shape": [4], "init": "zeros", "offset": 0},
               {"name": "v", "dtype": "f32", "shape": [4], "init": "zeros", "offset": 8})",
           ""),
       "parameters 'w' and 'v' overlap"},
      {wrap(
           R"({"name": "w", "dtype": "f32", "shape": [1], "init": "zeros", "offset": 0},
               {"name": "w", "dtype": "f32", "shape": [1], "init": "zeros", "offset": 4})",
           ""),
       "two parameters are named 'w'"},
      {withInput(R"({"name": "x", "dtype": "f32", "shape": ["Q"]})"),
       "entries[0].inputs[0].shape[0] names an unknown dim 'Q'"},
      {withInput(R"({"name": "x", "dtype": "f64", "shape": [1]})"),
       "must be f32, i32 or bool"},
      {withInput(R"({"name": "x", "dtype": "f32", "shape": [1.5]})"),
       "must be a non-negative integer or a dim name"},
      {withInput(R"({"name": "x", "dtype": "f32", "shape": [1]},
                    {"name": "x", "dtype": "f32", "shape": [1]})"),
       "has two inputs named 'x'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    try {
      ModelInfo::parse(c.json);
      ADD_FAILURE() << "no error";
    } catch (const ModelError &error) {
      EXPECT_EQ(error.exitCode(), kExitFailure);
      EXPECT_NE(std::string(error.what()).find(c.fragment), std::string::npos)
          << error.what();
    }
  }
}

} // namespace
