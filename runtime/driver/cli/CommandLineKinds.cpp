//===- CommandLineKinds.cpp - generate and predict options ----------------===//
//
// The commands of language models (generate) and classifiers (predict).
// Like CommandLine.cpp: pure parsing, UsageError on anything malformed.
//
//===----------------------------------------------------------------------===//
#include "cli/CommandLineParsing.h"

#include <cstdlib>

namespace txrt::driver {

namespace {

constexpr const char *kGenerateUsage =
    R"(usage: PROGRAM generate --load FILE [options] [--] [PROMPT ...]

Language models: continues each PROMPT (after '--', every argument is one,
even if it starts with '-'), or each line of stdin when none is given, and
prints one line per prompt (the prompt's words, then the continuation). Generation stops at the end-of-text token [EOS] or after
--max-new-tokens. Only prompts of the same length are decoded together, so
no row is padded and a prompt's text does not depend on its batch. Picks
only ids the tokenizer has a word for ([PAD] and [SOS] never). Uses the compiled
lm_step entry (a KV cache) when the model has one, else re-runs the logits
entry over the whole prefix; at temperature 0 both give the same text.

options:
  --load FILE           the checkpoint (parameters by name)
  --tokenizer FILE      the vocabulary (default: the one inside the
                        checkpoint; when given, it must be the same)
  --max-new-tokens N    at most N generated tokens per prompt (default 20;
                        0: the prompts alone)
  --temperature T       0 (default): greedy; in (0, 100]: sample from
                        softmax(l / T)
  --top-k K             sample among the K most likely tokens and those tied
                        with the K-th (default 0: all)
  --top-p P             sample among the most likely tokens whose
                        probability reaches P, in (0, 1] (default 1: all)
  --seed S              the seed of the draws (default 0); the same seed
                        gives the same text
  --no-cache            re-run the whole prefix at every step (also
                        spelled --no-kv-cache, as translate has it)
  --block N             read at most the last N tokens of the text so far
                        (default: the block the checkpoint was trained on,
                        whose positions it learned; else the T bound)
  --no-ema              the raw weights, not the average a train --ema
                        checkpoint holds (used by default, as eval does)
  --batch N             prompts decoded together (default: the bound of B)
  --threads N           kernel threads
  -h, --help            show this text
)";

constexpr const char *kPredictUsage =
    R"(usage: PROGRAM predict --load FILE [options] [--] [TEXT ...]

Classifiers: labels each TEXT (after '--', every argument is one, even if
it starts with '-'), or each line of stdin when none is given,
and prints one 'label<TAB>probability' line per input (the softmax
probability of the predicted label). The label set is the one stored
inside the checkpoint (CKPT.labels.json beside it is a copy).

options:
  --load FILE         the checkpoint (parameters by name)
  --tokenizer FILE    the vocabulary (default: the one inside the
                      checkpoint; when given, it must be the same)
  --labels FILE       the label set, CKPT.labels.json (default: the one
                      inside the checkpoint; when given, it must be the
                      same); for an export, which holds none
  --batch N           texts classified together (default: the bound of B)
  --truncate          a text longer than the T bound keeps its first T
                      positions ([SOS] included; a note counts the cut
                      texts); without it such a text is an error
  --no-ema            the raw weights, not the average a train --ema
                      checkpoint holds (used by default, as eval does)
  --threads N         kernel threads
  -h, --help          show this text
)";

/// A number in `range` ("[0, 100]", "(0, 1]": whether the minimum is
/// allowed follows its bracket).
double numberOption(ArgCursor &cursor, const std::string &option,
                    double minimum, double maximum, const char *range) {
  std::string text = cursor.value(option);
  std::optional<double> value = parseDecimal(text);
  if (!value || !(range[0] == '(' ? *value > minimum : *value >= minimum) ||
      !(*value <= maximum))
    cursor.fail(option + " expects a number in " + range + ", got '" + text +
                "'");
  return *value;
}

} // namespace

void parseGenerate(ArgCursor &cursor, CommandLine &line) {
  GenerateOptions &generate = line.generate;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "generate"))
      return;
    if (arg == "--load") {
      generate.loadPath = pathOption(cursor, arg);
    } else if (arg == "--tokenizer") {
      generate.tokenizerPath = pathOption(cursor, arg);
    } else if (arg == "--max-new-tokens") {
      generate.maxNewTokens = integerOption<int64_t>(cursor, arg, 0, kMaxCount);
    } else if (arg == "--temperature") {
      generate.temperature = numberOption(cursor, arg, 0, 100, "[0, 100]");
    } else if (arg == "--top-k") {
      generate.topK = integerOption<int64_t>(cursor, arg, 0, kMaxCount);
    } else if (arg == "--top-p") {
      generate.topP = numberOption(cursor, arg, 0, 1, "(0, 1]");
    } else if (arg == "--seed") {
      generate.seed = integerOption<uint64_t>(cursor, arg, 0, ~uint64_t(0));
    } else if (arg == "--no-cache" || arg == "--no-kv-cache") {
      // translate's spelling too: the same switch.
      cursor.noValue(arg);
      generate.kvCache = false;
    } else if (arg == "--block") {
      generate.block = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      generate.noEma = true;
    } else if (arg == "--batch") {
      generate.batch = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--threads") {
      generate.threads = threadsOption(cursor, arg);
    } else if (arg == "--") { // the end of the options: prompts follow
      while (!cursor.done())
        generate.prompts.push_back(cursor.nextRaw());
    } else if (arg.size() > 1 && arg[0] == '-') {
      unexpected(cursor, arg, "prompt");
    } else {
      generate.prompts.push_back(arg);
    }
  }
  if (generate.loadPath.empty())
    cursor.fail("generate needs --load CHECKPOINT");
}

void parsePredict(ArgCursor &cursor, CommandLine &line) {
  PredictOptions &predict = line.predict;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "predict"))
      return;
    if (arg == "--load") {
      predict.loadPath = pathOption(cursor, arg);
    } else if (arg == "--tokenizer") {
      predict.tokenizerPath = pathOption(cursor, arg);
    } else if (arg == "--labels") {
      predict.labelsPath = pathOption(cursor, arg);
    } else if (arg == "--batch") {
      predict.batch = integerOption<int64_t>(cursor, arg, 1, kMaxCount);
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      predict.noEma = true;
    } else if (arg == "--truncate") {
      cursor.noValue(arg);
      predict.truncate = true;
    } else if (arg == "--threads") {
      predict.threads = threadsOption(cursor, arg);
    } else if (arg == "--") { // the end of the options: texts follow
      while (!cursor.done())
        predict.texts.push_back(cursor.nextRaw());
    } else if (arg.size() > 1 && arg[0] == '-') {
      unexpected(cursor, arg, "text");
    } else {
      predict.texts.push_back(arg);
    }
  }
  if (predict.loadPath.empty())
    cursor.fail("predict needs --load CHECKPOINT");
}

const char *kindUsage(std::string_view command) {
  if (command == "generate")
    return kGenerateUsage;
  if (command == "predict")
    return kPredictUsage;
  return nullptr;
}

} // namespace txrt::driver
