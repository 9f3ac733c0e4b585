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

TEST(ModelInfoTest, MetadataWithoutRolesIsKindNone) {
  ModelInfo model = ModelInfo::parse(txc_model_json);
  EXPECT_EQ(model.kind, ModelKind::None);
  EXPECT_FALSE(model.kindInferred);
  for (const EntryInfo &entry : model.entries) {
    EXPECT_EQ(entry.role, "");
    for (const TensorSig &sig : entry.inputs)
      EXPECT_EQ(sig.role, "");
  }
  EXPECT_EQ(model.findEntryByRole(""), nullptr);
  EXPECT_EQ(model.findEntryByRole("train"), nullptr);
  EXPECT_EQ(model.findEntry("lengths")->findInputByRole("tokens"), nullptr);
}

/// A language model's metadata with `entries` and root members `extra`.
std::string
languageModel(const std::string &entries,
              const std::string &extra = R"("kind": "language_model",)") {
  return R"({"version": 2, "model": "gpt", )" + extra +
         R"( "dims": [{"name": "B", "bound": 4}, {"name": "T", "bound": 8},
                      {"name": "cache", "bound": 8}],
             "param_arena_bytes": 0, "params": [], "entries": [)" +
         entries + "]}";
}

const char *const kLogitsEntry =
    R"({"name": "logits", "kind": "forward", "role": "logits", "arena_bytes": 0,
        "inputs": [{"name": "ids", "dtype": "i32", "shape": ["B", "T"],
                    "role": "tokens"}],
        "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", "T", 16]}]})";

TEST(ModelInfoTest, ParsesKindAndRoles) {
  const std::string step =
      R"({"name": "lm_step", "kind": "forward", "role": "lm_step", "arena_bytes": 0,
          "inputs": [{"name": "ids", "dtype": "i32", "shape": ["B", "T"], "role": "tokens"},
                     {"name": "cache_ids", "dtype": "i32", "shape": ["B", "cache"],
                      "role": "cache_ids"},
                     {"name": "self_k.0", "dtype": "f32", "shape": ["B", "cache", 8],
                      "role": "cache"},
                     {"name": "self_v.0", "dtype": "f32", "shape": ["B", "cache", 8],
                      "role": "cache"}],
          "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", "T", 16]},
                      {"name": "self_k.0", "dtype": "f32", "shape": ["B", "cache", 8],
                       "role": "cache"},
                      {"name": "self_v.0", "dtype": "f32", "shape": ["B", "cache", 8],
                       "role": "cache"}]},
          {"name": "probe", "kind": "forward", "role": "", "arena_bytes": 0,
           "inputs": [], "outputs": []})";
  ModelInfo model = ModelInfo::parse(
      languageModel(std::string(kLogitsEntry) + ", " + step,
                    R"("kind": "language_model", "kind_inferred": false,)"));
  EXPECT_EQ(model.kind, ModelKind::LanguageModel);
  EXPECT_FALSE(model.kindInferred);
  EXPECT_STREQ(modelKindName(model.kind), "language_model");
  const EntryInfo *logits = model.findEntryByRole("logits");
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(logits->name, "logits");
  ASSERT_NE(logits->findInputByRole("tokens"), nullptr);
  EXPECT_EQ(logits->findInputByRole("tokens")->name, "ids");
  EXPECT_EQ(logits->findInputByRole("targets"), nullptr);
  const EntryInfo *lmStep = model.findEntryByRole("lm_step");
  ASSERT_NE(lmStep, nullptr);
  EXPECT_EQ(lmStep->findInputIndexByRole("cache_ids"), 1);
  EXPECT_EQ(lmStep->findInputIndexByRole("cache"), 2);
  EXPECT_EQ(lmStep->outputs[0].role, "");
  EXPECT_EQ(lmStep->outputs[2].role, "cache");
  EXPECT_EQ(model.findEntry("probe")->role, "");
  EXPECT_EQ(model.findEntryByRole("train"), nullptr);
  EXPECT_EQ(model.findEntryByRole(""), nullptr);

  ModelInfo inferred = ModelInfo::parse(
      languageModel("", R"("kind": "seq2seq", "kind_inferred": true,)"));
  EXPECT_EQ(inferred.kind, ModelKind::Seq2Seq);
  EXPECT_TRUE(inferred.kindInferred);
  EXPECT_EQ(parseModelKindName("classifier"), ModelKind::Classifier);
  EXPECT_EQ(parseModelKindName("none"), ModelKind::None);
  EXPECT_FALSE(parseModelKindName("gpt").has_value());
}

TEST(ModelInfoTest, UnknownKindsAndRolesAreModelErrors) {
  const std::string logits = kLogitsEntry;
  auto withRole = [&](const std::string &from, const std::string &to) {
    std::string text = logits;
    return text.replace(text.find(from), from.size(), to);
  };
  struct Case {
    std::string json, message;
  };
  const std::vector<Case> cases = {
      {languageModel(logits, R"("kind": "gpt",)"),
       "metadata.kind 'gpt' is not one of none, seq2seq, language_model, "
       "classifier"},
      {languageModel(logits,
                     R"("kind": "language_model", "kind_inferred": 1,)"),
       "metadata.kind_inferred must be true or false"},
      {languageModel(withRole(R"("role": "logits")", R"("role": "decode")")),
       "entries[0].role 'decode' is not a role of a language_model model "
       "(train, train_grad, logits, lm_step)"},
      {languageModel(withRole(R"("role": "tokens")", R"("role": "source")")),
       "entries[0].inputs[0].role 'source' is not a role of a language_model "
       "model (tokens, targets, cache, cache_ids)"},
      {languageModel(withRole(R"("role": "tokens")", R"("role": 3)")),
       "entries[0].inputs[0].role must be a string"},
      {languageModel(logits, ""),
       "entries[0].role 'logits' is not a role of a none model (none)"},
      {languageModel(logits + ", " +
                     withRole(R"("name": "logits")", R"("name": "logits2")")),
       "entries 'logits' and 'logits2' both have role 'logits'"},
      {languageModel(
           withRole(R"("role": "tokens"})",
                    R"("role": "tokens"}, {"name": "more", "dtype": "i32",
               "shape": ["B", "T"], "role": "tokens"})")),
       "entries[0] ('logits') has two inputs with role 'tokens'"},
      {languageModel(withRole(R"(16]})", R"(16], "role": "tokens"})")),
       "entries[0].outputs[0].role 'tokens' is not a role of a language_model "
       "model (cache)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    EXPECT_THROW_MESSAGE(ModelInfo::parse(c.json), ModelError, c.message);
  }
}

TEST(ModelInfoTest, InferenceFingerprintIsSixteenHexDigits) {
  const std::string logits = kLogitsEntry;
  EXPECT_EQ(ModelInfo::parse(languageModel(logits)).inferenceFingerprint, "");
  EXPECT_EQ(ModelInfo::parse(languageModel(logits, R"("kind": "language_model",
                  "inference_fingerprint": "0123456789abcdef",)"))
                .inferenceFingerprint,
            "0123456789abcdef");
  for (const char *bad : {"0123456789ABCDEF", "0123", "0123456789abcdefg"})
    EXPECT_THROW_MESSAGE(ModelInfo::parse(languageModel(
                             logits, std::string(R"("kind": "language_model",
                  "inference_fingerprint": ")") +
                                         bad + "\",")),
                         ModelError,
                         std::string("metadata.inference_fingerprint '") + bad +
                             "' is not 16 lowercase hex digits");
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

// The advice on raising a bound names the config item the bound is, as txc
// records it (dims[i].config; "" for a literal), never a config item that
// only shares its value; metadata without the field falls back to the
// value.
TEST(ModelInfoTest, ConfigKeyForBoundIsTheRecordedOne) {
  const ModelInfo model = ModelInfo::parse(
      R"({"version": 1, "model": "m", "config": {"layers": 8, "max_len": 16,
          "batch": 16},
          "dims": [{"name": "B", "bound": 8, "config": ""},
                   {"name": "T", "bound": 16, "config": "max_len"},
                   {"name": "S", "bound": 8}, {"name": "U", "bound": 16}],
          "param_arena_bytes": 0, "params": [], "entries": []})");
  EXPECT_EQ(model.configKeyForBound(model.dims[0]), "");
  EXPECT_EQ(model.configKeyForBound(model.dims[1]), "max_len");
  EXPECT_EQ(model.configKeyForBound(model.dims[2]), "layers"); // by value
  EXPECT_EQ(model.configKeyForBound(model.dims[3]), "max_len"); // "len" hint
  EXPECT_THROW(ModelInfo::parse(
                   R"({"version": 1, "model": "m",
                       "dims": [{"name": "B", "bound": 8, "config": 3}],
                       "param_arena_bytes": 0, "params": [], "entries": []})"),
               ModelError);
}

TEST(ModelInfoTest, LossFormOfAnEntry) {
  // "loss": how the driver weights the pieces of a batch (DataParallel.h).
  auto withLoss = [](const std::string &loss) {
    return std::string(
               R"({"version": 1, "model": "m", "dims": [{"name": "B", "bound": 4}],
               "param_arena_bytes": 0, "params": [], "entries": [
               {"name": "e", "arena_bytes": 0, "inputs": [
                 {"name": "x", "dtype": "f32", "shape": ["B", 3]},
                 {"name": "y", "dtype": "i32", "shape": ["B"]}],
                "outputs": [])") +
           loss + "}]}";
  };
  EntryInfo none = ModelInfo::parse(withLoss("")).entries[0];
  EXPECT_FALSE(none.lossFormKnown);
  EXPECT_EQ(none.lossTargets, -1);
  EntryInfo ce =
      ModelInfo::parse(
          withLoss(
              R"(, "loss": {"form": "cross_entropy", "targets": "y", "ignore_index": -100})"))
          .entries[0];
  EXPECT_TRUE(ce.lossFormKnown);
  EXPECT_EQ(ce.lossTargets, 1);
  EXPECT_EQ(ce.lossIgnoreIndex, -100);
  EntryInfo other =
      ModelInfo::parse(withLoss(R"(, "loss": {"form": "other"})")).entries[0];
  EXPECT_TRUE(other.lossFormKnown);
  EXPECT_EQ(other.lossTargets, -1);
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(withLoss(
          R"(, "loss": {"form": "cross_entropy", "targets": "z", "ignore_index": 0})")),
      ModelError, "entries[0].loss.targets names no input ('z')");
  EXPECT_THROW_MESSAGE(
      ModelInfo::parse(withLoss(R"(, "loss": {"form": "mse"})")), ModelError,
      "entries[0].loss.form must be \"cross_entropy\" or \"other\"");
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
