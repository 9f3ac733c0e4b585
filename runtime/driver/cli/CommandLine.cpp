//===- CommandLine.cpp - the driver's command-line grammar ----------------===//
//
// A small hand-written parser (no getopt: it must never exit or print by
// itself) and the usage texts printed by --help (a usage error prints one
// line and a hint naming them).
//
//===----------------------------------------------------------------------===//
#include "cli/CommandLine.h"
#include "cli/CommandLineParsing.h"
#include "core/Error.h"
#include "formats/FileIO.h"

#include <filesystem>
#include <fstream>

namespace txrt::driver {

std::string twoSidesHint(const std::string &option, const std::string &first,
                         const std::string &second) {
  namespace fs = std::filesystem;
  // Lines and whether a tab was seen, of a regular file (up to 256 MiB
  // read: past that, its first 256 MiB).
  struct Shape {
    int64_t lines = 0;
    bool tab = false;
  };
  auto shapeOf = [](const std::string &path) -> std::optional<Shape> {
    std::error_code error;
    if (!fs::is_regular_file(path, error))
      return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return std::nullopt;
    Shape shape;
    std::vector<char> block(1 << 20);
    char lastChar = '\n';
    for (int blocks = 0; blocks < 256 && in; ++blocks) {
      in.read(block.data(), std::streamsize(block.size()));
      std::streamsize got = in.gcount();
      for (std::streamsize i = 0; i < got; ++i) {
        shape.lines += block[size_t(i)] == '\n';
        shape.tab |= block[size_t(i)] == '\t';
      }
      if (got > 0)
        lastChar = block[size_t(got - 1)];
    }
    shape.lines += lastChar != '\n';
    return shape;
  };
  std::optional<Shape> a = shapeOf(first), b = shapeOf(second);
  if (!a || !b || a->tab || b->tab || a->lines == 0 || a->lines != b->lines)
    return "";
  // The output: the shared stem's .tsv (train.en, train.es: train.tsv),
  // never an input's name nor an existing file's (`paste a b > a` empties
  // a before paste reads it).
  const fs::path stemA = fs::path(first).replace_extension();
  const fs::path stemB = fs::path(second).replace_extension();
  std::string out;
  for (std::string candidate :
       {(stemA == stemB
             ? stemA
             : stemA.parent_path() / (stemA.filename().string() + "-" +
                                      stemB.filename().string()))
                .string() +
            ".tsv",
        stemA.string() + ".pairs.tsv"}) {
    std::error_code error;
    if (!fs::exists(candidate, error) && candidate != first &&
        candidate != second) {
      out = candidate;
      break;
    }
  }
  if (out.empty())
    return "";
  // A name that starts with '-' is an option to paste (and to the
  // driver, as --data's file): ./-a.en.
  auto asOperand = [](const std::string &path) {
    return !path.empty() && path[0] == '-' ? "./" + path : path;
  };
  return option + " takes one file of tab-separated lines; '" + first +
         "' and '" + second + "' look like the two sides of a corpus (" +
         std::to_string(a->lines) + " lines each, no tab): `paste " +
         shellWord(asOperand(first)) + " " + shellWord(asOperand(second)) +
         " > " + shellWord(asOperand(out)) + "` makes it";
}

namespace {

constexpr const char *kTopUsage = R"(usage: PROGRAM <command> [options]

Runs the Transformer model that txc compiled into this executable.

commands:
  info              show the model: entries, dims, parameters, arena sizes
  run ENTRY         run an entry on inputs from files, write outputs as .npy
  train             train on the data of the model's kind, save a checkpoint
  eval              evaluate a checkpoint (loss, accuracy, BLEU, perplexity,
                    macro-F1: what the kind has)
  translate         seq2seq: translate sentences (arguments or stdin lines)
  generate          language model: continue prompts (arguments or stdin)
  predict           classifier: label texts (arguments or stdin lines)
  bench             time the train step and decoding on synthetic batches
  export W          write a checkpoint's parameters alone as safetensors
  help [COMMAND]    show this text, or the options of COMMAND

Run 'PROGRAM COMMAND --help' for the options of a command. Every command
also takes --device cpu|cuda[:N] (default: the target txc built the
executable for; a CUDA executable lists its devices in 'info'; docs/cuda.md)
and, on a GPU, --allow-tf32 (matrix products may round their inputs to TF32
on the tensor cores, as PyTorch's allow_tf32; default: strict fp32).
Exit codes: 0 success, 1 runtime failure, 2 bad input (arguments, files,
shapes, token ids); every error is one 'error: ...' line per problem.
)";

constexpr const char *kInfoUsage = R"(usage: PROGRAM info [--json] [--load CKPT]

Shows the model: source and compile flags, config, dims with their bounds,
entries with their input/output signatures and arena sizes (the planned
activation arena against the bytes of all its tensors unplanned), and the
parameters with shapes and initializers, their count and the parameter
arena size.

options:
  --json            print the metadata txc embedded, as JSON (with --load:
                    the checkpoint's training state alone, as JSON)
  --load CKPT       also the checkpoint's training state (step, epoch,
                    batch, seed, update frequency and ranks that trained it,
                    data, --block, precision, tokenizer, weight average,
                    best validation), after checking that it fits the model
  -h, --help        show this text
)";

constexpr const char *kRunUsage =
    R"(usage: PROGRAM run ENTRY [options] [[NAME=]FILE ...]

Runs ENTRY on inputs read from files and writes each output to DIR/NAME.npy
(float32, int32 or bool).

inputs:
  --input [NAME=]FILE   an input of ENTRY; without NAME= the inputs are taken
                        in the entry's order (arguments after ENTRY count as
                        --input too). FILE is an .npy file (bool, int8..int64,
                        uint8..uint64, float16/32/64; converted to the input's
                        dtype with range checks) or a text file of numbers
                        separated by whitespace, one row per line; ragged
                        rows of token ids are right-padded with config 'pad'.
parameters (one of; default --init 0):
  --load FILE           load parameters by name from a .safetensors file;
                        from a training checkpoint (train --save, or run
                        --save of a train_step entry) a train_step entry
                        also gets Adam's moments and the step; of a
                        train --ema checkpoint a forward entry runs the
                        weight average (as translate, eval and export do),
                        a training entry the raw weights
  --no-ema              a forward entry runs the raw weights of a train
                        --ema checkpoint
  --init SEED           initialize every parameter from its initializer with
                        a deterministic generator keyed by SEED
options:
  --out-dir DIR         directory for the outputs (default: .; created)
  --save FILE           after the run, save the parameters to FILE
                        (safetensors, written atomically); after a
                        train_step entry a training checkpoint with Adam's
                        moments and the step, which --load continues
  --threads N           kernel threads (default: TXRT_NUM_THREADS or all cores)
  --dim NAME=N          the value of dim NAME when no input determines it
                        (a dim of the entry's inputs or outputs)
  --repeat N            run the entry N times (benchmarking: the first run
                        creates the kernels' primitives; the time of every run
                        is reported as min and median); a train_step entry
                        takes N updates, steps N0..N0+N-1
  --profile             time every runtime call and print where the time
                        goes by spec line and op kind (runs after the first
                        when --repeat N > 1; docs/profiling.md); with
                        --repeat N >= 3, every other run is left unprofiled
                        and the overhead is printed
  --profile-trace FILE  --profile, and write a Chrome trace-event JSON
                        (chrome://tracing, Perfetto) to FILE
  --profile-rows N      rows of the by-location table (default 15, 0: all; implies --profile)
training entries (kind train_step / train_grad):
  --step N              the update number the (first) run is told (default:
                        the loaded training checkpoint's step + 1, else 1)
  --seed S              the dropout seed it is told (default: the loaded
                        training checkpoint's seed, else 0)
  --save-grads FILE     after the run, write every parameter's gradient
                        (named like the parameter) to FILE (safetensors)
  -h, --help            show this text

Inputs are checked before anything runs: rank, static dims, symbolic dims
(equal across inputs, 1 <= value <= bound) and ids: an i32 input must hold
what the compiled program indexes with it (an embedding's rows, the classes
of a cross-entropy or its ignore_index); `info --json` shows each input's
"ids" range.
)";

std::string substituteProgram(std::string text, std::string_view program) {
  const std::string placeholder = "PROGRAM";
  for (size_t pos = text.find(placeholder); pos != std::string::npos;
       pos = text.find(placeholder, pos + program.size()))
    text.replace(pos, placeholder.size(), program);
  return text;
}

InputArg parseInputArg(const std::string &text) {
  if (auto split = splitNameValue(text))
    return InputArg{split->first, split->second};
  return InputArg{"", text};
}

void parseRun(ArgCursor &cursor, CommandLine &line) {
  RunOptions &run = line.run;
  bool haveEntry = false;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (isHelpFlag(arg)) {
      line.command = CommandLine::Command::Help;
      line.helpTopic = "run";
      return;
    }
    if (arg == "--load") {
      if (run.loadPath)
        cursor.fail("--load is given twice");
      run.loadPath = cursor.value(arg);
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      run.noEma = true;
    } else if (arg == "--init") {
      std::string text = cursor.value(arg);
      auto seed = parseInteger<uint64_t>(text);
      if (!seed)
        cursor.fail("--init expects a non-negative integer seed, got '" + text +
                    "'");
      if (run.initSeed)
        cursor.fail("--init is given twice");
      run.initSeed = seed;
    } else if (arg == "--input") {
      std::string text = cursor.value(arg);
      if (text.empty())
        cursor.fail("--input needs a file ([NAME=]FILE)");
      if (text.front() == '=')
        cursor.fail("--input '" + text +
                    "' has no input name before '=': write --input "
                    "NAME=FILE, or --input FILE for the inputs in order");
      InputArg input = parseInputArg(text);
      if (input.path.empty())
        cursor.fail("--input " + input.name +
                    "= names no file: write --input " + input.name + "=FILE");
      run.inputs.push_back(std::move(input));
    } else if (arg == "--out-dir") {
      run.outDir = cursor.value(arg);
      if (run.outDir.empty())
        cursor.fail("--out-dir needs a directory");
    } else if (arg == "--save") {
      run.savePath = cursor.value(arg);
      if (run.savePath->empty())
        cursor.fail("--save needs a file name");
    } else if (arg == "--threads") {
      std::string text = cursor.value(arg);
      auto threads = parseInteger<int32_t>(text);
      if (!threads || *threads < 1 || *threads > 4096)
        cursor.fail("--threads expects an integer in [1, 4096], got '" + text +
                    "'");
      run.threads = *threads;
    } else if (arg == "--repeat") {
      std::string text = cursor.value(arg);
      auto repeat = parseInteger<int32_t>(text);
      if (!repeat || *repeat < 1 || *repeat > 100000)
        cursor.fail("--repeat expects an integer in [1, 100000], got '" +
                    text + "'");
      run.repeat = *repeat;
    } else if (arg == "--save-grads") {
      run.saveGradsPath = pathOption(cursor, arg);
    } else if (profileOption(cursor, arg, run.profile)) {
      continue;
    } else if (arg == "--step") {
      // At most what a checkpoint records (kMaxTrainingCount): a larger
      // step was trained and saved into a file every reader refused.
      run.trainStep = integerOption<int64_t>(cursor, arg, 1, int64_t(1) << 40);
    } else if (arg == "--seed") {
      run.trainSeed = integerOption<uint64_t>(cursor, arg, 0, ~uint64_t(0));
    } else if (arg == "--dim") {
      std::string text = cursor.value(arg);
      auto split = splitNameValue(text);
      std::optional<int64_t> value;
      if (split)
        value = parseInteger<int64_t>(split->second);
      if (!value)
        cursor.fail("--dim expects NAME=N, got '" + text + "'");
      // As every other option given twice: the first value was dropped.
      for (const auto &[name, given] : run.dims)
        if (name == split->first)
          cursor.fail("--dim " + name + " is given twice (" + name + "=" +
                      std::to_string(given) + " and " + text + ")");
      run.dims.emplace_back(split->first, *value);
    } else if (arg.size() > 1 && arg[0] == '-') {
      cursor.fail("unknown option '" + arg + "'");
    } else if (!haveEntry) {
      run.entry = arg;
      haveEntry = true;
    } else {
      run.inputs.push_back(parseInputArg(arg));
    }
  }
  if (!haveEntry)
    cursor.fail("run needs the name of an entry");
  if (run.loadPath && run.initSeed)
    cursor.fail("--load and --init exclude each other");
  if (run.noEma && !run.loadPath)
    cursor.fail("--no-ema applies to --load (the raw weights of a train "
                "--ema checkpoint)");
}

void parseInfo(ArgCursor &cursor, CommandLine &line) {
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (isHelpFlag(arg)) {
      line.command = CommandLine::Command::Help;
      line.helpTopic = "info";
      return;
    }
    if (arg == "--json") {
      cursor.noValue(arg);
      line.info.json = true;
    } else if (arg == "--load") {
      if (line.info.loadPath)
        cursor.fail("--load is given twice");
      line.info.loadPath = pathOption(cursor, arg);
    } else if (arg.size() > 1 && arg[0] == '-') {
      cursor.fail("unknown option '" + arg + "'");
    } else {
      cursor.fail("unexpected argument '" + arg + "'");
    }
  }
}

} // namespace

std::optional<std::pair<std::string, std::string>>
splitNameValue(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return std::nullopt;
  std::string_view name = text.substr(0, eq);
  auto isStart = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!isStart(name[0]))
    return std::nullopt;
  for (char c : name)
    if (!isStart(c) && !(c >= '0' && c <= '9') && c != '.')
      return std::nullopt;
  return std::make_pair(std::string(name), std::string(text.substr(eq + 1)));
}

CommandLine parseCommandLine(const std::vector<std::string> &args) {
  CommandLine line;
  if (args.empty())
    throw UsageError("no command given", "");
  const std::string &command = args[0];
  if (isHelpFlag(command) || command == "help") {
    line.command = CommandLine::Command::Help;
    // `help help`, `help --help`: the overview, as `help` alone.
    if (command == "help" && args.size() > 1 && args[1] != "help" &&
        !isHelpFlag(args[1])) {
      if (args[1] != "info" && args[1] != "run" && args[1] != "export" &&
          !trainingUsage(args[1]) && !kindUsage(args[1]))
        throw UsageError("no help for '" + args[1] + "'", "");
      line.helpTopic = args[1];
    }
    if (args.size() > 2)
      throw UsageError("unexpected argument '" + args[2] + "'", "");
    return line;
  }
  if (command == "info") {
    line.command = CommandLine::Command::Info;
    line.commandName = "info";
    ArgCursor cursor(args, 1, "info");
    parseInfo(cursor, line);
    return line;
  }
  if (command == "run") {
    line.command = CommandLine::Command::Run;
    line.commandName = "run";
    ArgCursor cursor(args, 1, "run");
    parseRun(cursor, line);
    return line;
  }
  using Parser = void (*)(ArgCursor &, CommandLine &);
  const std::pair<const char *, std::pair<CommandLine::Command, Parser>>
      commands[] = {
          {"train", {CommandLine::Command::Train, parseTrain}},
          {"eval", {CommandLine::Command::Eval, parseEval}},
          {"translate", {CommandLine::Command::Translate, parseTranslate}},
          {"generate", {CommandLine::Command::Generate, parseGenerate}},
          {"predict", {CommandLine::Command::Predict, parsePredict}},
          {"bench", {CommandLine::Command::Bench, parseBench}},
          {"export", {CommandLine::Command::Export, parseExport}},
      };
  for (const auto &[name, parser] : commands) {
    if (command != name)
      continue;
    line.command = parser.first;
    line.commandName = name;
    ArgCursor cursor(args, 1, name);
    parser.second(cursor, line);
    return line;
  }
  throw UsageError("unknown command '" + command + "'", "");
}

std::string usageText(std::string_view command, std::string_view program) {
  const char *text = command == "info"           ? kInfoUsage
                     : command == "run"          ? kRunUsage
                     : command == "export"       ? kExportUsage
                     : trainingUsage(command) != nullptr ? trainingUsage(command)
                     : kindUsage(command) != nullptr ? kindUsage(command)
                                                  : kTopUsage;
  return substituteProgram(text, program);
}

} // namespace txrt::driver
