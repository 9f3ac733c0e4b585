//===- InputTest.cpp - reading inputs and checking them against an entry --===//
#include "core/Error.h"
#include "data/InputFiles.h"
#include "data/InputValidation.h"
#include "formats/Npy.h"
#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

const char *kModel = R"({"version": 1, "model": "t",
  "config": {"src_vocab": 50, "tgt_vocab": 60, "pad": 0},
  "dims": [{"name": "B", "bound": 4}, {"name": "S", "bound": 6},
           {"name": "T", "bound": 5}, {"name": "K", "bound": 9}],
  "param_arena_bytes": 0, "params": [],
  "entries": [
    {"name": "decode", "arena_bytes": 0,
     "inputs": [{"name": "tgt", "dtype": "i32", "shape": ["B", "T"]},
                {"name": "memory", "dtype": "f32", "shape": ["B", "S", 2]},
                {"name": "src", "dtype": "i32", "shape": ["B", "S"]}],
     "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", "T", 60]}]},
    {"name": "sample", "arena_bytes": 0,
     "inputs": [{"name": "x", "dtype": "f32", "shape": ["B"]}],
     "outputs": [{"name": "y", "dtype": "f32", "shape": ["B", "K"]}]}]})";

InputSource source(const std::string &name) { return {name, name + ".txt"}; }

TEST(InputFilesTest, ParsesTextRowsAndPadsRaggedIds) {
  Tensor ids = parseTextTensor("1 2 3\n4 5\n  6\t7 8 9\n\n \n", source("src"),
                               DType::I32, 2, 0);
  EXPECT_EQ(ids.shape, (Shape{3, 4}));
  const int32_t expect[] = {1, 2, 3, 0, 4, 5, 0, 0, 6, 7, 8, 9};
  EXPECT_TRUE(std::equal(expect, expect + 12, ids.as<int32_t>()));

  Tensor row = parseTextTensor("0.5 -1e-3 +2\n", source("x"), DType::F32, 1,
                               std::nullopt);
  EXPECT_EQ(row.shape, Shape{3});
  EXPECT_EQ(row.as<float>()[1], -1e-3f);
  EXPECT_EQ(row.as<float>()[2], 2.0f);
  Tensor scalar =
      parseTextTensor(" 7 \n", source("k"), DType::I32, 0, std::nullopt);
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.as<int32_t>()[0], 7);
}

// A UTF-8 byte order mark at the start is dropped, as in every text file
// the driver reads (it was "'???2' is not a number").
TEST(InputFilesTest, AByteOrderMarkAtTheStartIsDropped) {
  Tensor ids = parseTextTensor("\xEF\xBB\xBF"
                               "2 55\t28\r\n2 5\r\n",
                               source("ids"), DType::I32, 2, 0);
  EXPECT_EQ(ids.shape, (Shape{2, 3}));
  const int32_t expect[] = {2, 55, 28, 2, 5, 0};
  EXPECT_TRUE(std::equal(expect, expect + 6, ids.as<int32_t>()));
  // Elsewhere it is no number.
  EXPECT_THROW_MESSAGE(parseTextTensor("2\n\xEF\xBB\xBF"
                                       "3\n",
                                       source("ids"), DType::I32, 1, 0),
                       InputError, "line 2",
                       "(it holds a UTF-8 byte order mark: files joined with "
                       "cat keep each one's; remove them)");
}

TEST(InputFilesTest, TextErrorsNameTheFileAndLine) {
  EXPECT_THROW_MESSAGE(parseTextTensor("1 2 3\n4 5\n", source("src"),
                                       DType::I32, 2, std::nullopt),
                       InputError, "input 'src' ('src.txt')",
                       "line 2 has 2 values", "line 1 has 3",
                       "config has 'pad'");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("1 2\n3\n", source("x"), DType::F32, 2, 0), InputError,
      "ragged rows are padded only for token-id inputs");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("1 2\n3 x4\n", source("src"), DType::I32, 2, 0),
      InputError, "line 2: 'x4' is not a number");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("1 2.5\n", source("src"), DType::I32, 2, 0), InputError,
      "'2.5' is not an integer (the input is i32)");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("\n \n", source("src"), DType::I32, 2, 0), InputError,
      "the file holds no values");
  // A blank line before a row would drop that row silently (blank lines at
  // the end are an editor's trailing newlines).
  EXPECT_THROW_MESSAGE(
      parseTextTensor("1 2\n\n3 4\n", source("src"), DType::I32, 2, 0),
      InputError, "input 'src' ('src.txt') line 2 is blank, before the row "
                  "of line 3");
  EXPECT_THROW_MESSAGE(
      parseTextTensor(" \n1 2\n", source("src"), DType::I32, 2, 0),
      InputError, "line 1 is blank, before the row of line 2");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("1\n2\n", source("x"), DType::F32, 1, std::nullopt),
      InputError, "rank 1 but the file has 2 lines");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("1 2\n", source("memory"), DType::F32, 3, std::nullopt),
      InputError, "rank 3", "use an .npy file");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("99999999999\n", source("src"), DType::I32, 2, 0),
      InputError, "does not fit int32");
  EXPECT_THROW_MESSAGE(
      parseTextTensor("\x01\x02garbage\n", source("src"), DType::I32, 2, 0),
      InputError, "'\\x01\\x02garbage' is not a number");
  // Other bytes as they are: a full-width digit showed as '???'.
  EXPECT_THROW_MESSAGE(
      parseTextTensor("\xEF\xBC\x91\n", source("src"), DType::I32, 2, 0),
      InputError, "'\xEF\xBC\x91' is not a number");
}

TEST(InputFilesTest, ConvertsNpyDTypesWithChecks) {
  InputSource src{"src", "src.npy"};
  Tensor wide(DType::I64, {2});
  wide.as<int64_t>()[0] = 5;
  wide.as<int64_t>()[1] = int64_t(1) << 40;
  EXPECT_THROW_MESSAGE(convertTensor(wide, DType::I32, src), InputError,
                       "input 'src' ('src.npy')", "value 1099511627776 at [1]",
                       "does not fit int32");
  // A u64 over INT64_MAX is named as stored, not rounded to a double
  // (2^64 - 1 read 18446744073709551616).
  Tensor unsignedMax(DType::U64, {1});
  unsignedMax.as<uint64_t>()[0] = ~uint64_t(0);
  EXPECT_THROW_MESSAGE(convertTensor(unsignedMax, DType::I32, src), InputError,
                       "value 18446744073709551615 at [0]",
                       "does not fit int32");
  wide.as<int64_t>()[1] = -3;
  Tensor narrow = convertTensor(wide, DType::I32, src);
  EXPECT_EQ(narrow.as<int32_t>()[1], -3);

  Tensor reals = floatTensor({2}, {1.0f, 2.5f});
  EXPECT_THROW_MESSAGE(convertTensor(reals, DType::I32, src), InputError,
                       "value 2.5 at [1] is not an integer");
  EXPECT_EQ(
      convertTensor(floatTensor({1}, {4.0f}), DType::I32, src).as<int32_t>()[0],
      4);
  EXPECT_THROW_MESSAGE(
      convertTensor(intTensor({1, 2}, {0, 2}), DType::Bool, src), InputError,
      "value 2 at [0, 1] is not 0 or 1");
  Tensor mask = convertTensor(intTensor({2}, {1, 0}), DType::Bool, src);
  EXPECT_EQ(mask.as<uint8_t>()[0], 1);
  Tensor f64(DType::F64, {1});
  f64.as<double>()[0] = 0.1;
  EXPECT_EQ(convertTensor(f64, DType::F32, src).as<float>()[0], 0.1f);
  // Beyond float32's range: an error naming the file and the index, not
  // a silent infinity.
  Tensor huge(DType::F64, {2, 2});
  std::fill_n(huge.as<double>(), 4, 1.0);
  huge.as<double>()[3] = 1e300;
  EXPECT_THROW_MESSAGE(convertTensor(huge, DType::F32, src), InputError,
                       "input 'src' ('src.npy'): value 1e+300 at [1, 1] does "
                       "not fit float32");
  huge.as<double>()[3] = -1e39;
  EXPECT_THROW_MESSAGE(convertTensor(huge, DType::F32, src), InputError,
                       "value -1e+39 at [1, 1] does not fit float32");
  huge.as<double>()[3] = 3.4e38; // still a float
  EXPECT_EQ(convertTensor(huge, DType::F32, src).as<float>()[3], 3.4e38f);
  Tensor boolean(DType::Bool, {1});
  boolean.as<uint8_t>()[0] = 1;
  EXPECT_EQ(convertTensor(boolean, DType::F32, src).as<float>()[0], 1.0f);
  // Integers are exact or refused: 16777217 (2^24 + 1) became 16777216.
  EXPECT_THROW_MESSAGE(
      convertTensor(intTensor({1, 3}, {3, 16777217, 4}), DType::F32, src),
      InputError, "value 16777217 at [0, 1] is not exact in float32");
  Tensor exact = convertTensor(
      intTensor({3}, {16777216, -16777216, 2147483520}), DType::F32, src);
  EXPECT_EQ(exact.as<float>()[0], 16777216.0f);
  EXPECT_EQ(exact.as<float>()[1], -16777216.0f);
  EXPECT_EQ(exact.as<float>()[2], 2147483520.0f); // 2^31 - 128, even enough
  Tensor int64Edges(DType::I64, {2});
  int64Edges.as<int64_t>()[0] = INT64_MIN; // -2^63: a float
  int64Edges.as<int64_t>()[1] = INT64_MAX; // rounds to 2^63, not an int64
  EXPECT_THROW_MESSAGE(convertTensor(int64Edges, DType::F32, src), InputError,
                       "value 9223372036854775807 at [1] is not exact");
  Tensor uint64Top(DType::U64, {1});
  uint64Top.as<uint64_t>()[0] = ~uint64_t(0);
  EXPECT_THROW_MESSAGE(convertTensor(uint64Top, DType::F32, src), InputError,
                       "is not exact in float32");
}

// float16 .npy inputs (numpy's default for some pipelines) convert exactly:
// normal, subnormal, signed zero, infinity; NaN and fractions are refused
// for integer inputs as with any other float.
TEST(InputFilesTest, ConvertsFloat16Exactly) {
  InputSource src{"x", "x.npy"};
  Tensor half(DType::F16, {6});
  const uint16_t bits[] = {0x3c00, 0xc000, 0x0001, 0x8000, 0x7c00, 0x7bff};
  std::memcpy(half.data(), bits, sizeof(bits));
  Tensor f = convertTensor(half, DType::F32, src);
  EXPECT_EQ(f.as<float>()[0], 1.0f);
  EXPECT_EQ(f.as<float>()[1], -2.0f);
  EXPECT_EQ(f.as<float>()[2], std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(f.as<float>()[3], 0.0f);
  EXPECT_TRUE(std::signbit(f.as<float>()[3]));
  EXPECT_EQ(f.as<float>()[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f.as<float>()[5], 65504.0f); // largest half
  Tensor nan(DType::F16, {1});
  const uint16_t nanBits = 0x7e00;
  std::memcpy(nan.data(), &nanBits, sizeof(nanBits));
  EXPECT_TRUE(std::isnan(convertTensor(nan, DType::F32, src).as<float>()[0]));
  Tensor ids(DType::F16, {2});
  const uint16_t idBits[] = {0x4200, 0x3800}; // 3.0, 0.5
  std::memcpy(ids.data(), idBits, sizeof(idBits));
  EXPECT_THROW_MESSAGE(convertTensor(ids, DType::I32, src), InputError,
                       "value 0.5 at [1] is not an integer");
}

TEST(InputFilesTest, DetectsNpyByContent) {
  ScratchDir dir;
  writeNpy(dir.file("ids.data"), intTensor({1, 2}, {3, 4}));
  Tensor tensor =
      readInputFile({"src", dir.file("ids.data")}, DType::I32, 2, 0);
  EXPECT_EQ(tensor.shape, (Shape{1, 2}));
  writeFile(dir.file("ids.npy"), "1 2 3\n");
  EXPECT_THROW_MESSAGE(
      readInputFile({"src", dir.file("ids.npy")}, DType::I32, 2, 0), InputError,
      "is not a valid .npy file");
  writeFile(dir.file("ids.txt"), "1 2 3\n");
  EXPECT_EQ(readInputFile({"src", dir.file("ids.txt")}, DType::I32, 2, 0).shape,
            (Shape{1, 3}));
  EXPECT_THROW_MESSAGE(
      readInputFile({"src", dir.file("none.txt")}, DType::I32, 2, 0),
      InputError, "cannot open", "none.txt");
}

class ValidationTest : public ::testing::Test {
protected:
  ModelInfo model = ModelInfo::parse(kModel);
  const EntryInfo &decode = *model.findEntry("decode");
  std::vector<InputSource> sources = {
      {"tgt", "tgt.txt"}, {"memory", "m.npy"}, {"src", "src.txt"}};

  std::vector<int64_t> bind(const Shape &tgt, const Shape &memory,
                            const Shape &src, const DimOverrides &dims = {}) {
    std::vector<Tensor> inputs;
    inputs.emplace_back(DType::I32, tgt);
    inputs.emplace_back(DType::F32, memory);
    inputs.emplace_back(DType::I32, src);
    return bindDims(model, decode, inputs, sources, dims);
  }
};

TEST_F(ValidationTest, DerivesDims) {
  EXPECT_EQ(bind({2, 5}, {2, 6, 2}, {2, 6}),
            (std::vector<int64_t>{2, 6, 5, 1}));
  EXPECT_EQ(concreteShape(decode.outputs[0], {2, 6, 5, 1}), (Shape{2, 5, 60}));
}

TEST_F(ValidationTest, ErrorsNameInputDimAndBothValues) {
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6}, {2, 6}), InputError,
                       "input 'memory' ('m.npy')",
                       "expected rank 3 [B, S, 2] but the file has rank 2 "
                       "[2, 6]");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 3}, {2, 6}), InputError,
                       "input 'memory' ('m.npy'): dim 2 is 3 but the model "
                       "expects 2");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 2}, {3, 6}), InputError,
                       "input 'src' ('src.txt'): dim 0 (B) is 3 but input "
                       "'tgt' ('tgt.txt') has B=2");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 2}, {2, 7}), InputError,
                       "input 'src' ('src.txt'): dim 1 (S) is 7, over its "
                       "bound 6");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 5, 2}, {2, 6}), InputError,
                       "input 'src' ('src.txt'): dim 1 (S) is 6 but input "
                       "'memory' ('m.npy') has S=5");
  EXPECT_THROW_MESSAGE(bind({2, 9}, {2, 6, 2}, {2, 6}), InputError,
                       "input 'tgt' ('tgt.txt'): dim 1 (T) is 9, over its "
                       "bound 5");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 0, 2}, {2, 6}), InputError,
                       "dim 1 (S) is 0 but dims must be at least 1");
}

TEST_F(ValidationTest, DimOverrides) {
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 2}, {2, 6}, {{"B", 3}}), InputError,
                       "dim 0 (B) is 2 but --dim B=3");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 2}, {2, 6}, {{"Q", 3}}), InputError,
                       "the model has no dim 'Q'");
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 2}, {2, 6}, {{"K", 10}}), InputError,
                       "--dim K=10 is outside [1, 9]");
  // A dim the entry does not use: the value would be ignored silently.
  EXPECT_THROW_MESSAGE(bind({2, 5}, {2, 6, 2}, {2, 6}, {{"K", 4}}), InputError,
                       "--dim K=4: entry 'decode' does not use dim 'K' (it "
                       "uses B, S, T)");
  const EntryInfo &sample = *model.findEntry("sample");
  std::vector<Tensor> inputs;
  inputs.emplace_back(DType::F32, Shape{3});
  std::vector<InputSource> xs = {{"x", "x.txt"}};
  EXPECT_THROW_MESSAGE(bindDims(model, sample, inputs, xs), InputError,
                       "output 'y' of entry 'sample' uses dim K that no input "
                       "determines; pass --dim K=N");
  EXPECT_EQ(bindDims(model, sample, inputs, xs, {{"K", 4}}),
            (std::vector<int64_t>{3, 1, 1, 4}));
}

TEST_F(ValidationTest, VocabularyKeysByRole) {
  EXPECT_EQ(vocabKeyFor(model, "source"), "src_vocab");
  EXPECT_EQ(vocabKeyFor(model, "target_in"), "tgt_vocab");
  EXPECT_EQ(vocabKeyFor(model, "target_out"), "tgt_vocab");
  EXPECT_EQ(vocabKeyFor(model, "src"), ""); // a name, not a role
  EXPECT_EQ(vocabKeyFor(model, "tokens"), ""); // no "vocab" key in this config
  ModelInfo single = ModelInfo::parse(
      R"({"version": 1, "model": "m", "config": {"vocab": 10},
          "dims": [], "param_arena_bytes": 0, "params": [], "entries": []})");
  EXPECT_EQ(vocabKeyFor(single, "source"), "vocab");
  EXPECT_EQ(vocabKeyFor(single, "tokens"), "vocab");
}

/// One entry whose i32 inputs carry the metadata's "ids" ranges.
ModelInfo modelWithIdRanges(const std::string &ids) {
  return ModelInfo::parse(
      R"({"version": 1, "model": "m", "config": {"vocab": 10},
          "dims": [], "param_arena_bytes": 0, "params": [],
          "entries": [{"name": "loss", "arena_bytes": 0, "tensor_bytes": 0,
                       "inputs": [{"name": "targets", "dtype": "i32",
                                   "shape": [3])" +
      ids + R"(}], "outputs": []}]})");
}

TEST_F(ValidationTest, IdsAreCheckedAgainstWhatTheyIndex) {
  // Cross-entropy targets: the classes or the ignore_index, whatever the
  // input is called and whatever the config's vocab says.
  ModelInfo classes = modelWithIdRanges(
      R"(, "ids": {"begin": 0, "end": 20, "also": [-100],
                  "what": "the 20 classes of cross_entropy at m.tx:9:3"})");
  const TensorSig &sig = classes.findEntry("loss")->inputs[0];
  ASSERT_TRUE(sig.ids.has_value());
  InputSource targets{"targets", "t.txt"};
  EXPECT_NO_THROW(checkIds(sig, intTensor({3}, {0, 19, -100}), targets));
  EXPECT_THROW_MESSAGE(
      checkIds(sig, intTensor({3}, {0, 20, 1}), targets), InputError,
      "input 'targets' ('t.txt'): id 20 at [1] is outside [0, 20), the 20 "
      "classes of cross_entropy at m.tx:9:3 (also allowed: -100)");
  EXPECT_THROW_MESSAGE(checkIds(sig, intTensor({3}, {-1, 2, 3}), targets),
                       InputError, "id -1 at [0]");
  // An id only the padding of a ragged text input put there (config pad
  // filling a short row) is named as such: `segments` rows with pad = 3.
  ModelInfo segments = modelWithIdRanges(
      R"(, "ids": {"begin": -2, "end": 2, "also": [],
                  "what": "the 2 rows of 'token_type_embeddings'"})");
  InputSource text{"segments", "seg.txt"};
  Tensor ragged =
      parseTextTensor("0 0 0\n0 0\n", text, DType::I32, 2, int64_t(3));
  EXPECT_THROW_MESSAGE(
      checkIds(segments.findEntry("loss")->inputs[0], ragged, text),
      InputError,
      "id 3 at [1, 2] is outside [-2, 2), the 2 rows of "
      "'token_type_embeddings'; it is config 'pad', which fills the short "
      "rows of a text input (row 1 has 2 values): give every row all its "
      "values, or a .npy");
  // Without a range (ids only compared with a pad id) anything goes.
  ModelInfo free = modelWithIdRanges("");
  EXPECT_NO_THROW(checkIds(free.findEntry("loss")->inputs[0],
                           intTensor({3}, {-7, 1 << 30, 0}), targets));
  // A malformed range is the metadata's fault.
  EXPECT_THROW_MESSAGE(
      modelWithIdRanges(R"(, "ids": {"begin": 5, "end": 1, "also": [],
                                   "what": ""})"),
      ModelError, "entries[0].inputs[0].ids.end must be an integer >= 5");
}

/// decode_step's shape: new target positions [B, T] and a self-attention
/// cache [B, cache, 2] the entry writes the T new positions into.
ModelInfo modelWithCacheWrite(const std::string &rows) {
  return ModelInfo::parse(
      R"({"version": 1, "model": "m",
          "dims": [{"name": "B", "bound": 4}, {"name": "T", "bound": 8},
                   {"name": "cache", "bound": 8}],
          "param_arena_bytes": 0, "params": [],
          "entries": [{"name": "decode_step", "arena_bytes": 0,
                       "inputs": [{"name": "tgt", "dtype": "i32",
                                   "shape": ["B", "T"]},
                                  {"name": "self_k.0", "dtype": "f32",
                                   "shape": ["B", "cache", 2],
                                   "writes_last_rows": )" +
      rows + R"(}], "outputs": []}]})");
}

TEST_F(ValidationTest, CachesHoldAtLeastTheNewPositions) {
  ModelInfo step = modelWithCacheWrite(R"("T")");
  const EntryInfo &entry = *step.findEntry("decode_step");
  ASSERT_TRUE(entry.inputs[1].writesLastRows.has_value());
  std::vector<InputSource> names = {{"tgt", "t.npy"}, {"self_k.0", "k.npy"}};
  auto bindStep = [&](int64_t t, int64_t cache, const DimOverrides &dims = {}) {
    std::vector<Tensor> inputs;
    inputs.emplace_back(DType::I32, Shape{1, t});
    inputs.emplace_back(DType::F32, Shape{1, cache, 2});
    return bindDims(step, entry, inputs, names, dims);
  };
  // The cache holds every position so far, the new ones last.
  EXPECT_EQ(bindStep(1, 1), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(bindStep(1, 6), (std::vector<int64_t>{1, 1, 6}));
  EXPECT_EQ(bindStep(5, 5), (std::vector<int64_t>{1, 5, 5}));
  // More new positions than the cache holds: the write would start before
  // the cache's buffer.
  EXPECT_THROW_MESSAGE(bindStep(5, 1), InputError,
                       "input 'tgt' ('t.npy') has 5 new position(s) (dim 1, "
                       "T) but the cache input 'self_k.0' ('k.npy') holds "
                       "only 1 (dim 1, cache); entry 'decode_step' writes");
  EXPECT_THROW_MESSAGE(bindStep(5, 2), InputError, "holds only 2 (dim 1");
  // A constant number of new rows.
  ModelInfo single = modelWithCacheWrite("3");
  std::vector<Tensor> inputs;
  inputs.emplace_back(DType::I32, Shape{1, 1});
  inputs.emplace_back(DType::F32, Shape{1, 2, 2});
  EXPECT_THROW_MESSAGE(
      bindDims(single, *single.findEntry("decode_step"), inputs, names),
      InputError, "the entry writes 3 new position(s) but the cache");
  // The metadata names a dim it declares.
  EXPECT_THROW_MESSAGE(modelWithCacheWrite(R"("Q")"), ModelError,
                       "writes_last_rows names an unknown dim 'Q'");
}

} // namespace
