//===- ExportTest.cpp - export and train --init-from on FakeSeq2Seq -------===//
//
// `export W --load C` writes the parameters alone under the model's names;
// `train --init-from W` starts a run from them (moments zero, step 0) and
// refuses a file that does not fit with the errors of --load.
//
//===----------------------------------------------------------------------===//
#include "commands/Driver.h"
#include "formats/Safetensors.h"
#include "loop/LossCurve.h"
#include "TestUtil.h"

#include <algorithm>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

constexpr const char *kExportData = "i love you\tte amo\n"
                                    "you love me\tme amas\n"
                                    "i see you\tte veo\n"
                                    "you see me\tme ves\n";

class ExportTest : public ::testing::Test {
protected:
  void SetUp() override {
    writeFile(dir.file("train.tsv"), kExportData);
    DriverResult train =
        drive({"train", "--data", dir.file("train.tsv"), "--steps", "40",
               "--batch", "4", "--save", dir.file("c.safetensors"),
               "--threads", "1", "--quiet"});
    ASSERT_EQ(train.code, 0) << train.err;
  }

  /// The loss of the first step of a one-step run with `init`.
  double firstLoss(std::vector<std::string> init, const std::string &name) {
    std::vector<std::string> args = {
        "train",   "--data", dir.file("train.tsv"), "--steps", "1",
        "--batch", "4",      "--save",  dir.file(name + ".safetensors"),
        "--overwrite", "--threads", "1", "--quiet"};
    args.insert(args.end(), init.begin(), init.end());
    DriverResult train = drive(args);
    EXPECT_EQ(train.code, 0) << train.err;
    std::vector<LossPoint> curve =
        parseLossCsv(readFile(dir.file(name + ".loss.csv")));
    return curve.empty() ? -1.0 : curve[0].loss;
  }

  ScratchDir dir;
};

TEST_F(ExportTest, WritesTheParametersAloneByName) {
  DriverResult result = drive({"export", dir.file("w.safetensors"), "--load",
                               dir.file("c.safetensors")});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("exported 4 parameters"), std::string::npos)
      << result.out;
  SafetensorsReader checkpoint(dir.file("c.safetensors"));
  SafetensorsReader weights(dir.file("w.safetensors"));
  std::vector<std::string> names;
  for (const SafetensorsEntry &entry : weights.tensors()) {
    names.push_back(entry.name);
    const SafetensorsEntry *saved = checkpoint.find(entry.name);
    ASSERT_NE(saved, nullptr) << entry.name;
    EXPECT_EQ(entry.shape, saved->shape);
    EXPECT_EQ(entry.dtype, "F32");
    std::vector<float> a(size_t(entry.end - entry.begin) / 4), b(a.size());
    weights.read(entry, a.data());
    checkpoint.read(*saved, b.data());
    EXPECT_EQ(a, b) << entry.name;
  }
  EXPECT_EQ(names.size(), 4u);
  for (const std::string &name : names)
    EXPECT_EQ(name.find("exp_avg"), std::string::npos) << name;
  EXPECT_EQ(weights.metadata().front(),
            (std::pair<std::string, std::string>{"format", "pt"}));
}

TEST_F(ExportTest, InitFromStartsAtStepZeroFromTheWeights) {
  ASSERT_EQ(drive({"export", dir.file("w.safetensors"), "--load",
                   dir.file("c.safetensors")})
                .code,
            0);
  double fresh = firstLoss({"--init", "0"}, "fresh");
  double trained = firstLoss({"--init-from", dir.file("w.safetensors")},
                             "again");
  EXPECT_LT(trained, 0.5 * fresh) << trained << " vs " << fresh;
  SafetensorsReader again(dir.file("again.safetensors"));
  for (const auto &[key, value] : again.metadata())
    if (key == "step")
      EXPECT_EQ(value, "1");
  // A checkpoint works as --init-from too: its moments are ignored.
  EXPECT_NEAR(firstLoss({"--init-from", dir.file("c.safetensors")}, "ckpt"),
              trained, 1e-6);
}

TEST_F(ExportTest, InitFromTakesTheWeightsExportWrites) {
  // Of a train --ema checkpoint: the average, as export, eval and translate
  // take it (before, --init-from took the raw weights without a word, so
  // --init-from C and --init-from on C's export started differently).
  DriverResult ema =
      drive({"train", "--data", dir.file("train.tsv"), "--steps", "40",
             "--batch", "4", "--ema", "0.5", "--save",
             dir.file("ema.safetensors"), "--threads", "1", "--quiet"});
  ASSERT_EQ(ema.code, 0) << ema.err;
  for (bool raw : {false, true}) {
    std::vector<std::string> exportArgs = {"export", dir.file("w.safetensors"),
                                           "--load",
                                           dir.file("ema.safetensors")};
    std::vector<std::string> initArgs = {"--init-from",
                                         dir.file("ema.safetensors")};
    if (raw) {
      exportArgs.push_back("--no-ema");
      initArgs.push_back("--no-ema");
    }
    ASSERT_EQ(drive(exportArgs).code, 0);
    double direct = firstLoss(initArgs, "direct");
    double exported =
        firstLoss({"--init-from", dir.file("w.safetensors")}, "exported");
    EXPECT_EQ(direct, exported) << (raw ? "raw" : "average");
    EXPECT_TRUE(readFile(dir.file("direct.safetensors")) ==
                readFile(dir.file("exported.safetensors")));
  }
  DriverResult noted =
      drive({"train", "--data", dir.file("train.tsv"), "--steps", "1",
             "--init-from", dir.file("ema.safetensors"), "--quiet"});
  EXPECT_NE(noted.err.find("note: the weight average (--ema) of '" +
                           dir.file("ema.safetensors") +
                           "'; --no-ema for the raw weights\n"),
            std::string::npos)
      << noted.err;
}

TEST_F(ExportTest, InitFromRefusesWhatLoadRefuses) {
  ASSERT_EQ(drive({"export", dir.file("w.safetensors"), "--load",
                   dir.file("c.safetensors")})
                .code,
            0);
  SafetensorsReader weights(dir.file("w.safetensors"));
  std::vector<std::vector<float>> data;
  std::vector<SafetensorsTensorView> views;
  for (const SafetensorsEntry &entry : weights.tensors()) {
    data.emplace_back(size_t(entry.end - entry.begin) / 4);
    weights.read(entry, data.back().data());
  }
  for (size_t i = 0; i < weights.tensors().size(); ++i) {
    const SafetensorsEntry &entry = weights.tensors()[i];
    views.push_back({entry.name == "out.bias" ? "out.b" : entry.name,
                     DType::F32, entry.shape, data[i].data()});
  }
  writeSafetensors(dir.file("renamed.safetensors"), views, {});
  for (const char *command : {"train", "export"}) {
    std::vector<std::string> args =
        std::string(command) == "train"
            ? std::vector<std::string>{"train", "--data",
                                       dir.file("train.tsv"), "--steps", "1",
                                       "--init-from",
                                       dir.file("renamed.safetensors")}
            : std::vector<std::string>{"export", dir.file("x.safetensors"),
                                       "--load",
                                       dir.file("renamed.safetensors")};
    DriverResult result = drive(args);
    EXPECT_EQ(result.code, 2) << command;
    EXPECT_NE(result.err.find("error: tensor 'out.bias' is missing from '" +
                              dir.file("renamed.safetensors") + "'"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("error: tensor 'out.b' [20] in '" +
                              dir.file("renamed.safetensors") +
                              "' is not a parameter of model"),
              std::string::npos)
        << result.err;
  }
}

TEST_F(ExportTest, CommandLineErrors) {
  auto usage = [&](std::vector<std::string> args, const std::string &what) {
    DriverResult result = drive(args);
    EXPECT_EQ(result.code, 2);
    EXPECT_NE(result.err.find("error: " + what), std::string::npos)
        << result.err;
  };
  usage({"export", "w.safetensors"}, "export needs --load FILE");
  usage({"export", "--load", "c.safetensors"},
        "export needs the file to write (W.safetensors)");
  usage({"export", "a", "b", "--load", "c"}, "unexpected argument 'b'");
  usage({"train", "--data", "t.tsv", "--init-from", "w", "--init", "1"},
        "--init-from and --init exclude each other");
  usage({"train", "--data", "t.tsv", "--init-from", "w", "--resume", "c"},
        "--init-from and --resume exclude each other");
  usage({"train", "--data", "t.tsv", "--no-ema"},
        "--no-ema applies to --init-from");
  DriverResult same = drive({"export", dir.file("c.safetensors"), "--load",
                             dir.file("c.safetensors")});
  EXPECT_EQ(same.code, 2) << same.err;
  DriverResult help = drive({"help", "export"});
  EXPECT_NE(help.out.find("usage: fake-seq2seq export W.safetensors"),
            std::string::npos)
      << help.out;
}

} // namespace
