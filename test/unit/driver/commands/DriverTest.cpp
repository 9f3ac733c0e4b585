//===- DriverTest.cpp - the driver's commands, run in-process -------------===//
//
// runDriver on the fake model of FakeModel.cpp: what `info` prints, what
// `run` writes, and the exit code and message of every kind of failure.
//
//===----------------------------------------------------------------------===//
#include "commands/Driver.h"
#include "TestUtil.h"
#include "core/Init.h"
#include "formats/Json.h"
#include "formats/Npy.h"
#include "formats/Safetensors.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

extern "C" const char txc_model_json[];
extern "C" const txc_entry_fn txc_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

using Result = DriverResult;

Result driveModel(std::vector<std::string> args) {
  return runDriverCaptured("fake-model", args, txc_model_json,
                           txc_entry_table);
}

/// y = x W^T with W = proj.weight [4, 3].
std::vector<float> reference(const std::vector<float> &x,
                             const std::vector<float> &w) {
  std::vector<float> y;
  for (size_t b = 0; b < x.size() / 3; ++b)
    for (int o = 0; o < 4; ++o) {
      float sum = 0;
      for (int i = 0; i < 3; ++i)
        sum += x[b * 3 + i] * w[size_t(o) * 3 + i];
      y.push_back(sum);
    }
  return y;
}

std::vector<float> initialWeight(uint64_t seed) {
  std::vector<float> w(12);
  initializeParameter(InitKind::XavierUniform, {4, 3}, seed, "proj.weight",
                      w.data());
  return w;
}

std::vector<float> readFloats(const std::string &path, const Shape &shape) {
  Tensor tensor = readNpy(path);
  EXPECT_EQ(tensor.dtype, DType::F32);
  EXPECT_EQ(tensor.shape, shape);
  const float *data = tensor.as<float>();
  return std::vector<float>(data, data + tensor.numElements());
}

class DriverTest : public ::testing::Test {
protected:
  ScratchDir dir;
  std::string x = dir.file("x.txt");
  const std::vector<float> xValues = {1, 2, 3, -1, 0.5f, 0};
  void SetUp() override { writeFile(x, "1 2 3\n-1 0.5 0\n"); }
};

TEST_F(DriverTest, InfoDescribesTheModel) {
  Result result = driveModel({"info"});
  EXPECT_EQ(result.code, 0) << result.err;
  for (const char *fragment :
       {"model          fake", "source         test/unit/driver/FakeModel.cpp",
        "compile flags  -D vocab=10", "vocab   = 10", "dropout = 0.1", "B <= 8",
        "T <= 5", "apply(x: f32[B, 3]) -> (y: f32[B, 4])",
        "lengths(ids: i32[B, T]) -> (n: i32[B])",
        "activation arena 64 B (64 bytes), unplanned tensors 160 B, saving "
        "60.0%",
        "parameters: 12 values in 1 tensors, parameter arena 128 B (128 bytes)",
        "proj.weight  [4, 3]  xavier_uniform"})
    EXPECT_NE(result.out.find(fragment), std::string::npos)
        << "missing: " << fragment << "\n"
        << result.out;
  // info --json: the metadata, with what the runtime needs of the CPU.
  Result json = driveModel({"info", "--json"});
  EXPECT_EQ(json.code, 0);
  Json printed = parseJson(json.out);
  ASSERT_TRUE(printed.contains("runtime"));
  EXPECT_EQ(printed["runtime"]["march"], txrt_runtime_arch());
  EXPECT_TRUE(printed["runtime"]["cpu_features"].is_array());
  printed.erase("runtime");
  EXPECT_EQ(printed, parseJson(txc_model_json));
}

TEST_F(DriverTest, HelpAtTopLevelAndPerCommand) {
  Result top = driveModel({"--help"});
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("usage: fake-model <command>"), std::string::npos);
  Result run = driveModel({"run", "--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("usage: fake-model run ENTRY"), std::string::npos);
  Result info = driveModel({"help", "info"});
  EXPECT_NE(info.out.find("usage: fake-model info"), std::string::npos);
}

TEST_F(DriverTest, RunWithInitComputesTheEntry) {
  Result result = driveModel({"run", "apply", "--init", "5", "--input",
                              "x=" + x, "--out-dir", dir.file("out")});
  ASSERT_EQ(result.code, 0) << result.err;
  std::string y = dir.file("out/y.npy");
  EXPECT_NE(result.out.find("y: f32[2, 4] -> " + y), std::string::npos)
      << result.out;
  EXPECT_NE(result.err.find("ran 'apply' in"), std::string::npos);
  EXPECT_EQ(readFloats(y, {2, 4}), reference(xValues, initialWeight(5)));
}

TEST_F(DriverTest, RunWithoutWeightsUsesInitZeroAndSaysSo) {
  Result result = driveModel({"run", "apply", x, "--out-dir", dir.path()});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.err.find("note: neither --load nor --init given; "
                            "initializing the parameters with --init 0"),
            std::string::npos);
  EXPECT_EQ(readFloats(dir.file("y.npy"), {2, 4}),
            reference(xValues, initialWeight(0)));
}

TEST_F(DriverTest, RunWithLoadUsesTheCheckpoint) {
  std::vector<float> w = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  std::string weights = dir.file("w.safetensors");
  writeSafetensors(weights, {{"proj.weight", DType::F32, {4, 3}, w.data()}});
  Result result = driveModel({"run", "apply", "--load", weights, "--input", x,
                              "--out-dir", dir.path()});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(readFloats(dir.file("y.npy"), {2, 4}),
            (std::vector<float>{1, 2, 3, 6, -1, 0.5f, 0, -0.5f}));
}

TEST_F(DriverTest, SaveThenLoadGivesTheSameOutputs) {
  std::string ckpt = dir.file("ckpt.safetensors");
  ASSERT_EQ(driveModel({"run", "apply", "--init", "9", x, "--out-dir",
                        dir.file("a"), "--save", ckpt})
                .code,
            0);
  ASSERT_EQ(driveModel(
                {"run", "apply", "--load", ckpt, x, "--out-dir", dir.file("b")})
                .code,
            0);
  EXPECT_EQ(readFile(dir.file("a/y.npy")), readFile(dir.file("b/y.npy")));
  SafetensorsReader reader(ckpt);
  EXPECT_EQ(reader.metadata()[1].second, "fake");
}

TEST_F(DriverTest, RaggedTokenIdsArePaddedAndChecked) {
  std::string ids = dir.file("ids.txt");
  writeFile(ids, "3 4 5\n7\n1 2\n");
  Result result = driveModel(
      {"run", "lengths", "--input", "ids=" + ids, "--out-dir", dir.path()});
  ASSERT_EQ(result.code, 0) << result.err;
  Tensor n = readNpy(dir.file("n.npy"));
  EXPECT_EQ(n.dtype, DType::I32);
  ASSERT_EQ(n.shape, Shape{3});
  EXPECT_EQ(n.as<int32_t>()[0], 3);
  EXPECT_EQ(n.as<int32_t>()[1], 1);
  EXPECT_EQ(n.as<int32_t>()[2], 2);

  writeFile(ids, "3 4 10\n");
  Result bad = driveModel({"run", "lengths", ids, "--out-dir", dir.path()});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: input 'ids' ('" + ids +
                         "'): id 10 at [0, 2] is outside [0, 10), the 10 rows "
                         "of the embedding 'emb'\n");
}

TEST_F(DriverTest, BadInputsExitWithTwoAndOneLine) {
  std::string wide = dir.file("wide.txt");
  writeFile(wide, "1 2 3 4\n");
  std::string tall = dir.file("tall.txt");
  std::string rows;
  for (int i = 0; i < 9; ++i)
    rows += "1 2 3\n";
  writeFile(tall, rows);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"run", "apply", wide},
       "error: input 'x' ('" + wide +
           "'): dim 1 is 4 but the model expects 3 (shape [B, 3], the file "
           "has [1, 4])\n"},
      {{"run", "apply", tall},
       "error: input 'x' ('" + tall + "'): dim 0 (B) is 9, over its bound 8\n"},
      {{"run", "apply", dir.file("absent.txt")},
       "error: cannot open '" + dir.file("absent.txt") +
           "': No such file or directory\n"},
      {{"run", "apply", x, "--load", dir.file("absent.safetensors")},
       "error: cannot open '" + dir.file("absent.safetensors") +
           "': No such file or directory\n"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    Result result = driveModel(c.args);
    EXPECT_EQ(result.code, 2);
    EXPECT_EQ(result.err, c.message);
  }
}

TEST_F(DriverTest, CheckpointMismatchListsEveryProblem) {
  std::vector<float> w(12, 0.0f);
  std::string weights = dir.file("w.safetensors");
  writeSafetensors(weights, {{"proj.weight", DType::F32, {2, 6}, w.data()},
                             {"proj.bias", DType::F32, {4}, w.data()}});
  Result result = driveModel(
      {"run", "apply", "--load", weights, x, "--out-dir", dir.path()});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err, "error: tensor 'proj.weight' has shape [2, 6] in '" +
                            weights +
                            "' but the model expects [4, 3]\n"
                            "error: tensor 'proj.bias' [4] in '" +
                            weights +
                            "' is not a parameter of model 'fake'\n"
                            "error: 'proj.bias': the model's layer has no bias "
                            "where the file's has one: write it with a bias "
                            "in the spec (linear(x, n) has one unless bias = "
                            "false), or leave the tensor out\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.npy")));
}

TEST_F(DriverTest, LongMismatchListsAreCapped) {
  std::vector<float> value(1, 0.0f);
  std::vector<std::string> names;
  for (int i = 0; i < 30; ++i)
    names.push_back("other.layers." + std::to_string(i) + ".weight");
  std::vector<SafetensorsTensorView> tensors;
  for (const std::string &name : names)
    tensors.push_back({name, DType::F32, {1}, value.data()});
  std::string weights = dir.file("many.safetensors");
  writeSafetensors(weights, tensors);
  Result result = driveModel({"run", "apply", "--load", weights, x});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 21);
  EXPECT_NE(result.err.find("error: ... and 11 more mismatches between '" +
                            weights + "' and model 'fake'\n"),
            std::string::npos)
      << result.err;
}

TEST_F(DriverTest, UnwritableSaveDestinationFailsBeforeRunning) {
  Result result =
      driveModel({"run", "apply", x, "--init", "1", "--out-dir", dir.path(),
                  "--save", dir.file("none/ck.safetensors")});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err, "error: --save: cannot write '" +
                            dir.file("none/ck.safetensors") + "': '" +
                            dir.file("none") + "' does not exist\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.npy")));
  // A file where the directory should be is named as such.
  writeFile(dir.file("plain"), "x");
  Result file =
      driveModel({"run", "apply", x, "--init", "1", "--out-dir", dir.path(),
                  "--save", dir.file("plain/ck.safetensors")});
  EXPECT_EQ(file.code, 2);
  EXPECT_EQ(file.err, "error: --save: cannot write '" +
                          dir.file("plain/ck.safetensors") + "': '" +
                          dir.file("plain") + "' is not a directory\n");
}

TEST_F(DriverTest, RunOutputsNeverReplaceInputsOrEachOther) {
  // An input in the output directory under the output's name, --save onto
  // an input, --save and --save-grads on one file: refused before running.
  writeNpy(dir.file("y.npy"), floatTensor({2, 3}, xValues));
  std::string input = readFile(dir.file("y.npy"));
  Result output =
      driveModel({"run", "apply", "--init", "1", "--input",
                  "x=" + dir.file("y.npy"), "--out-dir", dir.path()});
  EXPECT_EQ(output.code, 2);
  EXPECT_EQ(output.err, "error: output 'y' '" + dir.path() +
                            "/y.npy' is the "
                            "same file as input 'x' '" +
                            dir.file("y.npy") +
                            "'; writing it would destroy the input\n");
  EXPECT_TRUE(readFile(dir.file("y.npy")) == input);

  Result save = driveModel({"run", "apply", "--init", "1", x, "--out-dir",
                            dir.file("out"), "--save", x});
  EXPECT_EQ(save.code, 2);
  EXPECT_NE(save.err.find("error: --save '" + x +
                          "' is the same file as "
                          "input 'x'"),
            std::string::npos)
      << save.err;
  EXPECT_EQ(readFile(x), "1 2 3\n-1 0.5 0\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/y.npy")));
}

TEST_F(DriverTest, UsageErrorsPrintTheErrorAndAHint) {
  // One error line and a hint naming the command's --help; the whole usage
  // text (30 lines and more) is no longer printed after it.
  Result unknownEntry = driveModel({"run", "train", x});
  EXPECT_EQ(unknownEntry.code, 2);
  EXPECT_EQ(unknownEntry.err, "error: model 'fake' has no entry 'train' "
                              "(entries: apply, lengths, fail)\n"
                              "hint: see 'fake-model run --help'\n");
  Result badFlag = driveModel({"info", "--jsn"});
  EXPECT_EQ(badFlag.code, 2);
  EXPECT_EQ(badFlag.err, "error: unknown option '--jsn'\n"
                         "hint: see 'fake-model info --help'\n");
  Result badCommand = driveModel({"trian"});
  EXPECT_EQ(badCommand.err.find("usage:"), std::string::npos)
      << badCommand.err;
  EXPECT_NE(badCommand.err.find("hint: see 'fake-model --help'\n"),
            std::string::npos)
      << badCommand.err;
  Result unknownInput = driveModel({"run", "apply", "--input", "z=" + x});
  EXPECT_EQ(unknownInput.code, 2);
  EXPECT_NE(unknownInput.err.find("error: entry 'apply' has no input 'z' "
                                  "(inputs: x)"),
            std::string::npos);
  Result missing = driveModel({"run", "apply"});
  EXPECT_NE(missing.err.find("error: missing input 'x' of entry 'apply' "
                             "(pass --input x=FILE)"),
            std::string::npos);
  Result extra = driveModel({"run", "apply", x, x});
  EXPECT_NE(extra.err.find("takes 1 input(s) (x) but more files were given"),
            std::string::npos);
  Result twice = driveModel({"run", "apply", "x=" + x, "--input", "x=" + x});
  EXPECT_NE(twice.err.find("input 'x' is given twice"), std::string::npos);
  Result noCommand = driveModel({});
  EXPECT_EQ(noCommand.code, 2);
  EXPECT_NE(noCommand.err.find("error: no command given\n\nusage: fake-model "
                               "<command>"),
            std::string::npos);
}

TEST_F(DriverTest, KernelFailureExitsWithOneAndTheRuntimeMessage) {
  Result result = driveModel({"run", "fail", x, "--out-dir", dir.path()});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("\nerror: entry 'fail' failed (invalid argument): "
                            "txrt_linear_fwd"),
            std::string::npos)
      << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.npy")));
}

TEST_F(DriverTest, UnwritableOutputDirectoryIsAnInputError) {
  std::string file = dir.file("plain");
  writeFile(file, "");
  Result result = driveModel({"run", "apply", x, "--out-dir", file + "/sub"});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("error: cannot create the output directory '" +
                            file + "/sub'"),
            std::string::npos)
      << result.err;
}

} // namespace
