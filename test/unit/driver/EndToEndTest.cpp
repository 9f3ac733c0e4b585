//===- EndToEndTest.cpp - the `fake-model` executable, as a user runs it --===//
//
// fake-model is FakeModel.cpp linked with txrt_driver (main) exactly as txc
// links a generated object file; these tests run it as a process and check
// its outputs, messages and exit codes.
//
//===----------------------------------------------------------------------===//
#include "core/Init.h"
#include "formats/Npy.h"
#include "formats/Safetensors.h"
#include "TestUtil.h"

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

CommandResult fakeModel(const std::string &args) {
  return runShell(shellQuote(TXRT_DRIVER_FAKE_MODEL) + " " + args);
}

TEST(EndToEndTest, InfoAndHelp) {
  CommandResult info = fakeModel("info");
  EXPECT_EQ(info.exitCode, 0) << info.out;
  EXPECT_NE(info.out.find("apply(x: f32[B, 3]) -> (y: f32[B, 4])"),
            std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("proj.weight  [4, 3]  xavier_uniform"),
            std::string::npos);
  CommandResult help = fakeModel("--help");
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("usage: fake-model <command>"), std::string::npos);
  CommandResult bad = fakeModel("run apply --threads lots");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.out.find("error: --threads expects an integer in [1, 4096], "
                         "got 'lots'"),
            std::string::npos);
  EXPECT_NE(bad.out.find("hint: see 'fake-model run --help'"),
            std::string::npos);
  EXPECT_EQ(bad.out.find("usage:"), std::string::npos);
}

TEST(EndToEndTest, RunWithInitAndWithLoad) {
  ScratchDir dir;
  Tensor x(DType::F64, {3, 3}); // float64 .npy input, converted to f32
  for (int i = 0; i < 9; ++i)
    x.as<double>()[i] = i - 4;
  writeNpy(dir.file("x.npy"), x);

  CommandResult init = fakeModel(
      "run apply --init 2 --input x=" + shellQuote(dir.file("x.npy")) +
      " --out-dir " + shellQuote(dir.file("init")) + " --threads 1");
  ASSERT_EQ(init.exitCode, 0) << init.out;
  std::vector<float> w(12);
  initializeParameter(InitKind::XavierUniform, {4, 3}, 2, "proj.weight",
                      w.data());
  Tensor y = readNpy(dir.file("init/y.npy"));
  ASSERT_EQ(y.shape, (Shape{3, 4}));
  for (int b = 0; b < 3; ++b)
    for (int o = 0; o < 4; ++o) {
      float sum = 0;
      for (int i = 0; i < 3; ++i)
        sum += float(b * 3 + i - 4) * w[size_t(o * 3 + i)];
      EXPECT_EQ(y.as<float>()[b * 4 + o], sum);
    }

  std::vector<float> ones(12, 1.0f);
  writeSafetensors(dir.file("w.safetensors"),
                   {{"proj.weight", DType::F32, {4, 3}, ones.data()},
                    {"__adam_m__.proj.weight", DType::F32, {4, 3}, w.data()}});
  CommandResult load = fakeModel(
      "run apply --load " + shellQuote(dir.file("w.safetensors")) + " " +
      shellQuote(dir.file("x.npy")) + " --out-dir " + shellQuote(dir.path()));
  ASSERT_EQ(load.exitCode, 0) << load.out;
  Tensor sums = readNpy(dir.file("y.npy"));
  EXPECT_EQ(sums.as<float>()[0], -9.0f); // -4 + -3 + -2
  EXPECT_EQ(sums.as<float>()[11], 9.0f); // 2 + 3 + 4
}

TEST(EndToEndTest, ExitCodes) {
  ScratchDir dir;
  writeFile(dir.file("x.txt"), "1 2 3\n");
  writeFile(dir.file("w.safetensors"), "garbage garbage garbage");
  CommandResult corrupt = fakeModel(
      "run apply --load " + shellQuote(dir.file("w.safetensors")) + " " +
      shellQuote(dir.file("x.txt")) + " --out-dir " + shellQuote(dir.path()));
  EXPECT_EQ(corrupt.exitCode, 2);
  EXPECT_NE(corrupt.out.find("is not a safetensors file: it begins with "
                             "text ('garbage ')"),
            std::string::npos)
      << corrupt.out;
  CommandResult rank =
      fakeModel("run apply --input x=" + shellQuote(dir.file("w.safetensors")));
  EXPECT_EQ(rank.exitCode, 2);
  EXPECT_NE(rank.out.find("'garbage' is not a number"), std::string::npos);
  CommandResult fail = fakeModel("run fail " + shellQuote(dir.file("x.txt")) +
                                 " --out-dir " + shellQuote(dir.path()));
  EXPECT_EQ(fail.exitCode, 1);
  EXPECT_NE(fail.out.find("error: entry 'fail' failed"), std::string::npos)
      << fail.out;
}

} // namespace
