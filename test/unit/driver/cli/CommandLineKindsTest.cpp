//===- CommandLineKindsTest.cpp - train --text, generate, predict options -===//
#include "cli/CommandLine.h"
#include "core/Error.h"
#include "TestUtil.h"

using namespace txrt::driver;

namespace {

TEST(CommandLineKindsTest, TrainTakesTextOrData) {
  CommandLine line =
      parseCommandLine({"train", "--text", "t.txt", "--block", "32"});
  EXPECT_EQ(line.train.textPath, "t.txt");
  EXPECT_TRUE(line.train.dataPath.empty());
  EXPECT_EQ(line.train.block, std::optional<int64_t>(32));
  EXPECT_THROW_MESSAGE(parseCommandLine({"train"}), UsageError,
                       "train needs --data FILE.tsv (seq2seq, classifier) "
                       "or --text FILE.txt (language model)");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"train", "--data", "a", "--text", "b"}), UsageError,
      "--data and --text exclude each other");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"train", "--data", "a", "--block", "4"}), UsageError,
      "--block applies to --text");
  EXPECT_EQ(
      parseCommandLine({"eval", "--load", "c", "--text", "t"}).eval.textPath,
      "t");
}

TEST(CommandLineKindsTest, GenerateOptions) {
  CommandLine line = parseCommandLine(
      {"generate", "--load", "c.safetensors", "--temperature", "0.7", "--top-k",
       "5", "--top-p", "0.9", "--seed", "3", "--max-new-tokens", "8",
       "--no-cache", "--batch", "2", "hello", "world"});
  EXPECT_EQ(line.command, CommandLine::Command::Generate);
  const GenerateOptions &generate = line.generate;
  EXPECT_EQ(generate.loadPath, "c.safetensors");
  EXPECT_DOUBLE_EQ(generate.temperature, 0.7);
  EXPECT_EQ(generate.topK, 5);
  EXPECT_DOUBLE_EQ(generate.topP, 0.9);
  EXPECT_EQ(generate.seed, 3u);
  EXPECT_EQ(generate.maxNewTokens, 8);
  EXPECT_FALSE(generate.kvCache);
  EXPECT_EQ(generate.batch, std::optional<int64_t>(2));
  EXPECT_EQ(generate.prompts, (std::vector<std::string>{"hello", "world"}));
  GenerateOptions defaults =
      parseCommandLine({"generate", "--load", "c"}).generate;
  EXPECT_DOUBLE_EQ(defaults.temperature, 0.0);
  EXPECT_TRUE(defaults.kvCache);
}

TEST(CommandLineKindsTest, GenerateErrorsNameTheFlag) {
  EXPECT_THROW_MESSAGE(parseCommandLine({"generate"}), UsageError,
                       "generate needs --load CHECKPOINT");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"generate", "--load", "c", "--top-p", "0"}), UsageError,
      "--top-p expects a number in (0, 1], got '0'");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"generate", "--load", "c", "--temperature", "-1"}),
      UsageError, "--temperature expects a number in [0, 100], got '-1'");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"generate", "--load", "c", "--temperature", "0x10"}),
      UsageError, "--temperature expects a number in [0, 100], got '0x10'");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"generate", "--load", "c", "--beam", "2"}), UsageError,
      "unknown option '--beam'");
}

TEST(CommandLineKindsTest, PredictOptionsAndHelp) {
  CommandLine line = parseCommandLine({"predict", "--load", "c", "a text"});
  EXPECT_EQ(line.command, CommandLine::Command::Predict);
  EXPECT_EQ(line.predict.texts, (std::vector<std::string>{"a text"}));
  EXPECT_THROW_MESSAGE(parseCommandLine({"predict"}), UsageError,
                       "predict needs --load CHECKPOINT");
  EXPECT_EQ(parseCommandLine({"predict", "--help"}).helpTopic, "predict");
  EXPECT_NE(usageText("generate", "gpt").find("usage: gpt generate"),
            std::string::npos);
  EXPECT_NE(usageText("", "gpt").find("generate "), std::string::npos);
}

TEST(CommandLineKindsTest, TruncateIsForEvalAndPredict) {
  EXPECT_FALSE(
      parseCommandLine({"predict", "--load", "c", "t"}).predict.truncate);
  EXPECT_TRUE(parseCommandLine({"predict", "--load", "c", "--truncate", "t"})
                  .predict.truncate);
  EXPECT_TRUE(
      parseCommandLine({"eval", "--load", "c", "--data", "d", "--truncate"})
          .eval.truncate);
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"predict", "--load", "c", "--truncate=1"}), UsageError,
      "--truncate");
  EXPECT_NE(usageText("predict", "bert").find("--truncate"),
            std::string::npos);
  EXPECT_NE(usageText("eval", "bert").find("--truncate"), std::string::npos);
}

} // namespace
