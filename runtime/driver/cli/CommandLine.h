//===- CommandLine.h - the driver's command-line grammar --------*- C++ -*-===//
//
//   PROGRAM info [--json]
//   PROGRAM run ENTRY [--load FILE | --init SEED] [--input [NAME=]FILE]...
//               [--out-dir DIR] [--threads N] [--dim NAME=N]... [--save FILE]
//               [[NAME=]FILE]...
//   PROGRAM train --data F.tsv [--steps N | --epochs N] [--batch N] ...
//   PROGRAM eval --load F --data F.tsv [...]
//   PROGRAM translate --load F [--beam N] [--max-len N] [--no-kv-cache] [SENTENCE...]
//   PROGRAM generate --load F [--temperature T] [--top-k K] [--top-p P] [PROMPT...]
//   PROGRAM predict --load F [TEXT...]
//   PROGRAM bench [--steps N] [--batch N] [...]
//   PROGRAM export W.safetensors --load FILE
//   PROGRAM help [COMMAND] | --help | COMMAND --help
//
// (the usage texts in CommandLine.cpp / CommandLineTraining.cpp list every
// option).
//
// Options take their value as the next argument or after '='
// (`--load=w.safetensors`). Parsing is pure: it checks the syntax and the
// number formats and throws UsageError (which prints the command's usage);
// whether ENTRY, input names and files exist is checked when running.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_COMMANDLINE_H
#define TXRT_DRIVER_COMMANDLINE_H

#include "loop/Profile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace txrt::driver {

/// `--input NAME=FILE` (name set) or `--input FILE` (name empty: the next
/// input of the entry in declaration order).
struct InputArg {
  std::string name;
  std::string path;
};

struct InfoOptions {
  bool json = false; ///< print the raw metadata JSON
  /// info --load CKPT: also where the checkpoint's training stands.
  std::optional<std::string> loadPath;
};

struct RunOptions {
  std::string entry;
  std::optional<std::string> loadPath;
  /// --no-ema: a forward entry runs the raw weights of a train --ema
  /// checkpoint, not their average.
  bool noEma = false;
  std::optional<uint64_t> initSeed;
  std::vector<InputArg> inputs;
  std::string outDir = ".";
  int32_t threads = 0; ///< 0: TXRT_NUM_THREADS or every core
  std::vector<std::pair<std::string, int64_t>> dims;
  std::optional<std::string> savePath;
  int32_t repeat = 1; ///< runs of the entry; timing reports min and median
  /// Training entries: after the call write every gradient here.
  std::optional<std::string> saveGradsPath;
  /// --step: the update number of the first run of a training entry
  /// (default: one past a loaded training checkpoint's step, else 1).
  std::optional<int64_t> trainStep;
  /// --seed: the dropout seed of a training entry (default: a loaded
  /// training checkpoint's, else 0).
  std::optional<uint64_t> trainSeed;
  ProfileOptions profile; ///< --profile* (loop/Profile.h)
};

struct TrainOptions {
  std::string dataPath; ///< --data (seq2seq, classifier)
  std::string textPath; ///< --text (language model)
  std::optional<int64_t> block; ///< --block: LM positions per block
  std::optional<int64_t> steps, epochs; ///< at most one
  /// --stop-time DURATION: stop cleanly after this many seconds of
  /// training (stopTimeText: as written, for messages).
  std::optional<double> stopSeconds;
  std::string stopTimeText;
  std::optional<int64_t> batch;         ///< default: the B bound
  /// --max-tokens N: batches of at most N padded tokens per side (rows
  /// capped by the B bound); excludes --batch.
  std::optional<int64_t> maxTokens;
  std::optional<uint64_t> seed;         ///< default 0 (or the checkpoint's)
  std::optional<int64_t> minFreq;       ///< default 1 (or the checkpoint's)
  std::optional<std::string> savePath, resumePath, logPath;
  int64_t every = 0; ///< checkpoint every N steps (0: only at the end)
  /// --overwrite: --save may replace a training checkpoint this run does
  /// not --resume (refused otherwise).
  bool overwrite = false;
  /// --update-freq: batches per update (default 1, or the checkpoint's)
  std::optional<int64_t> updateFreq;
  std::optional<uint64_t> initSeed;
  /// --init-from W.safetensors: parameters only (moments zero, step 0).
  std::optional<std::string> initFromPath;
  /// --no-ema: --init-from takes a train --ema checkpoint's raw weights,
  /// not their average.
  bool noEma = false;
  int32_t threads = 0;
  bool quiet = false; ///< no progress output
  bool verbose = false; ///< --verbose: what the stored corpus takes
  /// --tokenizer: "word" (default), "spm" (train a joint SentencePiece
  /// model), or a .model file to use.
  std::string tokenizer = "word";
  bool tokenizerGiven = false;      ///< --tokenizer was on the command line
  std::optional<int64_t> vocabSize; ///< --vocab-size (spm)
  /// --spm-type: "unigram" (the default when absent) or "bpe".
  std::optional<std::string> spmType;
  /// --valid FILE.tsv, validated every --valid-every N steps.
  std::optional<std::string> validPath;
  int64_t validEvery = 0;
  bool keepBest = false;   ///< --keep-best: CKPT.best.safetensors
  int64_t keepLast = 0;    ///< --keep-last N: CKPT.step-N.safetensors
  /// --best-by bleu|loss|accuracy; absent: the kind's default (seq2seq
  /// bleu, language models and classifiers loss).
  std::optional<std::string> bestBy;
  int64_t patience = 0;    ///< --patience P (0: never stop early)
  /// --ema DECAY in (0, 1): validate with and save an average of the
  /// weights (loop/Ema.h).
  std::optional<double> ema;
};

struct EvalOptions {
  std::string loadPath, dataPath;
  std::string textPath; ///< --text (language models)
  std::optional<std::string> tokenizerPath; ///< default: beside --load
  /// --labels: a classifier's label file (default: the labels inside)
  std::optional<std::string> labelsPath;
  std::optional<int64_t> batch, maxLength;
  /// --block: positions per block of --text (default: the checkpoint's
  /// training --block, else the T bound)
  std::optional<int64_t> block;
  bool noBleu = false;
  bool noEma = false; ///< --no-ema: the raw weights, not the average
  /// --truncate: a classifier's text longer than the T bound keeps its
  /// first T positions (else it is an error).
  bool truncate = false;
  int32_t threads = 0;
};

struct TranslateOptions {
  std::string loadPath;
  std::optional<std::string> tokenizerPath;
  std::optional<int64_t> batch, maxLength;
  int32_t beam = 1;
  double alpha = 0.6;
  bool kvCache = true; ///< --no-kv-cache: re-run the prefix every step
  bool noEma = false;  ///< --no-ema: the raw weights, not the average
  bool truncate = false; ///< --truncate: over-long sentences keep their start
  std::vector<std::string> sentences; ///< empty: read stdin
  int32_t threads = 0;
};

struct GenerateOptions {
  std::string loadPath;
  std::optional<std::string> tokenizerPath;
  std::optional<int64_t> batch;
  int64_t maxNewTokens = 20;
  double temperature = 0.0; ///< 0: greedy
  int64_t topK = 0;         ///< 0: no limit
  double topP = 1.0;
  uint64_t seed = 0;
  bool kvCache = true; ///< --no-cache: re-run the logits entry
  bool noEma = false;  ///< --no-ema: the raw weights, not the average
  /// --block: the tokens of context (default: the checkpoint's block)
  std::optional<int64_t> block;
  std::vector<std::string> prompts; ///< empty: read stdin
  int32_t threads = 0;
};

struct PredictOptions {
  std::string loadPath;
  std::optional<std::string> tokenizerPath;
  /// --labels: the label file (default: the labels inside)
  std::optional<std::string> labelsPath;
  std::optional<int64_t> batch;
  bool noEma = false; ///< --no-ema: the raw weights, not the average
  bool truncate = false; ///< --truncate: keep a long text's first T positions
  std::vector<std::string> texts; ///< empty: read stdin
  int32_t threads = 0;
};

struct BenchOptions {
  std::optional<std::string> loadPath;
  int64_t steps = 10;
  std::optional<int64_t> batch, sourceLength, targetLength;
  uint64_t seed = 0;
  int32_t threads = 0;
  ProfileOptions profile; ///< --profile* (loop/Profile.h)
  std::optional<std::string> sourcesPath;   ///< --sources F.npy: [B, S] ids
  std::optional<std::string> decodeOutPath; ///< --decode-out F.npy
  bool decodeOnly = false; ///< --decode-only: greedy with the KV cache only
  int32_t beam = 0;        ///< --beam N: also time beam search (0: not)
  std::optional<std::string> beamOutPath; ///< --beam-out F.npy
};

struct ExportOptions {
  std::string outputPath, loadPath;
  /// --average FILE...: the export is the mean of --load's weights and
  /// these files'.
  std::vector<std::string> averagePaths;
  bool noEma = false; ///< --no-ema: the raw weights, not the average
};

struct CommandLine {
  enum class Command {
    Help, Info, Run, Train, Eval, Translate, Generate, Predict, Bench, Export
  };
  Command command = Command::Help;
  /// The word that named the command ("eval"); "" for Help.
  std::string commandName;
  std::string helpTopic; ///< for Help: "" or a command
  InfoOptions info;
  RunOptions run;
  TrainOptions train;
  EvalOptions eval;
  TranslateOptions translate;
  GenerateOptions generate;
  PredictOptions predict;
  BenchOptions bench;
  ExportOptions exportOptions;
};

/// Parses the arguments after the program name; throws UsageError.
CommandLine parseCommandLine(const std::vector<std::string> &args);

/// The usage text of `command` ("" for the top level, or a command).
std::string usageText(std::string_view command, std::string_view program);

/// Splits "NAME=VALUE" when NAME is an identifier ([A-Za-z_][A-Za-z0-9_.]*);
/// nullopt otherwise.
std::optional<std::pair<std::string, std::string>>
splitNameValue(std::string_view text);

} // namespace txrt::driver

#endif // TXRT_DRIVER_COMMANDLINE_H
