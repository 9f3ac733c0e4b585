//===- CommandLineTest.cpp - the driver's command-line grammar ------------===//
#include "cli/CommandLine.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <filesystem>

using namespace txrt::driver;

namespace {

CommandLine parse(std::vector<std::string> args) {
  return parseCommandLine(args);
}

TEST(CommandLineTest, ParsesRunWithEveryOption) {
  CommandLine line =
      parse({"run", "decode", "--load", "w.safetensors", "--input", "tgt=t.txt",
             "--input=m.npy", "--out-dir=out", "--threads", "2", "--dim", "T=4",
             "--save", "ck.safetensors", "src=s.npy", "x.txt"});
  EXPECT_EQ(line.command, CommandLine::Command::Run);
  EXPECT_EQ(line.commandName, "run");
  const RunOptions &run = line.run;
  EXPECT_EQ(run.entry, "decode");
  EXPECT_EQ(run.loadPath, "w.safetensors");
  EXPECT_FALSE(run.initSeed.has_value());
  ASSERT_EQ(run.inputs.size(), 4u);
  EXPECT_EQ(run.inputs[0].name, "tgt");
  EXPECT_EQ(run.inputs[0].path, "t.txt");
  EXPECT_EQ(run.inputs[1].name, "");
  EXPECT_EQ(run.inputs[1].path, "m.npy");
  EXPECT_EQ(run.inputs[2].name, "src");
  EXPECT_EQ(run.inputs[3].path, "x.txt");
  EXPECT_EQ(run.outDir, "out");
  EXPECT_EQ(run.threads, 2);
  ASSERT_EQ(run.dims.size(), 1u);
  EXPECT_EQ(run.dims[0], std::make_pair(std::string("T"), int64_t(4)));
  EXPECT_EQ(run.savePath, "ck.safetensors");
}

TEST(CommandLineTest, ParsesBenchDecodeOptions) {
  CommandLine line = parse({"bench", "--sources", "src.npy", "--decode-only",
                            "--decode-out=tokens.npy", "--tgt-len", "16",
                            "--beam", "4", "--beam-out", "beam.npy"});
  EXPECT_EQ(line.commandName, "bench");
  EXPECT_EQ(line.command, CommandLine::Command::Bench);
  EXPECT_EQ(line.bench.sourcesPath, "src.npy");
  EXPECT_EQ(line.bench.decodeOutPath, "tokens.npy");
  EXPECT_TRUE(line.bench.decodeOnly);
  EXPECT_EQ(line.bench.targetLength, 16);
  EXPECT_EQ(line.bench.beam, 4);
  EXPECT_EQ(line.bench.beamOutPath, "beam.npy");
  EXPECT_FALSE(parse({"bench"}).bench.decodeOnly);
}

// translate's --no-kv-cache and generate's --no-cache are one switch: each
// command takes both spellings (translate --no-cache was an unknown option).
TEST(CommandLineTest, KvCacheSwitchTakesBothSpellings) {
  for (const char *flag : {"--no-kv-cache", "--no-cache"}) {
    SCOPED_TRACE(flag);
    EXPECT_TRUE(parse({"translate", "--load", "c", "x"}).translate.kvCache);
    EXPECT_FALSE(
        parse({"translate", "--load", "c", flag, "x"}).translate.kvCache);
    EXPECT_TRUE(parse({"generate", "--load", "c", "x"}).generate.kvCache);
    EXPECT_FALSE(
        parse({"generate", "--load", "c", flag, "x"}).generate.kvCache);
  }
}

TEST(CommandLineTest, InitSeedAndDefaults) {
  CommandLine line = parse({"run", "apply", "--init", "18446744073709551615"});
  EXPECT_EQ(line.run.initSeed, UINT64_MAX);
  EXPECT_EQ(line.run.outDir, ".");
  EXPECT_EQ(line.run.threads, 0);
  EXPECT_FALSE(parse({"run", "apply"}).run.initSeed.has_value());
}

TEST(CommandLineTest, HelpForms) {
  for (auto args :
       std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"help"}}) {
    CommandLine line = parse(args);
    EXPECT_EQ(line.command, CommandLine::Command::Help);
    EXPECT_EQ(line.helpTopic, "");
  }
  EXPECT_EQ(parse({"help", "run"}).helpTopic, "run");
  EXPECT_EQ(parse({"run", "--help"}).helpTopic, "run");
  EXPECT_EQ(parse({"run", "apply", "--init", "3", "-h"}).helpTopic, "run");
  EXPECT_EQ(parse({"info", "--help"}).helpTopic, "info");
  EXPECT_TRUE(parse({"info", "--json"}).info.json);
  EXPECT_EQ(parse({"info", "--load", "c.safetensors"}).info.loadPath,
            std::optional<std::string>("c.safetensors"));
  EXPECT_FALSE(parse({"info"}).info.loadPath);
}

TEST(CommandLineTest, ErrorsNameTheFlagAndTheCommand) {
  struct Case {
    std::vector<std::string> args;
    std::string command, fragment;
  };
  const std::vector<Case> cases = {
      {{}, "", "no command given"},
      {{"fit"}, "", "unknown command 'fit'"},
      {{"help", "fit"}, "", "no help for 'fit'"},
      {{"train"}, "train", "train needs --data FILE.tsv"},
      {{"train", "--data", "d", "--steps", "1", "--epochs", "1"},
       "train",
       "--steps and --epochs exclude each other"},
      {{"train", "--data", "d", "--every", "5"},
       "train",
       "--every needs --save FILE"},
      {{"train", "--data", "d", "--batch", "8", "--max-tokens", "500"},
       "train",
       "--batch and --max-tokens exclude each other"},
      {{"train", "--data", "d", "--max-tokens", "0"},
       "train",
       "--max-tokens expects an integer in [1, "},
      {{"train", "--data", "d", "--batch", "0"},
       "train",
       "--batch expects an integer in [1, "},
      {{"train", "--data", "d", "--stop-time", "90"},
       "train",
       "--stop-time expects a duration such as 90s, 40m or 1.5h (digits and a "
       "unit, no exponent; more than 0, at most 1000000000s), got '90'"},
      {{"train", "--data", "d", "--stop-time=-5m"},
       "train",
       "--stop-time expects a duration such as 90s, 40m or 1.5h (digits and a "
       "unit, no exponent; more than 0, at most 1000000000s), got '-5m'"},
      {{"eval", "--data", "d"}, "eval", "eval needs --load CHECKPOINT"},
      // An empty path or name said "cannot open ''" after the parse.
      {{"run", "encode", "--input", "src="},
       "run",
       "--input src= names no file: write --input src=FILE"},
      {{"run", "encode", "--input", "=src.txt"},
       "run",
       "--input '=src.txt' has no input name before '='"},
      {{"translate", "--load", "c", "--beam", "x"},
       "translate",
       "--beam expects an integer in [1, 1024], got 'x'"},
      {{"translate", "--load", "c", "--alpha", "-1"},
       "translate",
       "--alpha expects a number in [0, 10]"},
      // Accepted and changing nothing, until refused.
      {{"translate", "--load", "c", "--alpha", "7"},
       "translate",
       "--alpha is beam search's length penalty; give --beam N too"},
      // --beam 1 is greedy decoding: it took --alpha silently.
      {{"translate", "--load", "c", "--beam", "1", "--alpha", "2"},
       "translate",
       "--alpha is beam search's length penalty; --beam 1 is greedy "
       "decoding, which has none"},
      {{"train", "--data", "d", "--overwrite"},
       "train",
       "--overwrite lets --save replace a checkpoint (or --log a curve); "
       "give --save FILE"},
      {{"bench", "--steps", "0"}, "bench", "--steps expects an integer"},
      {{"bench", "--sources", "s.npy", "--src-len", "4"},
       "bench",
       "--sources sets the batch and the source length; drop --batch and "
       "--src-len"},
      {{"bench", "--beam-out", "b.npy"}, "bench", "--beam-out needs --beam N"},
      {{"bench", "--decode-only", "--profile"},
       "bench",
       "--profile times the train step, which --decode-only skips"},
      {{"run", "a", "--step", "0"}, "run", "--step expects an integer in [1, "},
      {{"info", "--verbose"}, "info", "unknown option '--verbose'"},
      {{"info", "extra"}, "info", "unexpected argument 'extra'"},
      {{"info", "--json=1"}, "info", "option '--json' takes no value"},
      // These took the value and ignored it: --decode-only=0 was on.
      {{"bench", "--decode-only=0"},
       "bench",
       "option '--decode-only' takes no value"},
      {{"bench", "--profile=no"}, "bench", "option '--profile' takes no value"},
      // It printed the help and dropped the value.
      {{"translate", "--help=x"},
       "translate",
       "option '--help' takes no value"},
      {{"run", "a", "--profile=no"},
       "run",
       "option '--profile' takes no value"},
      {{"translate", "--load", "c", "--no-kv-cache=0"},
       "translate",
       "option '--no-kv-cache' takes no value"},
      {{"translate", "--load", "c", "--no-ema=false"},
       "translate",
       "option '--no-ema' takes no value"},
      {{"info", "--load"}, "info", "option '--load' needs a value"},
      {{"info", "--load", "a", "--load", "b"}, "info", "--load is given twice"},
      {{"run"}, "run", "run needs the name of an entry"},
      {{"run", "a", "--load"}, "run", "option '--load' needs a value"},
      // A forgotten value: the next option is not taken as a file name.
      {{"train", "--data", "d", "--save", "--quiet"},
       "train",
       "option '--save' needs a value, got the option '--quiet' (write "
       "--save=--quiet for a value that starts with --)"},
      {{"train", "--data", "--steps", "5"},
       "train",
       "option '--data' needs a value, got the option '--steps'"},
      {{"translate", "--load", "--beam", "2", "x"},
       "translate",
       "option '--load' needs a value, got the option '--beam'"},
      {{"run", "a", "--init", "-1"},
       "run",
       "--init expects a non-negative integer seed, got '-1'"},
      {{"run", "a", "--init", "12x"}, "run", "got '12x'"},
      {{"run", "a", "--init", "1", "--init", "2"},
       "run",
       "option '--init' is given twice"},
      // Kept the last value without a word: trained on B alone, never wrote
      // the first --save.
      {{"train", "--data", "a.tsv", "--data", "b.tsv"},
       "train",
       "option '--data' is given twice"},
      {{"run", "a", "--save", "x", "--save", "y"},
       "run",
       "option '--save' is given twice"},
      {{"run", "a", "--load", "w", "--init", "1"},
       "run",
       "--load and --init exclude each other"},
      {{"run", "a", "--threads", "0"},
       "run",
       "--threads expects an integer in [1, 4096], got '0'"},
      {{"run", "a", "--dim", "T"}, "run", "--dim expects NAME=N, got 'T'"},
      {{"run", "a", "--dim", "T=x"}, "run", "got 'T=x'"},
      // One rule for every float option: --alpha and --ema took a leading
      // blank and hexadecimal, which --temperature refused.
      {{"translate", "--load", "c", "--alpha", " 0.5", "x"},
       "translate",
       "--alpha expects a number in [0, 10], got ' 0.5'"},
      {{"train", "--data", "d", "--ema", "0x1p-1"},
       "train",
       "--ema expects a decay in (0, 1), e.g. 0.999, got '0x1p-1'"},
      // A decay that is 1 in f32 never moved the average (eval, export and
      // translate then used the initial weights).
      {{"train", "--data", "d", "--ema", "0.99999999"},
       "train",
       "--ema 0.99999999 is 1 in f32, where the average is kept: it would "
       "never move; the largest decay below 1 is 0.99999994"},
      // And one whose 1 - DECAY is 1 in f32 (--ema 0 is refused) was the
      // weights: 0 in f32, and 1e-10.
      {{"train", "--data", "d", "--ema", "1e-46"},
       "train",
       "--ema 1e-46 leaves 1 - DECAY at 1 in f32, where the average is kept: "
       "it would be the weights themselves; a decay must be in (0, 1), e.g. "
       "0.999 (from about 2.98e-8, whose f32 is past 2^-25)"},
      {{"train", "--data", "d", "--ema", "1e-10"},
       "train",
       "--ema 1e-10 leaves 1 - DECAY at 1 in f32"},
      {{"generate", "--load", "c", "--temperature", "0x1", "x"},
       "generate",
       "--temperature expects a number in [0, 100], got '0x1'"},
      // The first value was dropped without a word.
      {{"run", "a", "--dim", "B=3", "--dim", "B=2"},
       "run",
       "--dim B is given twice (B=3 and B=2)"},
      {{"run", "a", "--bogus", "1"}, "run", "unknown option '--bogus'"},
      {{"run", "a", "--input="}, "run", "--input needs a file"},
  };
  for (const Case &c : cases) {
    std::string joined;
    for (const std::string &arg : c.args)
      joined += arg + " ";
    SCOPED_TRACE(joined);
    try {
      parse(c.args);
      ADD_FAILURE() << "no error";
    } catch (const UsageError &error) {
      EXPECT_EQ(error.command(), c.command);
      EXPECT_EQ(error.exitCode(), kExitBadInput);
      EXPECT_NE(std::string(error.what()).find(c.fragment), std::string::npos)
          << error.what();
    }
  }
}

TEST(CommandLineTest, BestByNeedsValidation) {
  // It was ignored without --valid (exit 0), while --keep-best and
  // --patience refused.
  EXPECT_THROW_MESSAGE(
      parse({"train", "--data", "d.tsv", "--best-by", "loss"}), UsageError,
      "--best-by needs --valid FILE.tsv (with --keep-best or --patience)");
  EXPECT_THROW_MESSAGE(
      parse({"train", "--text", "t.txt", "--best-by", "loss"}), UsageError,
      "--best-by needs --valid FILE.txt");
  EXPECT_EQ(*parse({"train", "--data", "d.tsv", "--best-by", "loss",
                    "--valid", "v.tsv", "--valid-every", "5"})
                 .train.bestBy,
            "loss");
}

TEST(CommandLineTest, SubwordOptionsNeedTheirTokenizer) {
  TrainOptions train =
      parseCommandLine({"train", "--data", "d.tsv", "--tokenizer", "spm",
                        "--vocab-size", "800", "--spm-type", "bpe"})
          .train;
  EXPECT_TRUE(train.tokenizerGiven);
  EXPECT_EQ(train.spmType, std::optional<std::string>("bpe"));
  TrainOptions defaults = parseCommandLine({"train", "--data", "d.tsv"}).train;
  EXPECT_FALSE(defaults.tokenizerGiven);
  EXPECT_EQ(defaults.tokenizer, "word");
  EXPECT_FALSE(defaults.spmType);
  // Before, --spm-type unigram without --tokenizer spm, and --min-freq
  // with a SentencePiece tokenizer, were ignored without a word.
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"train", "--data", "d.tsv", "--spm-type", "unigram"}),
      UsageError, "--spm-type applies to --tokenizer spm");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"train", "--data", "d.tsv", "--tokenizer", "spm",
                        "--min-freq", "2"}),
      UsageError,
      "--min-freq applies to --tokenizer word (a "
      "SentencePiece model keeps --vocab-size pieces)");
  EXPECT_THROW_MESSAGE(
      parseCommandLine({"train", "--data", "d.tsv", "--tokenizer", "m.model",
                        "--min-freq", "2"}),
      UsageError, "--min-freq applies to --tokenizer word");
  EXPECT_EQ(parseCommandLine({"train", "--data", "d.tsv", "--tokenizer", "word",
                              "--min-freq", "2"})
                .train.minFreq,
            std::optional<int64_t>(2));
}

TEST(CommandLineTest, NameValueSplitting) {
  EXPECT_EQ(splitNameValue("src=a.txt"),
            std::make_pair(std::string("src"), std::string("a.txt")));
  EXPECT_EQ(splitNameValue("tgt_in=x=y")->second, "x=y");
  EXPECT_FALSE(splitNameValue("./a=b.npy").has_value());
  EXPECT_FALSE(splitNameValue("=a").has_value());
  EXPECT_FALSE(splitNameValue("plain.npy").has_value());
  EXPECT_FALSE(splitNameValue("1x=a").has_value());
}

TEST(CommandLineTest, UsageTextsNameTheProgram) {
  std::string top = usageText("", "translate");
  EXPECT_NE(top.find("usage: translate <command>"), std::string::npos);
  EXPECT_EQ(top.find("PROGRAM"), std::string::npos);
  EXPECT_NE(usageText("run", "m").find("usage: m run ENTRY"),
            std::string::npos);
  EXPECT_NE(usageText("info", "m").find("usage: m info [--json] [--load CKPT]"),
            std::string::npos);
}

TEST(CommandLineTest, TrainHelpDescribesValidationAndResumeAsTheyAre) {
  std::string train = usageText("train", "m");
  // BLEU as eval computes it (translationBleu), not always sacreBLEU.
  EXPECT_EQ(train.find("greedy, sacreBLEU 13a"), std::string::npos);
  EXPECT_NE(train.find("BLEU as eval scores it"), std::string::npos);
  EXPECT_NE(train.find("corpus BLEU-4 with effective order"),
            std::string::npos);
  EXPECT_NE(train.find("(default 1, or the --resume checkpoint's)"),
            std::string::npos);
}

// fairseq's corpus is two files: the stray second one gets a `paste` that
// makes the one TSV, only where the two look like a corpus's sides, into a
// file that is neither (the first version advised `paste train.tsv
// valid.tsv > train.tsv`, which empties train.tsv, for a forgotten
// --valid, and a paste of a stray number).
TEST(CommandLineTest, TwoSidesOfACorpusGetAPasteIntoANewFile) {
  ScratchDir dir;
  const std::string en = dir.file("t.en"), es = dir.file("t.es");
  writeFile(en, "a b\nc d\n");
  writeFile(es, "x y\nz w\n");
  auto failure = [](std::vector<std::string> args) {
    try {
      parseCommandLine(args);
    } catch (const UsageError &error) {
      return std::string(error.what());
    }
    return std::string("(parsed)");
  };
  EXPECT_EQ(failure({"train", "--data", en, es}),
            "unexpected argument '" + es +
                "': --data takes one file of tab-separated lines; '" + en +
                "' and '" + es +
                "' look like the two sides of a corpus (2 lines each, no "
                "tab): `paste " +
                en + " " + es + " > " + dir.file("t.tsv") + "` makes it");
  EXPECT_NE(failure({"train", "--data", "d", "--valid=" + en, es})
                .find("> " + dir.file("t.tsv") + "`"),
            std::string::npos);
  // t.tsv there: the next free name; a TSV, a stray number, files of other
  // lengths: no hint.
  const std::string tsv = dir.file("t.tsv");
  writeFile(tsv, "a b\tx y\nc d\tz w\n");
  EXPECT_NE(failure({"train", "--data", en, es})
                .find("> " + dir.file("t.pairs.tsv") + "`"),
            std::string::npos);
  // A relative name that starts with '-' is paste's option (-dash.en read
  // as -d): ./-dash.en.
  {
    ScratchDir here;
    writeFile(here.file("-a.en"), "a\n");
    writeFile(here.file("-a.es"), "b\n");
    struct Chdir {
      std::filesystem::path was = std::filesystem::current_path();
      explicit Chdir(const std::string &to) {
        std::filesystem::current_path(to);
      }
      ~Chdir() { std::filesystem::current_path(was); }
    } in(here.file(""));
    EXPECT_NE(failure({"train", "--data", "-a.en", "./-a.es"})
                  .find("`paste ./-a.en ./-a.es > ./-a--a.tsv`"),
              std::string::npos)
        << failure({"train", "--data", "-a.en", "./-a.es"});
  }
  const std::string other = dir.file("v.es");
  writeFile(other, "x\n");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"train", "--data", tsv, es},
        {"train", "--data", en, "100"},
        {"train", "--data", en, other}})
    EXPECT_EQ(failure(args), "unexpected argument '" + args.back() + "'")
        << args.back();
}

} // namespace
