//===- TrainingSafetyTest.cpp - what train never loses or corrupts --------===//
//
// The guarantees of train / eval / translate when things go wrong, on the
// fake seq2seq model (in-process, and as the fake-seq2seq process where a
// file size limit or a hang is involved):
//
//  - a checkpoint and its tokenizer change together (the tokenizer is
//    inside the checkpoint): a stale or foreign tokenizer beside it, a full
//    disk during a save or a --tokenizer that differs never pair new ids
//    with old weights;
//  - nothing non-finite is saved: an update that makes a parameter or an
//    Adam moment NaN or infinite stops the run, naming the step and the
//    tensor, and the last save stays;
//  - a corrupt checkpoint (NaN weights, an absurd step) is refused when it
//    is loaded;
//  - the loss curve is written before each checkpoint, so a run that ends
//    between the two (killed, or a failed write) resumes with every row;
//  - outputs never replace inputs, each other, or non-regular files, a
//    directory that takes no new file fails the run before the first
//    step, and --data on a FIFO fails instead of blocking.
//
//===----------------------------------------------------------------------===//
#include "commands/Driver.h"
#include "formats/FileIO.h"
#include "formats/Safetensors.h"
#include "TestUtil.h"

#include "txrt/txrt.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" const char fake_seq2seq_json[];
extern "C" const txc_entry_fn fake_seq2seq_entry_table[];

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

using Result = DriverResult;

Result driveWith(const txc_entry_fn *table, std::vector<std::string> args) {
  return runDriverCaptured("fake-seq2seq", args, fake_seq2seq_json, table);
}

/// The fake-seq2seq executable with `args` (already quoted), stdout and
/// stderr together.
CommandResult runFake(const std::string &args, const std::string &prefix = "") {
  return runShell(prefix + shellQuote(TXRT_DRIVER_FAKE_SEQ2SEQ) + " " + args);
}

constexpr const char *kSafetyData = "i love you\tte amo\n"
                                    "you love me\tme amas\n"
                                    "i see you\tte veo\n"
                                    "you see me\tme ves\n"
                                    "i like pizza\tme gusta pizza\n"
                                    "you like cake\tte gusta pastel\n"
                                    "i eat pizza\tyo como pizza\n"
                                    "you eat cake\ttú comes pastel\n";

/// Other words, so a tokenizer built from it numbers words differently.
constexpr const char *kOtherData = "the cat eats fish\tel gato come pescado\n"
                                   "the dog eats meat\tel perro come carne\n"
                                   "a cat sees a dog\tun gato ve un perro\n";

/// Every tensor and the metadata of a safetensors file, to edit and write
/// back.
struct SafetensorsContent {
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> values;
  SafetensorsMetadata metadata;

  explicit SafetensorsContent(const std::string &path) {
    SafetensorsReader file(path);
    for (const SafetensorsEntry &entry : file.tensors()) {
      names.push_back(entry.name);
      shapes.push_back(entry.shape);
      values.emplace_back((entry.end - entry.begin) / sizeof(float));
      file.read(entry, values.back().data());
    }
    metadata = file.metadata();
  }
  std::vector<float> &tensor(const std::string &name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name)
        return values[i];
    throw std::runtime_error("no tensor " + name);
  }
  void set(const std::string &key, const std::string &value) {
    for (auto &[name, text] : metadata)
      if (name == key)
        text = value;
  }
  void erase(const std::string &key) {
    metadata.erase(
        std::remove_if(metadata.begin(), metadata.end(),
                       [&](auto &item) { return item.first == key; }),
        metadata.end());
  }
  void write(const std::string &path) const {
    std::vector<SafetensorsTensorView> views;
    for (size_t i = 0; i < names.size(); ++i)
      views.push_back({names[i], DType::F32, shapes[i], values[i].data()});
    writeSafetensors(path, views, metadata);
  }
};

/// Files in `dir` whose name contains ".tmp".
std::vector<std::string> temporaries(const std::string &dir) {
  std::vector<std::string> found;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp") != std::string::npos)
      found.push_back(entry.path().filename().string());
  return found;
}

class TrainingSafetyTest : public ::testing::Test {
protected:
  void SetUp() override {
    writeFile(data(), kSafetyData);
    writeFile(other(), kOtherData);
  }
  std::string data() const { return dir.file("train.tsv"); }
  std::string other() const { return dir.file("other.tsv"); }
  std::string ckpt() const { return dir.file("ckpt.safetensors"); }
  std::string copy() const { return dir.file("ckpt.tokenizer.json"); }

  /// Trains on the toy data into ckpt() and returns its translations.
  std::string trainAndTranslate() {
    Result train = drive({"train", "--data", data(), "--steps", "60", "--batch",
                          "4", "--save", ckpt(), "--threads", "1"});
    EXPECT_EQ(train.code, 0) << train.err;
    return translate();
  }
  std::string translate(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"translate", "--load", ckpt(),
                                     "i love you", "you eat cake"};
    args.insert(args.end(), extra.begin(), extra.end());
    Result result = drive(args);
    EXPECT_EQ(result.code, 0) << result.err;
    return result.out;
  }

  ScratchDir dir;
};

//===----------------------------------------------------------------------===//
// A checkpoint and its tokenizer change together
//===----------------------------------------------------------------------===//

TEST_F(TrainingSafetyTest, AnAverageWithoutItsDecayIsNotDroppedOnResume) {
  // A --ema checkpoint edited to lose 'ema_decay' (checksums removed too):
  // translate and eval used its average, while --resume without --ema
  // wrote the next checkpoint without it, exit 0.
  Result first = drive({"train", "--data", data(), "--steps", "2", "--ema",
                        "0.5", "--save", ckpt(), "--quiet"});
  ASSERT_EQ(first.code, 0) << first.err;
  SafetensorsContent edited(ckpt());
  edited.erase("ema_decay");
  edited.write(ckpt());
  const std::string before = readFile(ckpt());
  Result resumed = drive({"train", "--data", data(), "--resume", ckpt(),
                          "--steps", "3", "--quiet"});
  EXPECT_EQ(resumed.code, 2);
  EXPECT_NE(resumed.err.find("error: '" + ckpt() +
                             "' holds a weight average (__ema.* tensors) but "
                             "no 'ema_decay' in its __metadata__: the file "
                             "was edited or damaged. Give --ema DECAY to "
                             "continue the average, or remove its __ema.* "
                             "tensors to train without one\n"),
            std::string::npos)
      << resumed.err;
  EXPECT_TRUE(readFile(ckpt()) == before);
  // With --ema the average continues.
  Result given = drive({"train", "--data", data(), "--resume", ckpt(),
                        "--steps", "3", "--ema", "0.5", "--quiet"});
  EXPECT_EQ(given.code, 0) << given.err;
}

TEST_F(TrainingSafetyTest, StaleTokenizerBesideTheCheckpointIsNotUsed) {
  std::string before = trainAndTranslate();
  // What a run killed between writing the tokenizer and the checkpoint (or
  // a file copied in by hand) leaves beside it: another run's tokenizer.
  Result otherRun = drive({"train", "--data", other(), "--steps", "2", "--save",
                           dir.file("other.safetensors")});
  ASSERT_EQ(otherRun.code, 0) << otherRun.err;
  writeFile(copy(), readFile(dir.file("other.tokenizer.json")));

  EXPECT_EQ(translate(), before);
  Result eval = drive({"eval", "--load", ckpt(), "--data", data()});
  EXPECT_EQ(eval.code, 0) << eval.err;
  EXPECT_NE(eval.out.find("accuracy   "), std::string::npos);
}

TEST_F(TrainingSafetyTest, TokenizerThatDiffersFromTheCheckpointsIsRefused) {
  trainAndTranslate();
  drive({"train", "--data", other(), "--steps", "2", "--save",
         dir.file("other.safetensors")});
  Result result = drive({"translate", "--load", ckpt(), "--tokenizer",
                         dir.file("other.tokenizer.json"), "i love you"});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("error: --tokenizer '" +
                            dir.file("other.tokenizer.json") +
                            "' does not match the tokenizer stored inside '" +
                            ckpt() + "'"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.out, "");
  // The same tokenizer is accepted.
  EXPECT_EQ(drive({"translate", "--load", ckpt(), "--tokenizer", copy(),
                   "i love you"})
                .code,
            0);
}

TEST_F(TrainingSafetyTest, ResumeRefusesTokenizerOptionsItWouldIgnore) {
  // A resumed run keeps the checkpoint's tokenizer; before, --min-freq 2 or
  // --tokenizer spm given with --resume were ignored without a word.
  trainAndTranslate();
  std::string saved = readFile(ckpt());
  auto resume = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--data", data(), "--resume",
                                     ckpt(),  "--save", ckpt(), "--steps",
                                     "62",    "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return drive(args);
  };
  Result minFreq = resume({"--min-freq", "2"});
  EXPECT_EQ(minFreq.code, 2);
  EXPECT_EQ(minFreq.err,
            "error: --min-freq 2 does not match '" + ckpt() +
                "': it holds word-level vocabularies (--min-freq 1), which a "
                "resumed run keeps (the checkpoint's weights are trained on "
                "its ids); leave out --min-freq, or train a new run without "
                "--resume\n");
  Result spm = resume({"--tokenizer", "spm"});
  EXPECT_EQ(spm.code, 2);
  EXPECT_NE(spm.err.find("error: --tokenizer spm does not match '" + ckpt() +
                         "': it holds word-level vocabularies"),
            std::string::npos)
      << spm.err;
  EXPECT_TRUE(readFile(ckpt()) == saved);
  // Options that say what the checkpoint holds are fine.
  Result same = resume({"--min-freq", "1", "--tokenizer", "word"});
  EXPECT_EQ(same.code, 0) << same.err;
}

TEST_F(TrainingSafetyTest, CheckpointsFromBeforeTheInnerTokenizerStillLoad) {
  std::string before = trainAndTranslate();
  SafetensorsContent old(ckpt());
  old.erase("tokenizer");
  old.write(ckpt());
  Result result =
      drive({"translate", "--load", ckpt(), "i love you", "you eat cake"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, before);
  EXPECT_NE(result.err.find("note: '" + ckpt() + "' has no tokenizer inside"),
            std::string::npos)
      << result.err;
  Result resume = drive({"train", "--data", data(), "--resume", ckpt(),
                         "--steps", "61", "--quiet"});
  EXPECT_EQ(resume.code, 0) << resume.err;
}

TEST_F(TrainingSafetyTest, FullDiskKeepsTheCheckpointAndItsTokenizer) {
  std::string before = trainAndTranslate();
  std::string saved = readFile(ckpt()), savedCopy = readFile(copy());
  // 4 blocks of 512 bytes: the new tokenizer fits, the checkpoint does not.
  CommandResult full =
      runFake("train --data " + shellQuote(other()) + " --steps 3 --save " +
                  shellQuote(ckpt()) + " --overwrite --threads 1",
              "trap '' XFSZ; ulimit -f 4; ");
  EXPECT_EQ(full.exitCode, 1) << full.out;
  EXPECT_NE(full.out.find("error: cannot write '" + ckpt() +
                          "': File too large ('" + ckpt() +
                          "' is left as it was)"),
            std::string::npos)
      << full.out;
  EXPECT_TRUE(readFile(ckpt()) == saved);
  EXPECT_EQ(readFile(copy()), savedCopy);
  EXPECT_EQ(temporaries(dir.path()), std::vector<std::string>{});
  EXPECT_EQ(translate(), before);
}

//===----------------------------------------------------------------------===//
// Nothing non-finite is saved
//===----------------------------------------------------------------------===//

/// Where the fake model keeps out.bias and out.weight's exp_avg_sq (floats
/// from the start of the parameter arena; FakeSeq2Seq.cpp's metadata).
constexpr int64_t kOutBias = 1920 / 4, kOutWeightExpAvgSq = 7280 / 4;

/// The fake's train entry, then `corrupt` on the arena after the update of
/// step kCorruptStep (the loss it returns is still the finite one).
int64_t gCorruptAt = 0;
int64_t gCorruptStep = 0;
int32_t corruptingTrain(void *ctx, void *params, void *arena,
                        const int64_t *dims, void *const *inputs,
                        void *const *outputs) {
  int32_t status =
      fake_seq2seq_entry_table[0](ctx, params, arena, dims, inputs, outputs);
  if (txrt_context_train_step(static_cast<txrt_context *>(ctx)) == gCorruptStep)
    static_cast<float *>(params)[gCorruptAt] = INFINITY;
  return status;
}
const txc_entry_fn kCorruptingTable[] = {
    corruptingTrain, fake_seq2seq_entry_table[1], fake_seq2seq_entry_table[2],
    fake_seq2seq_entry_table[3]};

bool allFinite(const std::string &path) {
  SafetensorsContent content(path);
  for (const std::vector<float> &values : content.values)
    for (float value : values)
      if (!std::isfinite(value))
        return false;
  return true;
}

std::string metadataValue(const std::string &path, const std::string &key) {
  SafetensorsReader file(path);
  for (const auto &[name, value] : file.metadata())
    if (name == key)
      return value;
  return "";
}

TEST_F(TrainingSafetyTest, UpdateThatMakesAParameterInfiniteIsNeverSaved) {
  gCorruptAt = kOutBias + 3;
  gCorruptStep = 3;
  Result result =
      driveWith(kCorruptingTable,
                {"train", "--data", data(), "--steps", "6", "--batch", "4",
                 "--every", "1", "--save", ckpt(), "--threads", "1"});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("error: the update of step 3 made 'out.bias' "
                            "non-finite (inf at [3]; the loss before it was "),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("stopping without saving ('" + ckpt() +
                            "' keeps its save of step 2)"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(allFinite(ckpt()));
  EXPECT_EQ(metadataValue(ckpt(), "step"), "2");
}

TEST_F(TrainingSafetyTest, InfiniteAdamMomentIsNeverSaved) {
  // The parameters stay finite (the update divides by sqrt(inf)), so the
  // loss never shows it: only a scan of the moments does.
  gCorruptAt = kOutWeightExpAvgSq + 5;
  gCorruptStep = 2;
  Result result =
      driveWith(kCorruptingTable, {"train", "--data", data(), "--steps", "20",
                                   "--batch", "4", "--save", ckpt()});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("error: the update of step 2 made exp_avg_sq of "
                            "'out.weight' non-finite (inf at [0, 5]"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("(nothing was saved to '" + ckpt() + "')"),
            std::string::npos)
      << result.err;
  EXPECT_FALSE(std::filesystem::exists(ckpt()));
}

//===----------------------------------------------------------------------===//
// Corrupt checkpoints are refused when loaded
//===----------------------------------------------------------------------===//

TEST_F(TrainingSafetyTest, NonFiniteCheckpointIsRefusedAtLoad) {
  trainAndTranslate();
  SafetensorsContent corrupt(ckpt());
  corrupt.tensor("tgt_embed.weight")[8 * 3 + 1] = NAN;
  corrupt.tensor("src_embed.weight.exp_avg")[2] = -INFINITY;
  corrupt.write(dir.file("nan.safetensors"));
  writeFile(dir.file("nan.tokenizer.json"), readFile(copy()));

  Result translate =
      drive({"translate", "--load", dir.file("nan.safetensors"), "i love you"});
  EXPECT_EQ(translate.code, 2);
  EXPECT_NE(translate.err.find("error: tensor 'tgt_embed.weight' in '" +
                               dir.file("nan.safetensors") +
                               "' holds a non-finite value (nan at [3, 1])"),
            std::string::npos)
      << translate.err;
  Result resume = drive({"train", "--data", data(), "--resume",
                         dir.file("nan.safetensors"), "--steps", "70"});
  EXPECT_EQ(resume.code, 2);
  EXPECT_NE(resume.err.find("holds a non-finite value"), std::string::npos)
      << resume.err;
}

TEST_F(TrainingSafetyTest, AbsurdResumeStepIsRefusedAtLoad) {
  trainAndTranslate();
  SafetensorsContent edited(ckpt());
  edited.set("step", "9223372036854775807");
  edited.write(ckpt());
  // A process with a time limit: an overflowing step count would loop.
  CommandResult result =
      runFake("train --data " + shellQuote(data()) + " --resume " +
                  shellQuote(ckpt()) + " --steps 100 --threads 1",
              "timeout 60 ");
  EXPECT_EQ(result.exitCode, 2) << result.out;
  EXPECT_NE(result.out.find("has an invalid __metadata__ 'step': "
                            "9223372036854775807 is more than 1099511627776"),
            std::string::npos)
      << result.out;
}

TEST_F(TrainingSafetyTest, AbsurdResumeUpdateFreqIsRefusedAtLoad) {
  // --update-freq's own limit: 1e9 from an edited checkpoint grew memory
  // until the process was killed (SIGTERM did not stop it).
  trainAndTranslate();
  SafetensorsContent edited(ckpt());
  edited.set("update_freq", "1000000000");
  edited.write(ckpt());
  CommandResult result =
      runFake("train --data " + shellQuote(data()) + " --resume " +
                  shellQuote(ckpt()) + " --steps 100 --threads 1",
              "timeout 60 ");
  EXPECT_EQ(result.exitCode, 2) << result.out;
  EXPECT_NE(result.out.find("has an invalid __metadata__ 'update_freq': "
                            "1000000000 is more than 65536"),
            std::string::npos)
      << result.out;
}

//===----------------------------------------------------------------------===//
// Outputs never replace inputs, each other or non-regular files
//===----------------------------------------------------------------------===//

// A new run (no --resume of it) never replaces a training checkpoint
// unasked: its steps, moments, tokenizer and loss curve stay as they were,
// whether the run starts anew, from --init-from's weights or resumes
// another checkpoint. --resume C continues it; --overwrite replaces it.
TEST_F(TrainingSafetyTest, ANewRunDoesNotReplaceACheckpointUnasked) {
  trainAndTranslate(); // 60 steps
  const std::string saved = readFile(ckpt()), savedCopy = readFile(copy()),
                    curve = readFile(dir.file("ckpt.loss.csv"));
  const std::string other = dir.file("other.safetensors");
  Result seed = drive({"train", "--data", data(), "--steps", "2", "--batch",
                       "4", "--save", other, "--threads", "1", "--quiet"});
  ASSERT_EQ(seed.code, 0) << seed.err;
  const std::vector<std::pair<std::vector<std::string>, std::string>> runs = {
      {{}, "starts anew"},
      {{"--init-from", other}, "starts from --init-from's weights"},
      {{"--resume", other}, "resumes another"}};
  for (const auto &[extra, how] : runs) {
    std::vector<std::string> args = {"train", "--data", data(), "--steps",
                                     "5",     "--save", ckpt()};
    args.insert(args.end(), extra.begin(), extra.end());
    Result result = drive(args);
    EXPECT_EQ(result.code, 2) << how;
    EXPECT_EQ(result.err,
              "error: --save '" + ckpt() +
                  "' is a training checkpoint already (model "
                  "'fake_seq2seq', step 60) and this run " +
                  how + ": saving would replace it. --resume '" + ckpt() +
                  "' continues it, --overwrite replaces it, or --save to "
                  "another file\n");
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(readFile(ckpt()), saved) << how;
    EXPECT_EQ(readFile(copy()), savedCopy) << how;
    EXPECT_EQ(readFile(dir.file("ckpt.loss.csv")), curve) << how;
  }
  // Continuing it is what --resume is for.
  Result resumed = drive({"train", "--data", data(), "--resume", ckpt(),
                          "--steps", "62", "--save", ckpt(), "--quiet"});
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  // --overwrite replaces it; a safetensors file that is not a training
  // checkpoint (parameters only) is replaced as before, a file of another
  // kind (a spec, the data) is refused and kept.
  Result replaced = drive({"train", "--data", data(), "--steps", "3", "--batch",
                           "4", "--save", ckpt(), "--overwrite", "--quiet"});
  EXPECT_EQ(replaced.code, 0) << replaced.err;
  SafetensorsReader file(ckpt());
  ASSERT_NE(file.metadataValue("step"), nullptr);
  EXPECT_EQ(*file.metadataValue("step"), "3");
  writeFile(other, "not a checkpoint");
  Result onOther = drive({"train", "--data", data(), "--steps", "2", "--batch",
                          "4", "--save", other, "--quiet"});
  EXPECT_EQ(onOther.code, 2) << onOther.err;
  EXPECT_EQ(readFile(other), "not a checkpoint");
  std::filesystem::remove(other);
  Result parameters = drive({"export", other, "--load", ckpt()});
  ASSERT_EQ(parameters.code, 0) << parameters.err;
  // (The first run's curve is still beside it: a new run's would replace
  // it, and is refused as a --log over it is.)
  Result onCurve = drive({"train", "--data", data(), "--steps", "2", "--batch",
                          "4", "--save", other, "--quiet"});
  EXPECT_EQ(onCurve.code, 2) << onCurve.err;
  EXPECT_NE(onCurve.err.find("the loss curve of --save '" +
                             dir.file("other.loss.csv") +
                             "' holds a loss curve already"),
            std::string::npos)
      << onCurve.err;
  std::filesystem::remove(dir.file("other.loss.csv"));
  Result onParameters = drive({"train", "--data", data(), "--steps", "2",
                               "--batch", "4", "--save", other, "--quiet"});
  EXPECT_EQ(onParameters.code, 0) << onParameters.err;

  // --keep-best's C.best.safetensors is another run's too: a new run with
  // --save C --keep-best would replace it at its first validation, though
  // C itself is gone.
  const std::string kept = dir.file("k.safetensors"),
                    best = dir.file("k.best.safetensors");
  std::vector<std::string> keepBest = {
      "train",   "--data", data(),   "--steps",   "2",         "--batch",
      "4",       "--save", kept,     "--valid",   data(),      "--valid-every",
      "1",       "--keep-best", "--quiet"};
  Result first = drive(keepBest);
  ASSERT_EQ(first.code, 0) << first.err;
  const std::string bestBytes = readFile(best);
  std::filesystem::remove(kept);
  Result again = drive(keepBest);
  EXPECT_EQ(again.code, 2);
  EXPECT_EQ(again.err, "error: the --keep-best checkpoint '" + best +
                           "' of --save is another run's best already (model "
                           "'fake_seq2seq', step 1) and this run starts "
                           "anew: its first validation would replace it. "
                           "--overwrite replaces it, or --save to another "
                           "file\n");
  EXPECT_EQ(readFile(best), bestBytes);
  keepBest.push_back("--overwrite");
  Result replacedBest = drive(keepBest);
  EXPECT_EQ(replacedBest.code, 0) << replacedBest.err;
}

TEST_F(TrainingSafetyTest, SaveAndLogOnOneFileAreRefusedBeforeTraining) {
  // A file that is no checkpoint: no other refusal than the collision's.
  writeFile(ckpt(), "");
  Result result = drive({"train", "--data", data(), "--steps", "2", "--save",
                         ckpt(), "--log", ckpt()});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err, "error: --log '" + ckpt() +
                            "' is the same file as --save '" + ckpt() +
                            "'; each output needs its own file\n");
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(readFile(ckpt()), "");

  // A file derived from --save (the tokenizer copy) counts too.
  Result derived = drive({"train", "--data", data(), "--steps", "2", "--save",
                          ckpt(), "--log", copy()});
  EXPECT_EQ(derived.code, 2);
  EXPECT_NE(derived.err.find("error: --log '" + copy() +
                             "' is the same file as the tokenizer copy of "
                             "--save"),
            std::string::npos)
      << derived.err;
}

TEST_F(TrainingSafetyTest, OutputsOntoTheDataAreRefused) {
  std::filesystem::create_symlink(data(), dir.file("link.tsv"));
  std::filesystem::create_hard_link(data(), dir.file("hard.tsv"));
  const std::vector<std::vector<std::string>> cases = {
      {"--save", data()},
      {"--log", data()},
      {"--log", dir.file("link.tsv")},
      {"--save", dir.file("hard.tsv")},
      {"--save", dir.file("./train.tsv")},
  };
  for (const auto &flags : cases) {
    SCOPED_TRACE(flags[0] + " " + flags[1]);
    std::vector<std::string> args = {"train", "--data", data(), "--steps", "2"};
    args.insert(args.end(), flags.begin(), flags.end());
    Result result = drive(args);
    EXPECT_EQ(result.code, 2);
    EXPECT_NE(result.err.find("' is the same file as --data '" + data() +
                              "'; writing it would destroy the input"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(readFile(data()), kSafetyData);
  }
}

TEST_F(TrainingSafetyTest,
       UnwritableOutputDirectoriesAreRefusedBeforeTraining) {
  // Root may write anywhere: /sys refuses new files even to root.
  std::string readOnly = dir.file("ro");
  ASSERT_EQ(mkdir(readOnly.c_str(), 0555), 0);
  if (access(readOnly.c_str(), W_OK) == 0)
    readOnly = "/sys";
  std::string probe = readOnly + "/probe";
  int fd = open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd >= 0) {
    close(fd);
    unlink(probe.c_str());
    GTEST_SKIP() << "no directory here refuses new files";
  }
  Result save = drive({"train", "--data", data(), "--steps", "2", "--save",
                       readOnly + "/c.safetensors"});
  EXPECT_EQ(save.code, 2);
  EXPECT_EQ(save.err, "error: --save '" + readOnly +
                          "/c.safetensors' cannot be written: creating a "
                          "file in '" +
                          readOnly + "' fails: Permission denied\n");
  EXPECT_EQ(save.out, "");
  // --log too, and the outputs in a writable directory stay untouched.
  Result log = drive({"train", "--data", data(), "--steps", "2", "--every", "1",
                      "--save", ckpt(), "--log", readOnly + "/l.csv"});
  EXPECT_EQ(log.code, 2);
  EXPECT_NE(log.err.find("error: --log '" + readOnly +
                         "/l.csv' cannot be written"),
            std::string::npos)
      << log.err;
  EXPECT_FALSE(std::filesystem::exists(ckpt()));
}

TEST_F(TrainingSafetyTest, SaveOntoAFifoIsRefused) {
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0644), 0);
  Result result = drive(
      {"train", "--data", data(), "--steps", "2", "--save", dir.file("fifo")});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("error: --save: cannot write '" + dir.file("fifo") +
                            "': it is a FIFO (named pipe), not a regular file"),
            std::string::npos)
      << result.err;
  struct stat info;
  ASSERT_EQ(stat(dir.file("fifo").c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST_F(TrainingSafetyTest, DataOnAFifoFailsInsteadOfBlocking) {
  ASSERT_EQ(mkfifo(dir.file("fifo.tsv").c_str(), 0644), 0);
  CommandResult result =
      runFake("train --data " + shellQuote(dir.file("fifo.tsv")) + " --steps 2",
              "timeout 60 ");
  EXPECT_EQ(result.exitCode, 2) << result.out;
  EXPECT_NE(result.out.find("error: cannot read '" + dir.file("fifo.tsv") +
                            "': it is a FIFO (named pipe), not a regular "
                            "file"),
            std::string::npos)
      << result.out;
}

TEST_F(TrainingSafetyTest, ConcurrentWritersOfOneFileDoNotCollide) {
  std::string target = dir.file("out.bin");
  AtomicFileWriter first(target), second(target);
  first.write(std::string(1000, 'a'));
  second.write(std::string(10, 'b'));
  first.commit();
  EXPECT_EQ(readFile(target), std::string(1000, 'a'));
  second.commit();
  EXPECT_EQ(readFile(target), std::string(10, 'b'));
  EXPECT_EQ(temporaries(dir.path()), std::vector<std::string>{});
}

TEST_F(TrainingSafetyTest, TemporariesOfKilledWritersAreRemoved) {
  // A process that has exited: its pid no longer runs.
  CommandResult child = runShell("sh -c 'echo $$'");
  long deadPid = std::stol(child.out);
  std::string stale =
      ckpt() + ".tmp." + std::to_string(deadPid) + ".0123456789abcdef";
  writeFile(stale, "half a checkpoint");
  // One of a writer that still runs (this process) is left alone.
  std::string live =
      ckpt() + ".tmp." + std::to_string(long(getpid())) + ".fedcba9876543210";
  writeFile(live, "being written");
  Result train =
      drive({"train", "--data", data(), "--steps", "2", "--save", ckpt()});
  ASSERT_EQ(train.code, 0) << train.err;
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
}

//===----------------------------------------------------------------------===//
// A resumed run says what differs from the run it continues
//===----------------------------------------------------------------------===//

TEST_F(TrainingSafetyTest, ResumeNotesAModelCompiledOtherwise) {
  // The tensors' checks pass whenever the shapes do, so a model recompiled
  // with another config (txc -D warmup=50, an edited optimizer) resumed
  // without a word before; the checkpoint now records both.
  Result first = drive(
      {"train", "--data", data(), "--steps", "2", "--save", ckpt(), "--quiet"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(metadataValue(ckpt(), "config"),
            "{\"d_model\":8,\"src_vocab\":20,\"tgt_vocab\":20,"
            "\"max_len\":7,\"batch\":8,\"pad\":0,"
            "\"label_smoothing\":0.0}");
  EXPECT_EQ(metadataValue(ckpt(), "optimizer"),
            "adam(lr = 0.05, beta1 = 0.9, beta2 = 0.98, eps = 1e-09)");
  auto resume = [&] {
    return drive({"train", "--data", data(), "--resume", ckpt(), "--steps", "3",
                  "--quiet"});
  };
  Result same = resume();
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.err.find("differs"), std::string::npos) << same.err;

  SafetensorsContent edited(ckpt());
  edited.set("config", "{\"d_model\":8,\"src_vocab\":20,\"tgt_vocab\":20,"
                       "\"max_len\":7,\"batch\":8,\"pad\":0,"
                       "\"label_smoothing\":0.1,\"warmup\":4000}");
  edited.write(ckpt());
  Result config = resume();
  ASSERT_EQ(config.code, 0) << config.err;
  EXPECT_NE(config.err.find("note: the model's config (label_smoothing = 0.0 "
                            "(was 0.1), warmup (was 4000) is gone) differs "
                            "from the checkpoint's; the run will not match "
                            "an uninterrupted one\n"),
            std::string::npos)
      << config.err;

  edited.set("config", "{\"d_model\":8,\"src_vocab\":20,\"tgt_vocab\":20,"
                       "\"max_len\":7,\"batch\":8,\"pad\":0,"
                       "\"label_smoothing\":0.0}");
  edited.set("optimizer",
             "adam(lr = 0.01, beta1 = 0.9, beta2 = 0.98, eps = 1e-09)");
  edited.write(ckpt());
  Result optimizer = resume();
  ASSERT_EQ(optimizer.code, 0) << optimizer.err;
  EXPECT_NE(optimizer.err.find("note: the optimizer adam(lr = 0.05, beta1 = "
                               "0.9, beta2 = 0.98, eps = 1e-09) differs from "
                               "the checkpoint's"),
            std::string::npos)
      << optimizer.err;
  // Both changed: both noted (the config's note hid the optimizer's).
  edited.set("config", "{\"d_model\":8,\"src_vocab\":20,\"tgt_vocab\":20,"
                       "\"max_len\":7,\"batch\":8,\"pad\":0,"
                       "\"label_smoothing\":0.1}");
  edited.write(ckpt());
  Result both = resume();
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_NE(both.err.find("note: the model's config (label_smoothing = 0.0 "
                          "(was 0.1)) differs"),
            std::string::npos)
      << both.err;
  EXPECT_NE(both.err.find("note: the optimizer adam(lr = 0.05, beta1 = 0.9, "
                          "beta2 = 0.98, eps = 1e-09) differs from the "
                          "checkpoint's"),
            std::string::npos)
      << both.err;

  edited.set("config", "[1, 2]");
  edited.write(ckpt());
  Result bad = resume();
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: '" + ckpt() +
                         "' has an invalid __metadata__ 'config' (not a JSON "
                         "object)\n");
}

//===----------------------------------------------------------------------===//
// An interrupted run loses no row of its loss curve
//===----------------------------------------------------------------------===//

/// The fake's train entry; at step gBlockCopyStep it puts a non-empty
/// directory where the checkpoint's tokenizer copy goes, so the next save
/// writes the checkpoint and then fails, as a kill between the two would
/// end it.
int64_t gBlockCopyStep = 0;
std::string gBlockedCopy;
int32_t copyBlockingTrain(void *ctx, void *params, void *arena,
                          const int64_t *dims, void *const *inputs,
                          void *const *outputs) {
  if (txrt_context_train_step(static_cast<txrt_context *>(ctx)) ==
      gBlockCopyStep) {
    std::filesystem::remove(gBlockedCopy);
    std::filesystem::create_directory(gBlockedCopy);
    writeFile(gBlockedCopy + "/inside", "x");
  }
  return fake_seq2seq_entry_table[0](ctx, params, arena, dims, inputs, outputs);
}
const txc_entry_fn kCopyBlockingTable[] = {
    copyBlockingTrain, fake_seq2seq_entry_table[1], fake_seq2seq_entry_table[2],
    fake_seq2seq_entry_table[3]};

/// The steps of a loss curve CSV, in order.
std::vector<int64_t> curveSteps(const std::string &path) {
  std::vector<int64_t> steps;
  std::istringstream lines(readFile(path));
  std::string line;
  std::getline(lines, line); // the header
  while (std::getline(lines, line))
    steps.push_back(std::stoll(line.substr(0, line.find(','))));
  return steps;
}

TEST_F(TrainingSafetyTest, InterruptedSaveLosesNoRowOfTheLossCurve) {
  // Before, the curve was written after the checkpoint: a run that ended
  // between the two (a kill, a failed write) left a checkpoint of step 6
  // and a curve up to step 4, and the resumed run's curve skipped 5 and 6.
  gBlockCopyStep = 5;
  gBlockedCopy = copy();
  Result cut =
      driveWith(kCopyBlockingTable,
                {"train", "--data", data(), "--steps", "10", "--every", "2",
                 "--batch", "4", "--save", ckpt(), "--threads", "1"});
  ASSERT_NE(cut.code, 0) << cut.err;
  // The copies beside the checkpoint are written before it is replaced: the
  // failed copy leaves the checkpoint of step 4 (and its copies) as they
  // were; the curve has rows to step 6.
  EXPECT_EQ(metadataValue(ckpt(), "step"), "4");
  std::filesystem::remove_all(copy());
  Result resumed = drive({"train", "--data", data(), "--steps", "10", "--save",
                          ckpt(), "--resume", ckpt(), "--threads", "1"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  std::vector<int64_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(curveSteps(dir.file("ckpt.loss.csv")), expected);
}

} // namespace
