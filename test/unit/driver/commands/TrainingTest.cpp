//===- TrainingTest.cpp - train, resume, eval, translate on FakeSeq2Seq ---===//
//
// The training commands in-process on the trainable fake model: the loss
// goes down, a resumed run is byte-identical to an uninterrupted one, bad
// data fails with FILE:LINE and exit 2 without touching an existing
// checkpoint, and eval / translate / run --save-grads read what train wrote.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "commands/Driver.h"
#include "core/FakeDevice.h"
#include "data/Tokenizer.h"
#include "formats/Npy.h"
#include "formats/Safetensors.h"
#include "loop/LossCurve.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];
extern "C" const char txc_model_json[];
extern "C" const txc_entry_fn txc_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

using Result = DriverResult;

constexpr const char *kToyData = "i love you\tte amo\n"
                                 "you love me\tme amas\n"
                                 "i see you\tte veo\n"
                                 "you see me\tme ves\n"
                                 "i like pizza\tme gusta pizza\n"
                                 "you like cake\tte gusta pastel\n"
                                 "i eat pizza\tyo como pizza\n"
                                 "you eat cake\ttú comes pastel\n";

class TrainingTest : public ::testing::Test {
protected:
  void SetUp() override { writeFile(data(), kToyData); }
  std::string data() const { return dir.file("train.tsv"); }
  ScratchDir dir;
};

TEST_F(TrainingTest, LossDecreasesAndEvalAndTranslateReadTheCheckpoint) {
  Result train = drive({"train", "--data", data(), "--steps", "150",
                        "--batch", "4", "--seed", "3", "--save",
                        dir.file("ckpt.safetensors"), "--threads", "1"});
  ASSERT_EQ(train.code, 0) << train.err;
  EXPECT_NE(train.out.find("trained steps 1..150"), std::string::npos)
      << train.out;
  EXPECT_NE(train.err.find("step 150/150  epoch 75  loss "), std::string::npos)
      << train.err;
  EXPECT_NE(train.err.find("vocabularies 13 / 17, batch 4, 2 batches per "
                           "epoch, steps 1..150"),
            std::string::npos)
      << train.err;

  std::vector<LossPoint> curve =
      parseLossCsv(readFile(dir.file("ckpt.loss.csv")));
  ASSERT_EQ(curve.size(), 150u);
  EXPECT_EQ(curve[0].lr, 0.05);
  double first = (curve[0].loss + curve[1].loss) / 2;
  double last = (curve[148].loss + curve[149].loss) / 2;
  EXPECT_LT(last, first / 4) << first << " -> " << last;
  EXPECT_NE(readFile(dir.file("ckpt.loss.svg")).find("<polyline"),
            std::string::npos);
  EXPECT_NE(readFile(dir.file("ckpt.tokenizer.json")).find("\"te\""),
            std::string::npos);

  Result eval = drive({"eval", "--load", dir.file("ckpt.safetensors"),
                       "--data", data()});
  ASSERT_EQ(eval.code, 0) << eval.err;
  EXPECT_NE(eval.out.find("examples   8"), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find("tokens, perplexity"), std::string::npos);
  EXPECT_NE(eval.out.find("bleu       BLEU = "), std::string::npos);
  double loss = std::stod(eval.out.substr(eval.out.find("loss ") + 5));
  EXPECT_LT(loss, first / 4);

  Result translate =
      drive({"translate", "--load", dir.file("ckpt.safetensors"),
             "i love you", "You eat CAKE", "i love unknownword"});
  ASSERT_EQ(translate.code, 0) << translate.err;
  EXPECT_EQ(std::count(translate.out.begin(), translate.out.end(), '\n'), 3);
  Result beam = drive({"translate", "--load", dir.file("ckpt.safetensors"),
                       "--beam", "3", "i love you"});
  ASSERT_EQ(beam.code, 0) << beam.err;
  EXPECT_EQ(std::count(beam.out.begin(), beam.out.end(), '\n'), 1);

  Result tooLong =
      drive({"translate", "--load", dir.file("ckpt.safetensors"),
             "one two three four five six seven eight"});
  EXPECT_EQ(tooLong.code, 2);
  EXPECT_NE(tooLong.err.find("error: sentence 1: the sentence has 8 words, "
                             "more than dim S <= 7 (config max_len; "
                             "recompile with txc -D max_len=N"),
            std::string::npos)
      << tooLong.err;
  // Every sentence too long is named, as train and eval name every bad line
  // (only the first was).
  Result twoTooLong =
      drive({"translate", "--load", dir.file("ckpt.safetensors"),
             "one two three four five six seven eight", "i love you",
             "one two three four five six seven eight nine"});
  EXPECT_EQ(twoTooLong.code, 2);
  EXPECT_NE(twoTooLong.err.find("error: sentence 1: the sentence has 8 words"),
            std::string::npos)
      << twoTooLong.err;
  EXPECT_NE(twoTooLong.err.find("error: sentence 3: the sentence has 9 words"),
            std::string::npos)
      << twoTooLong.err;
}

TEST_F(TrainingTest, TranslateReadsStdinLikeATextFile) {
  std::string ckpt = dir.file("ckpt.safetensors");
  Result train =
      drive({"train", "--data", data(), "--steps", "150", "--batch", "4",
             "--seed", "3", "--save", ckpt, "--threads", "1", "--quiet"});
  ASSERT_EQ(train.code, 0) << train.err;
  Result arguments =
      drive({"translate", "--load", ckpt, "you eat cake", "i love you"});
  ASSERT_EQ(arguments.code, 0) << arguments.err;
  auto translateFile = [&](const std::string &text) {
    writeFile(dir.file("in.txt"), text);
    return runShell(shellQuote(TXRT_DRIVER_FAKE_SEQ2SEQ) +
                    " translate --load " + shellQuote(ckpt) + " < " +
                    shellQuote(dir.file("in.txt")));
  };
  // A file saved by a Windows editor: a byte order mark and CRLF
  // (test/E2E/train-translate.test shows the mark changing a translation
  // before it was dropped; this fake model happens not to care).
  CommandResult windows =
      translateFile("\xEF\xBB\xBFyou eat cake\r\ni love you\r\n");
  EXPECT_EQ(windows.exitCode, 0) << windows.out;
  EXPECT_EQ(windows.out, arguments.out);
  CommandResult invalid = translateFile("you eat cake\ni \xFF love you\n");
  EXPECT_EQ(invalid.exitCode, 2);
  EXPECT_EQ(invalid.out, "error: <stdin>:2: invalid UTF-8 at byte 3 of the "
                         "line (texts must be UTF-8)\n");
  CommandResult directory =
      runShell(shellQuote(TXRT_DRIVER_FAKE_SEQ2SEQ) + " translate --load " +
               shellQuote(ckpt) + " < " + shellQuote(dir.path()));
  EXPECT_EQ(directory.exitCode, 2);
  EXPECT_EQ(directory.out, "error: cannot read <stdin>: it is a directory "
                           "(give the texts one a line, or as arguments)\n");
}

TEST_F(TrainingTest, ResumeIsByteIdenticalToAnUninterruptedRun) {
  auto train = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--data", data(), "--batch",
                                     "3", "--seed", "7", "--init", "5",
                                     "--threads", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    if (std::find(args.begin(), args.end(), "--resume") != args.end())
      args.erase(args.begin() + 7, args.begin() + 9); // no --init
    Result result = drive(args);
    EXPECT_EQ(result.code, 0) << result.err;
    return result;
  };
  train({"--steps", "10", "--save", dir.file("full.safetensors")});
  train({"--steps", "5", "--save", dir.file("half.safetensors")});
  train({"--steps", "10", "--resume", dir.file("half.safetensors"), "--save",
         dir.file("resumed.safetensors")});
  std::string full = readFile(dir.file("full.safetensors"));
  ASSERT_FALSE(full.empty());
  EXPECT_TRUE(full == readFile(dir.file("resumed.safetensors")));
  EXPECT_EQ(readFile(dir.file("full.tokenizer.json")),
            readFile(dir.file("resumed.tokenizer.json")));
  // The checkpoint's metadata records the step.
  SafetensorsReader resumed(dir.file("resumed.safetensors"));
  bool sawStep = false;
  for (const auto &[key, value] : resumed.metadata())
    if (key == "step") {
      EXPECT_EQ(value, "10");
      sawStep = true;
    }
  EXPECT_TRUE(sawStep);
  // A different seed changes the result.
  Result other = drive({"train", "--data", data(), "--batch", "3", "--seed",
                        "8", "--init", "5", "--steps", "10", "--save",
                        dir.file("other.safetensors")});
  ASSERT_EQ(other.code, 0);
  EXPECT_FALSE(full == readFile(dir.file("other.safetensors")));
}

TEST_F(TrainingTest, ResumeKeepsTheCheckpointsUpdateFreq) {
  auto train = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"train", "--data", data(), "--seed", "7", "--threads", "1"});
    Result result = drive(args);
    EXPECT_EQ(result.code, 0) << result.err;
    return result;
  };
  train({"--batch", "2", "--update-freq", "2", "--steps", "6", "--save",
         dir.file("full.safetensors")});
  train({"--batch", "2", "--update-freq", "2", "--steps", "3", "--save",
         dir.file("half.safetensors")});
  // Neither --batch nor --update-freq: both come from the checkpoint.
  Result resumed =
      train({"--steps", "6", "--resume", dir.file("half.safetensors"), "--save",
             dir.file("resumed.safetensors")});
  EXPECT_EQ(resumed.err.find("differs"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("update-freq 2"), std::string::npos);
  EXPECT_TRUE(readFile(dir.file("full.safetensors")) ==
              readFile(dir.file("resumed.safetensors")));
  // Given explicitly, another one wins (and is noted).
  Result other = train({"--steps", "6", "--update-freq", "1", "--resume",
                        dir.file("half.safetensors"), "--save",
                        dir.file("other.safetensors")});
  EXPECT_NE(other.err.find("note: --update-freq 1 differs from the "
                           "checkpoint's"),
            std::string::npos)
      << other.err;
  EXPECT_FALSE(readFile(dir.file("full.safetensors")) ==
               readFile(dir.file("other.safetensors")));
}

TEST_F(TrainingTest, ResumedValidationContinuesOnlyAComparableBest) {
  auto train = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"train", "--data", data(), "--valid", data(), "--valid-every",
                 "2", "--threads", "1", "--save", dir.file("c.safetensors")});
    Result result = drive(args);
    EXPECT_EQ(result.code, 0) << result.err;
    return result;
  };
  train({"--steps", "2", "--best-by", "loss"});
  SafetensorsReader saved(dir.file("c.safetensors"));
  std::map<std::string, std::string> metadata(saved.metadata().begin(),
                                              saved.metadata().end());
  EXPECT_EQ(metadata["best_by"], "loss");
  EXPECT_EQ(metadata["best_step"], "2");
  EXPECT_EQ(metadata["valid_since_best"], "0");
  Result same = train({"--steps", "4", "--best-by", "loss", "--resume",
                       dir.file("c.safetensors")});
  EXPECT_EQ(same.err.find("not comparable"), std::string::npos) << same.err;
  Result other = train({"--steps", "6", "--best-by", "bleu", "--resume",
                        dir.file("c.safetensors")});
  EXPECT_NE(other.err.find("note: the checkpoint's best validation (step "),
            std::string::npos)
      << other.err;
  EXPECT_NE(other.err.find("by loss on '" + data() +
                           "') is not comparable with --valid '" + data() +
                           "' by BLEU; validation starts a new best\n"),
            std::string::npos)
      << other.err;
  EXPECT_NE(other.err.find("validation step 6: "), std::string::npos);
  EXPECT_NE(other.err.find("(best)"), std::string::npos) << other.err;
}

TEST_F(TrainingTest, BadDataFailsWithFileLineAndKeepsTheCheckpoint) {
  // (Safetensors-shaped: --save refuses to replace a file of another kind.)
  const std::string previous("\x02\0\0\0\0\0\0\0{}", 10);
  writeFile(dir.file("ckpt.safetensors"), previous);
  writeFile(dir.file("bad.tsv"), "i love you\tte amo\nno tab\n\tx\n");
  Result bad = drive({"train", "--data", dir.file("bad.tsv"), "--steps", "3",
                      "--save", dir.file("ckpt.safetensors")});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("error: " + dir.file("bad.tsv") +
                         ":2: no tab between source and target"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find(":3: the source side is empty"), std::string::npos);
  EXPECT_EQ(readFile(dir.file("ckpt.safetensors")), previous);

  writeFile(dir.file("long.tsv"), "a b c d e f g h\tx\n");
  Result tooLong = drive({"train", "--data", dir.file("long.tsv")});
  EXPECT_EQ(tooLong.code, 2);
  EXPECT_NE(tooLong.err.find("long.tsv:1: the source sentence has 8 words, "
                             "more than dim S <= 7"),
            std::string::npos);

  Result batch = drive({"train", "--data", data(), "--batch", "9"});
  EXPECT_EQ(batch.code, 2);
  EXPECT_NE(batch.err.find("--batch 9 is larger than dim B <= 8 (config "
                           "batch; recompile with txc -D batch=N"),
            std::string::npos)
      << batch.err;

  writeFile(dir.file("text.safetensors"), "previous checkpoint");
  Result resume = drive(
      {"train", "--data", data(), "--resume", dir.file("text.safetensors")});
  EXPECT_EQ(resume.code, 2);
  EXPECT_NE(resume.err.find("text.safetensors' is not a safetensors file: it "
                            "begins with text ('previous')"),
            std::string::npos)
      << resume.err;
  EXPECT_EQ(readFile(dir.file("text.safetensors")), "previous checkpoint");
  EXPECT_EQ(readFile(dir.file("ckpt.safetensors")), previous);
}

TEST_F(TrainingTest, ModelsWithoutKindCannotTrain) {
  std::ostringstream out, err;
  int code = runDriver("fake-model", {"train", "--data", data()},
                       txc_model_json, txc_entry_table, out, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.str().find("'fake' declares no model kind, so it supports "
                           "only run, info and export, not train"),
            std::string::npos)
      << err.str();
}

TEST_F(TrainingTest, SaveGradsWritesEveryGradientByName) {
  writeFile(dir.file("src.txt"), "4 5 6\n7 8\n");
  writeFile(dir.file("in.txt"), "2 4 5\n2 6\n");
  writeFile(dir.file("out.txt"), "4 5 3\n6 3\n");
  Result run = drive({"run", "train_grad", "--init", "1", "src=" +
                      dir.file("src.txt"), "tgt_in=" + dir.file("in.txt"),
                      "tgt_out=" + dir.file("out.txt"), "--out-dir",
                      dir.path(), "--save-grads", dir.file("g.safetensors")});
  ASSERT_EQ(run.code, 0) << run.err;
  SafetensorsReader grads(dir.file("g.safetensors"));
  ASSERT_EQ(grads.tensors().size(), 4u);
  const SafetensorsEntry *bias = grads.find("out.bias");
  ASSERT_NE(bias, nullptr);
  std::vector<float> values(20);
  grads.read(*bias, values.data());
  // Softmax cross-entropy: the bias gradient sums to 0 and is not all 0.
  double sum = 0, norm = 0;
  for (float v : values) {
    sum += v;
    norm += std::fabs(v);
  }
  EXPECT_NEAR(sum, 0.0, 1e-6);
  EXPECT_GT(norm, 0.1);

  Result forward = drive({"run", "decode", "--save-grads",
                          dir.file("x.safetensors"), "tgt=" +
                          dir.file("in.txt")});
  EXPECT_EQ(forward.code, 2);
  EXPECT_NE(forward.err.find("--save-grads needs a train_grad entry; 'decode' "
                             "is a forward entry; run 'train_grad'"),
            std::string::npos)
      << forward.err;
}

TEST_F(TrainingTest, BenchPrintsTimings) {
  Result bench = drive({"bench", "--steps", "3", "--threads", "1"});
  ASSERT_EQ(bench.code, 0) << bench.err;
  EXPECT_NE(bench.out.find("train step   "), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("ms/step"), std::string::npos);
  EXPECT_NE(bench.out.find("greedy       "), std::string::npos);
  EXPECT_NE(bench.out.find("ms/token"), std::string::npos);
  EXPECT_NE(bench.out.find("peak memory  "), std::string::npos);
}

} // namespace

namespace {

/// The fixed batch the run tests use: src.txt, in.txt and out.txt.
void writeFixedBatch(const ScratchDir &dir) {
  writeFile(dir.file("src.txt"), "4 5 6\n7 8\n");
  writeFile(dir.file("in.txt"), "2 4 5\n2 6\n");
  writeFile(dir.file("out.txt"), "4 5 3\n6 3\n");
}

/// Runs the fake's train_step entry on a fixed batch.
Result runTrainStep(const ScratchDir &dir, std::vector<std::string> extra) {
  writeFixedBatch(dir);
  std::vector<std::string> args = {
      "run", "train", "src=" + dir.file("src.txt"),
      "tgt_in=" + dir.file("in.txt"), "tgt_out=" + dir.file("out.txt"),
      "--out-dir", dir.path()};
  args.insert(args.end(), extra.begin(), extra.end());
  return drive(args);
}

std::vector<float> tensorValues(const std::string &path,
                                const std::string &name) {
  SafetensorsReader file(path);
  const SafetensorsEntry *entry = file.find(name);
  EXPECT_NE(entry, nullptr) << name;
  if (!entry)
    return {};
  std::vector<float> values(size_t(entry->end - entry->begin) / 4);
  file.read(*entry, values.data());
  return values;
}

} // namespace

// A train_step entry's gradients live in its activation arena and go
// straight into Adam's update: --save-grads wrote the untouched gradient
// region (all zeros) until it was refused.
TEST_F(TrainingTest, SaveGradsRefusesATrainStepEntry) {
  Result run = runTrainStep(
      dir, {"--init", "1", "--save-grads", dir.file("g.safetensors")});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("--save-grads needs a train_grad entry; 'train' is a "
                         "train_step entry, whose gradients go straight into "
                         "Adam's update and are not kept; run 'train_grad'"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("g.safetensors")));
}

TEST_F(TrainingTest, RunNeverWritesLessOverATrainingCheckpoint) {
  const std::string ckpt = dir.file("ckpt.safetensors");
  ASSERT_EQ(runTrainStep(dir, {"--init", "1", "--save", ckpt}).code, 0);
  const std::string before = readFile(ckpt);
  // A train_grad entry saves the parameters only, --save-grads gradients
  // only: both would drop the moments and the step. Refused before the
  // entry runs; the checkpoint is left as it was.
  std::vector<std::string> grad = {
      "run", "train_grad", "src=" + dir.file("src.txt"),
      "tgt_in=" + dir.file("in.txt"), "tgt_out=" + dir.file("out.txt"),
      "--out-dir", dir.path(), "--load", ckpt};
  std::vector<std::string> params = grad, grads = grad;
  params.insert(params.end(), {"--save", ckpt});
  grads[grads.size() - 2] = "--init"; // --load ckpt --save-grads ckpt is
  grads.back() = "1";                  // refused as the same file already
  grads.insert(grads.end(), {"--save-grads", ckpt});
  Result paramsOnly = drive(params);
  EXPECT_EQ(paramsOnly.code, 2);
  EXPECT_NE(paramsOnly.err.find(
                "error: --save '" + ckpt +
                "' is a training checkpoint (parameters, Adam's moments, "
                "step 1) and entry 'train_grad' (train_grad) saves the "
                "parameters only: writing over it would drop all but the "
                "parameters; --save to another file"),
            std::string::npos)
      << paramsOnly.err;
  EXPECT_EQ(paramsOnly.err.find("ran '"), std::string::npos);
  Result gradsOnly = drive(grads);
  EXPECT_EQ(gradsOnly.code, 2);
  EXPECT_NE(gradsOnly.err.find("--save-grads writes gradients only"),
            std::string::npos)
      << gradsOnly.err;
  EXPECT_EQ(readFile(ckpt), before);
  // A train_step entry continues it: parameters, moments and step.
  Result step = runTrainStep(dir, {"--load", ckpt, "--save", ckpt});
  ASSERT_EQ(step.code, 0) << step.err;
  EXPECT_NE(step.out.find("Adam's moments and step 2"), std::string::npos);
  // Parameters-only files are written as before.
  params.back() = dir.file("params.safetensors");
  EXPECT_EQ(drive(params).code, 0);
  params[params.size() - 3] = dir.file("params.safetensors");
  EXPECT_EQ(drive(params).code, 0);
}

TEST_F(TrainingTest, RunRepeatTakesUpdatesAndSaveLoadKeepsAdamState) {
  // Three updates in one run ...
  Result repeated = runTrainStep(dir, {"--init", "1", "--repeat", "3",
                                       "--save", dir.file("three.safetensors")});
  ASSERT_EQ(repeated.code, 0) << repeated.err;
  EXPECT_NE(repeated.out.find("saved the parameters, Adam's moments and "
                              "step 3 to"),
            std::string::npos)
      << repeated.out;
  // ... equal three runs of one, each loading the last one's save (the
  // moments and the step travel with the parameters).
  ASSERT_EQ(runTrainStep(dir, {"--init", "1", "--save",
                               dir.file("one.safetensors")})
                .code,
            0);
  for (const char *next : {"two", "three-separately"}) {
    std::string from = std::string(next) == "two" ? "one" : "two";
    Result step = runTrainStep(
        dir, {"--load", dir.file(from + ".safetensors"), "--save",
              dir.file(std::string(next) + ".safetensors")});
    ASSERT_EQ(step.code, 0) << step.err;
  }
  for (const char *name : {"out.weight", "out.weight.exp_avg_sq"})
    EXPECT_EQ(tensorValues(dir.file("three.safetensors"), name),
              tensorValues(dir.file("three-separately.safetensors"), name))
        << name;
  // A step at or before the loaded one would save that step beside the
  // moments of every loaded update: refused, nothing written.
  Result stuck = runTrainStep(dir, {"--load", dir.file("one.safetensors"),
                                    "--step", "1", "--save",
                                    dir.file("stuck.safetensors")});
  EXPECT_EQ(stuck.code, 2) << stuck.err;
  EXPECT_NE(stuck.err.find("--step 1 is not after step 1 of"),
            std::string::npos)
      << stuck.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("stuck.safetensors")));
}

namespace {

Result driveOnFakeDevice(std::vector<std::string> args) {
  static const std::string json = onFakeDevice(fake_seq2seq_json);
  return runDriverCaptured("fake-seq2seq", args, json.c_str(),
                           fake_seq2seq_entry_table);
}

} // namespace

// `run` on a device (a --target=cuda executable; here the fake device,
// core/FakeDevice.h): the parameters go in once, the entry runs there, and
// its outputs, the gradients of a train_grad entry and the checkpoint after
// two train_step updates come back equal to the CPU's. It was refused on a
// device before ("not supported yet"), which left no way to check one
// entry of a GPU build against the CPU build.
// bench on a device: the train step and greedy and beam decoding run there
// (graphs included), the decoded tokens are the CPU's, and it ends with the
// graph line.
/// The fake seq2seq model with `from` replaced by `to` in its JSON (a
/// model compiled with another config: the same entries).
std::string fakeJsonWith(const std::string &from, const std::string &to) {
  std::string json = fake_seq2seq_json;
  const size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    json.replace(at, from.size(), to);
  return json;
}

TEST_F(TrainingTest, AnotherConfigIsNamedByRunBenchAndInfo) {
  // A checkpoint of another config of the same shapes loaded in silence
  // into `run` and `bench` (eval and translate warned); info --load did
  // not say it either.
  ASSERT_EQ(drive({"train", "--data", data(), "--steps", "2", "--save",
                   dir.file("c.safetensors"), "--quiet"})
                .code,
            0);
  const std::string other =
      fakeJsonWith("\"label_smoothing\": 0.0", "\"label_smoothing\": 0.1");
  auto driveOther = [&](std::vector<std::string> args) {
    return runDriverCaptured("fake-seq2seq", args, other.c_str(),
                             fake_seq2seq_entry_table);
  };
  const std::string warning =
      "warning: '" + dir.file("c.safetensors") +
      "' was trained with another config (this executable: label_smoothing "
      "= 0.1 (was 0.0)): its tensors fit";
  writeFixedBatch(dir);
  const std::string ckpt = dir.file("c.safetensors");
  Result run =
      driveOther({"run", "encode", "--load", ckpt, "src=" + dir.file("src.txt"),
                  "--out-dir", dir.path()});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find(warning), std::string::npos) << run.err;
  Result bench =
      driveOther({"bench", "--load", ckpt, "--decode-only", "--threads", "1"});
  ASSERT_EQ(bench.code, 0) << bench.err;
  EXPECT_NE(bench.err.find(warning), std::string::npos) << bench.err;
  Result info = driveOther({"info", "--load", ckpt});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("  config       this executable: label_smoothing "
                          "= 0.1 (was 0.0); txc -D label_smoothing=0.0 "
                          "builds the trained model\n"),
            std::string::npos)
      << info.out;
  // The same config: nothing said, and info says so.
  Result same = drive({"run", "encode", "--load", ckpt,
                       "src=" + dir.file("src.txt"), "--out-dir", dir.path()});
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.err.find("config"), std::string::npos) << same.err;
  Result sameInfo = drive({"info", "--load", ckpt});
  EXPECT_NE(sameInfo.out.find("  config       as this executable's\n"),
            std::string::npos)
      << sameInfo.out;
}

TEST_F(TrainingTest, BenchDecodesFromTheModelsStartToken) {
  // With config pad = 3 a built vocabulary has [UNK] 0, [SOS] 1, [EOS] 2,
  // [PAD] 3; bench started every row from id 2 ([EOS]), so --decode-out
  // and --beam-out were not translate's tokens.
  const std::string json = fakeJsonWith("\"pad\": 0", "\"pad\": 3");
  auto drivePad3 = [&](std::vector<std::string> args) {
    return runDriverCaptured("fake-seq2seq", args, json.c_str(),
                             fake_seq2seq_entry_table);
  };
  const std::string ckpt = dir.file("c.safetensors");
  ASSERT_EQ(drivePad3({"train", "--data", data(), "--steps", "60", "--seed",
                       "1", "--save", ckpt, "--quiet"})
                .code,
            0);
  Tokenizer tokenizer = Tokenizer::load(dir.file("c.tokenizer.json"));
  ASSERT_EQ(tokenizer.target.sosId(), 1);
  std::vector<int32_t> source;
  for (const char *word : {"i", "like", "pizza"})
    source.push_back(tokenizer.source.id(word));
  Tensor sources(DType::I32, {1, 3});
  std::copy(source.begin(), source.end(), sources.as<int32_t>());
  writeNpy(dir.file("src.npy"), sources);
  for (const char *beam : {"1", "2"}) {
    Result translate = drivePad3(
        {"translate", "--load", ckpt, "--beam", beam, "i like pizza"});
    ASSERT_EQ(translate.code, 0) << translate.err;
    Result bench = drivePad3(
        {"bench", "--load", ckpt, "--sources", dir.file("src.npy"),
         "--decode-only", "--tgt-len", "6", "--threads", "1", "--beam", beam,
         std::string(beam) == std::string("1") ? "--decode-out" : "--beam-out",
         dir.file("out.npy")});
    ASSERT_EQ(bench.code, 0) << bench.err;
    Tensor tokens = readNpy(dir.file("out.npy"));
    std::string words;
    for (int64_t i = 0; i < tokens.numElements(); ++i) {
      const int32_t id = tokens.as<int32_t>()[i];
      if (id == tokenizer.target.eosId())
        break;
      words += (words.empty() ? "" : " ") + tokenizer.target.word(id);
    }
    EXPECT_EQ(words + "\n", translate.out) << "--beam " << beam;
  }
}

TEST_F(TrainingTest, BenchOnADeviceDecodesTheCpusTokens) {
  for (const char *side : {"cpu", "dev"}) {
    auto run = std::string(side) == "cpu" ? drive : driveOnFakeDevice;
    Result bench = run({"bench", "--seed", "2", "--steps", "2", "--batch",
                        "2", "--src-len", "3", "--tgt-len", "4", "--beam",
                        "2", "--decode-out",
                        dir.file(std::string(side) + "-greedy.npy"),
                        "--beam-out",
                        dir.file(std::string(side) + "-beam.npy")});
    ASSERT_EQ(bench.code, 0) << side << ": " << bench.err;
    EXPECT_NE(bench.out.find("the tokens of one at a time"), std::string::npos)
        << bench.out;
    EXPECT_EQ(bench.out.find("CUDA graphs:") != std::string::npos,
              std::string(side) == "dev")
        << bench.out;
  }
  EXPECT_EQ(readFile(dir.file("cpu-greedy.npy")),
            readFile(dir.file("dev-greedy.npy")));
  EXPECT_EQ(readFile(dir.file("cpu-beam.npy")),
            readFile(dir.file("dev-beam.npy")));
}

TEST_F(TrainingTest, RunOnADeviceGivesTheCpusResults) {
  writeFixedBatch(dir);
  auto args = [&](const std::string &entry, const std::string &side,
                  std::vector<std::string> extra) {
    std::vector<std::string> all = {
        "run", entry, "--init", "3", "src=" + dir.file("src.txt"),
        "tgt_in=" + dir.file("in.txt"), "tgt_out=" + dir.file("out.txt"),
        "--out-dir", dir.file(side)};
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  for (const char *side : {"cpu", "dev"}) {
    auto run = std::string(side) == "cpu" ? drive : driveOnFakeDevice;
    Result grads = run(args("train_grad", side,
                            {"--save-grads", dir.file(std::string(side) +
                                                      "-g.safetensors")}));
    ASSERT_EQ(grads.code, 0) << side << ": " << grads.err;
    Result steps = run(args("train", std::string(side) + "-steps",
                            {"--repeat", "2", "--save",
                             dir.file(std::string(side) + "-c.safetensors")}));
    ASSERT_EQ(steps.code, 0) << side << ": " << steps.err;
    EXPECT_NE(steps.err.find("ran 'train' 2 times"), std::string::npos)
        << steps.err;
    EXPECT_NE(steps.out.find("Adam's moments and step 2"), std::string::npos)
        << steps.out;
  }
  EXPECT_EQ(readFile(dir.file("cpu/loss.npy")),
            readFile(dir.file("dev/loss.npy")));
  for (const char *name : {"out.bias", "out.weight"}) {
    EXPECT_EQ(tensorValues(dir.file("cpu-g.safetensors"), name),
              tensorValues(dir.file("dev-g.safetensors"), name))
        << name;
    for (const std::string suffix : {"", ".exp_avg", ".exp_avg_sq"})
      EXPECT_EQ(tensorValues(dir.file("cpu-c.safetensors"), name + suffix),
                tensorValues(dir.file("dev-c.safetensors"), name + suffix))
          << name << suffix;
  }
  // What only the CPU path has is refused by name on a device.
  Result profiled = driveOnFakeDevice(args("train", "p", {"--profile"}));
  EXPECT_EQ(profiled.code, 2);
  EXPECT_NE(profiled.err.find("--profile times the CPU's runtime calls"),
            std::string::npos)
      << profiled.err;
}

// --allow-tf32 (PyTorch's allow_tf32) reaches the device of every command
// and only when given; the CPU refuses it by name, exit 2, before any work.
TEST_F(TrainingTest, AllowTf32ReachesTheDeviceAndIsRefusedOnTheCpu) {
  writeFile(dir.file("src.txt"), "4 5 6\n7 8\n");
  auto encode = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "encode", "--init", "1",
                                     "src=" + dir.file("src.txt"),
                                     "--out-dir", dir.path()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  fakeDeviceCounts() = {};
  Result allowed = driveOnFakeDevice(encode({"--allow-tf32"}));
  ASSERT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_GT(fakeDeviceCounts().tf32Allowed, 0);
  EXPECT_EQ(fakeDeviceCounts().tf32Allowed, fakeDeviceCounts().opened);
  fakeDeviceCounts() = {};
  Result strict = driveOnFakeDevice(encode({}));
  ASSERT_EQ(strict.code, 0) << strict.err;
  EXPECT_GT(fakeDeviceCounts().opened, 0);
  EXPECT_EQ(fakeDeviceCounts().tf32Allowed, 0);
  Result cpu = drive(encode({"--allow-tf32"}));
  EXPECT_EQ(cpu.code, 2);
  EXPECT_NE(cpu.err.find("error: --allow-tf32: this run is on the CPU"),
            std::string::npos)
      << cpu.err;
  EXPECT_EQ(cpu.err.find("ran '"), std::string::npos);
}
