//===- RunCommand.cpp - `PROGRAM run ENTRY`: run a compiled entry ---------===//
//
// The order matters: everything a user can get wrong (arguments, input
// files, shapes, ids, caches shorter than the new positions, the
// checkpoint, the output directory, a --save that would write less over a
// training checkpoint) is checked before the context is created and the
// entry is called.
//
//===----------------------------------------------------------------------===//
#include "commands/RunCommand.h"
#include "core/Error.h"
#include "formats/FileIO.h"
#include "data/InputValidation.h"
#include "core/Memory.h"
#include "core/ModelRunner.h"
#include "formats/Npy.h"
#include "cli/OutputPaths.h"
#include "core/Parameters.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"
#include "loop/Profile.h"

#include "txrt/txrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

namespace txrt::driver {

namespace {

std::string listNames(const std::vector<TensorSig> &sigs) {
  std::string text;
  for (const TensorSig &sig : sigs)
    text += (text.empty() ? "" : ", ") + sig.name;
  return text.empty() ? "none" : text;
}

std::string listEntries(const ModelInfo &model) {
  std::string text;
  for (const EntryInfo &entry : model.entries)
    text += (text.empty() ? "" : ", ") + entry.name;
  return text.empty() ? "none" : text;
}

std::optional<int64_t> padValue(const ModelInfo &model) {
  std::optional<double> pad = model.configNumber("pad");
  if (!pad || *pad != std::floor(*pad))
    return std::nullopt;
  return int64_t(*pad);
}

void prepareOutputDirectory(const std::string &dir) {
  // Before a directory is made: through another user's link in /tmp it
  // was made in the directory the link names, then the outputs refused.
  checkSymlinksTrusted(dir, "--out-dir");
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  // (An existing directory past PATH_MAX read "cannot create" it.)
  if (error == std::errc::filename_too_long)
    throw InputError("--out-dir '" + dir + "': " + pathTooLong(dir));
  if (error)
    throw InputError("cannot create the output directory '" + dir +
                     "': " + error.message());
  if (!std::filesystem::is_directory(dir, error))
    throw InputError("--out-dir '" + dir + "' is not a directory");
}

std::string outputPath(const RunOptions &options, const TensorSig &sig) {
  return (std::filesystem::path(options.outDir) / (sig.name + ".npy")).string();
}

/// Fails early (before the entry runs) when an output cannot be written or
/// would replace an input or another output.
void checkRunOutputs(const EntryInfo &entry, const RunOptions &options,
                     const std::vector<InputSource> &sources) {
  std::vector<NamedPath> outputs, inputs;
  for (const TensorSig &sig : entry.outputs)
    outputs.push_back({outputPath(options, sig), "output '" + sig.name + "'",
                       NamedPath::Format::Npy});
  // A cache written back may replace the file it was read from (the next
  // step's input): the entry has read it by then.
  for (size_t i = 0; i < entry.inputs.size(); ++i)
    if (entry.inputs[i].role == "cache" &&
        entry.inputs[i].writesLastRows.has_value() &&
        !sameFile(outputPath(options, entry.inputs[i]), sources[i].path))
      outputs.push_back({outputPath(options, entry.inputs[i]),
                         "cache '" + entry.inputs[i].name + "'",
                         NamedPath::Format::Npy});
  if (options.saveGradsPath)
    outputs.push_back({*options.saveGradsPath, "--save-grads",
                       NamedPath::Format::Safetensors});
  if (options.savePath)
    outputs.push_back(
        {*options.savePath, "--save", NamedPath::Format::Safetensors});
  if (options.profile.tracePath)
    outputs.push_back({*options.profile.tracePath, "--profile-trace",
                       NamedPath::Format::Json});
  for (const InputSource &source : sources)
    inputs.push_back({source.path, "input '" + source.name + "'"});
  if (options.loadPath)
    inputs.push_back({*options.loadPath, "--load"});
  checkOutputPaths(outputs, inputs, {{"--save", "--load"}});
  checkWritableDirectories(outputs);
}

/// Why ragged rows of `input` cannot be padded, or "": the targets of
/// cross-entropies that ignore no common value (two with different
/// ignore_index values, or one whose ignore_index another reader refuses)
/// would score every padded position as a class. They were padded with
/// config `pad` and scored without a word.
std::string raggedRefusal(const TensorSig &input) {
  if (!input.ids || !input.ids->scored ||
      (input.ids->ignored && input.ids->accepts(*input.ids->ignored)))
    return "";
  return "ragged rows of a cross-entropy's targets are padded with its "
         "ignore_index, and no value is ignored by every reader of '" +
         input.name + "' (" + input.ids->what +
         "): write every row in full, with an id each loss ignores where "
         "there is none";
}

} // namespace

std::vector<InputSource> resolveInputs(const EntryInfo &entry,
                                       const std::vector<InputArg> &args) {
  const size_t count = entry.inputs.size();
  std::vector<InputSource> sources(count);
  std::vector<bool> given(count, false);
  auto fail = [](const std::string &message) {
    throw UsageError(message, "run");
  };
  for (const InputArg &arg : args) {
    if (arg.name.empty())
      continue;
    size_t i = 0;
    while (i < count && entry.inputs[i].name != arg.name)
      ++i;
    if (i == count)
      fail("entry '" + entry.name + "' has no input '" + arg.name +
           "' (inputs: " + listNames(entry.inputs) + ")");
    if (given[i])
      fail("input '" + arg.name + "' is given twice");
    given[i] = true;
    sources[i] = InputSource{arg.name, arg.path};
  }
  size_t next = 0;
  for (const InputArg &arg : args) {
    if (!arg.name.empty())
      continue;
    while (next < count && given[next])
      ++next;
    if (next == count)
      fail("entry '" + entry.name + "' takes " + std::to_string(count) +
           " input(s) (" + listNames(entry.inputs) +
           ") but more files were given ('" + arg.path + "' is left over)");
    given[next] = true;
    sources[next] = InputSource{entry.inputs[next].name, arg.path};
  }
  for (size_t i = 0; i < count; ++i) {
    if (!given[i])
      fail("missing input '" + entry.inputs[i].name + "' of entry '" +
           entry.name + "' (pass --input " + entry.inputs[i].name + "=FILE)");
    sources[i].raggedRefusal = raggedRefusal(entry.inputs[i]);
  }
  return sources;
}

namespace {

/// What ragged rows of `input` are padded with: config `pad`, and for the
/// targets of a cross-entropy its ignore_index where the input takes it,
/// so that padded positions are not scored (padded with `pad`, a class,
/// they counted in the loss without a word).
std::optional<int64_t> padFor(const ModelInfo &model, const TensorSig &input) {
  std::optional<int64_t> pad = padValue(model);
  if (input.ids && input.ids->ignored &&
      input.ids->accepts(*input.ids->ignored))
    return input.ids->ignored;
  return pad;
}

/// Reads every input file as its input's dtype.
std::vector<Tensor> readInputs(const ModelInfo &model, const EntryInfo &entry,
                               const std::vector<InputSource> &sources) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < sources.size(); ++i)
    inputs.push_back(readInputFile(
        sources[i], entry.inputs[i].dtype, entry.inputs[i].shape.size(),
        padFor(model, entry.inputs[i]), [&](const Shape &shape) {
          checkInputShape(model, entry.inputs[i], shape, sources[i]);
        }));
  return inputs;
}

/// The tokenizer inside a loaded training checkpoint (kept when run --save
/// writes one), else an empty one (run reads ids, not text).
Tokenizer loadedTokenizer(const RunOptions &options) {
  if (!options.loadPath)
    return Tokenizer{};
  SafetensorsReader file(*options.loadPath);
  if (!isTrainingCheckpoint(file))
    return Tokenizer{};
  try {
    return checkpointTokenizer(file).value_or(Tokenizer{});
  } catch (const InputError &) {
    return Tokenizer{}; // run --save wrote an empty one: no text involved
  }
}

/// A classifier checkpoint's labels, carried into what --save writes.
std::optional<LabelSet> loadedLabels(const RunOptions &options) {
  if (!options.loadPath)
    return std::nullopt;
  SafetensorsReader file(*options.loadPath);
  return isTrainingCheckpoint(file) ? checkpointLabels(file) : std::nullopt;
}

/// Whether `--save` after `entry` writes a training checkpoint (parameters,
/// moments, step, tokenizer) rather than the parameters alone.
bool savesTrainingCheckpoint(const ModelInfo &model, const EntryInfo &entry) {
  return entry.kind == EntryKind::TrainStep && model.hasTrainingState();
}

/// What a training checkpoint holds beyond the parameters, for the refusal.
std::string trainingState(const SafetensorsReader &file,
                          const ModelInfo &model) {
  const std::string *stored = file.metadataValue("step");
  const std::string step = stored ? *stored : "?";
  bool tokenizer = false;
  try {
    std::optional<Tokenizer> inside = checkpointTokenizer(file);
    tokenizer = inside && (inside->subwords || inside->source.size() > 0);
  } catch (const InputError &) {
    // The empty one run --save writes after a train_step entry.
  }
  return "Adam's moments, step " + step + (tokenizer ? ", the tokenizer" : "") +
         (hasAveragedWeights(file, model) ? ", the --ema average" : "");
}

/// `run` never writes over a training checkpoint a file that holds less:
/// the parameters alone (--save after a forward or train_grad entry) or
/// gradients (--save-grads) would drop its moments, step and tokenizer, and
/// a train_step entry continuing it (--load C --save C) keeps all of that
/// but cannot update a train --ema average. Checked before anything runs.
void checkCheckpointOverwrites(const ModelInfo &model, const EntryInfo &entry,
                               const RunOptions &options) {
  auto refuse = [&](const std::string &flag, const std::string &path,
                    const SafetensorsReader &file, const std::string &what,
                    const std::string &lost, const std::string &instead) {
    throw InputError(flag + " '" + path +
                     "' is a training checkpoint (parameters, " +
                     trainingState(file, model) + ") and " + what +
                     ": writing over it would drop " + lost + "; " + instead);
  };
  if (options.saveGradsPath)
    if (auto file = existingTrainingCheckpoint(*options.saveGradsPath))
      refuse("--save-grads", *options.saveGradsPath, *file,
             "--save-grads writes gradients only", "all of it",
             "pass --save-grads a new file");
  if (!options.savePath)
    return;
  auto file = existingTrainingCheckpoint(*options.savePath);
  if (!file)
    return;
  if (!savesTrainingCheckpoint(model, entry))
    refuse("--save", *options.savePath, *file,
           "entry '" + entry.name + "' (" + entryKindName(entry.kind) +
               ") saves the parameters only",
           "all but the parameters",
           "--save to another file (`export W.safetensors --load " +
               *options.savePath + "` writes its parameters)");
  if (options.loadPath && sameFile(*options.loadPath, *options.savePath) &&
      hasAveragedWeights(*file, model))
    refuse("--save", *options.savePath, *file,
           "entry '" + entry.name +
               "' continues its updates without its --ema average",
           "the average",
           "--save to another file, or continue it with train --resume");
}

/// --load, --init, or --init 0 with a note. A train_step entry loads a
/// training checkpoint whole (moments and step, so updates continue), a
/// train_grad entry its parameters; returns the position it holds (step,
/// seed), or nullopt.
std::optional<TrainingPosition> fillParameters(const ModelInfo &model,
                                               const EntryInfo &entry,
                                               ParameterArena &params,
                                               const RunOptions &options,
                                               std::ostream &err) {
  if (options.loadPath) {
    SafetensorsReader file(*options.loadPath);
    if (entry.kind == EntryKind::TrainStep && model.hasTrainingState() &&
        isTrainingCheckpoint(file)) {
      TrainingPosition position = loadCheckpoint(file, model, params);
      noteConfigChanges(file, model, err, WeightsUse::Training);
      // Said as for train_grad; its --save (another file) held no average
      // and nothing said the average was left behind.
      if (hasAveragedWeights(file, model))
        err << "note: entry '" << entry.name << "' updates the raw weights of '"
            << file.path()
            << "' (it also holds their --ema average, which run does not "
               "update"
            << (options.savePath ? " and --save does not write: train "
                                   "--resume continues it"
                                 : "")
            << ")\n";
      return position;
    }
    // A forward entry runs what translate, eval and export take of a
    // train --ema checkpoint, the average (run took the raw weights without
    // a word: logits 0.4 off PyTorch's on the exported file); a training
    // entry continues from the raw ones.
    if (entry.kind == EntryKind::Forward) {
      loadWeightsForInference(file, model, params, options.noEma, err,
                              WeightsUse::Inference);
      return std::nullopt;
    }
    if (options.noEma)
      throw InputError("--no-ema applies to forward entries; entry '" +
                       entry.name + "' (" + entryKindName(entry.kind) +
                       ") always starts from the raw weights");
    params.load(file);
    noteConfigChanges(file, model, err,
                      entry.kind == EntryKind::TrainStep
                          ? WeightsUse::Training
                          : WeightsUse::TrainingEntry);
    if (hasAveragedWeights(file, model))
      err << "note: entry '" << entry.name
          << "' starts from the raw weights of '" << file.path()
          << "' (it also holds their --ema average, which "
          << "forward entries run)\n";
    // train_grad checks the next update of a training checkpoint: its step
    // and seed (the dropout masks), as train_step takes them.
    if (entry.kind == EntryKind::TrainGrad && isTrainingCheckpoint(file))
      return readTrainingPosition(file);
    return std::nullopt;
  }
  if (!options.initSeed)
    err << "note: neither --load nor --init given; initializing the "
           "parameters with --init 0\n";
  params.initialize(options.initSeed.value_or(0));
  return std::nullopt;
}

/// "ran 'E' in X ms", or with --repeat the first run and the others' min
/// and median (scripts/bench*.sh read the median).
void reportTimes(const EntryInfo &entry, const std::vector<double> &times,
                 std::ostream &err) {
  char elapsed[96];
  if (times.size() == 1) {
    std::snprintf(elapsed, sizeof(elapsed), "%.3f ms", times[0]);
  } else {
    double first = times[0];
    std::vector<double> warm(times.begin() + 1, times.end());
    std::sort(warm.begin(), warm.end());
    std::snprintf(elapsed, sizeof(elapsed),
                  "%zu times: first %.3f ms, then min %.3f ms, median %.3f ms",
                  times.size(), first, warm.front(), warm[warm.size() / 2]);
  }
  err << "ran '" << entry.name << "' " << (times.size() == 1 ? "in " : "")
      << elapsed << "\n";
}

/// Calls the entry; a failure status becomes a KernelError. A train_step
/// entry run N times takes N updates: steps firstStep,
/// firstStep + 1, ... (the learning-rate warmup and Adam's bias correction
/// advance); other training entries are told firstStep every time.
void callEntry(const ModelInfo &model, txc_entry_fn function,
               const EntryInfo &entry,
               ParameterArena &params, const std::vector<int64_t> &dims,
               std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
               const RunOptions &options, int64_t firstStep,
               std::ostream &out, std::ostream &err) {
  const int32_t threads = options.threads, repeat = options.repeat;
  std::vector<void *> inputPointers, outputPointers;
  for (Tensor &tensor : inputs)
    inputPointers.push_back(tensor.data());
  for (Tensor &tensor : outputs)
    outputPointers.push_back(tensor.data());
  // Never NULL, even for an entry that needs no scratch.
  AlignedBuffer arena =
      allocateBuffer(uint64_t(entry.arenaBytes),
                     "the activation arena of entry '" + entry.name + "'");
  ContextPtr ctx = createContext(threads);

  // --profile: the first run creates the kernels' primitives, so with
  // --repeat N > 1 the runs after it are profiled; with N >= 3 every other
  // one is left unprofiled to measure what profiling costs.
  std::optional<Profile> profile;
  if (options.profile.enabled)
    profile.emplace(options.profile.sites);
  std::vector<double> times, profiledTimes, plainTimes;
  // A forward entry leaves the parameters as they are, so across its runs
  // the context may keep the weights packed (txrt_context_set_frozen_parameters).
  if (entry.kind == EntryKind::Forward)
    txrt_context_set_frozen_parameters(ctx.get(), params.data(),
                                       size_t(model.paramArenaBytes));
  uint32_t floatMode = txrt_denormals_enter(ctx.get());
  for (int32_t run = 0; run < std::max<int32_t>(repeat, 1); ++run) {
    // Training entries read the update number and the dropout seed.
    if (entry.kind != EntryKind::Forward)
      txrt_context_set_train_state(
          ctx.get(),
          entry.kind == EntryKind::TrainStep ? firstStep + run : firstStep,
          options.trainSeed.value_or(0));
    bool profiled = profile && (repeat == 1 || (run > 0 && (repeat < 3 ||
                                                           run % 2 == 1)));
    txrt_context_set_profiling(ctx.get(), profiled ? 1 : 0);
    int64_t startNs = txrt_profile_clock_ns();
    int32_t status =
        function(ctx.get(), params.data(), arena.data(), dims.data(),
                 inputPointers.data(), outputPointers.data());
    int64_t endNs = txrt_profile_clock_ns();
    times.push_back(double(endNs - startNs) / 1e6);
    if (profiled)
      profile->addEntryCall(entry.name, startNs, endNs, ctx.get());
    if (profile && run > 0)
      (profiled ? profiledTimes : plainTimes).push_back(times.back());
    if (status != TXRT_OK)
      throw KernelError(
          "entry '" + entry.name + "' failed (" + txrt_status_string(status) +
          ")" +
          siteLocation(model.metadataJson, txrt_last_error_site(ctx.get())) +
          ": " + txrt_last_error(ctx.get()));
  }
  reportTimes(entry, times, err);
  txrt_denormals_leave(floatMode);
  if (profile) {
    txrt_context_set_profiling(ctx.get(), 0);
    // The only call creates oneDNN's primitives: its profile is mostly
    // that (a linear at 25 ms where the next call's takes 0.1), and
    // nothing said so.
    if (repeat == 1)
      err << "note: --repeat 1 profiles the only call, which also creates "
             "the kernels' primitives (the first linear's time is mostly "
             "that); --repeat 2 or more profiles the calls after it\n";
    profile->writeReport(out, model, options.profile);
    if (!profiledTimes.empty() && !plainTimes.empty()) {
      // The fastest run of each kind: the least disturbed by the machine.
      double on = *std::min_element(profiledTimes.begin(), profiledTimes.end());
      double off = *std::min_element(plainTimes.begin(), plainTimes.end());
      char line[160];
      std::snprintf(line, sizeof(line),
                    "profiling overhead: fastest profiled run %.3f ms, "
                    "fastest unprofiled run %.3f ms (%+.1f %%)\n",
                    on, off, 100.0 * (on - off) / off);
      out << line;
    }
    profile->writeTraceFile(out, options.profile);
  }
}

/// callEntry on a device (a --target=cuda executable): the parameter arena
/// and the entry's buffers live there (ModelRunner), the inputs are copied
/// in and the outputs back on every call, and each run's time includes
/// those copies and waiting for the device.
void callEntryOnDevice(ModelRunner &runner, const EntryInfo &entry,
                       const std::vector<Tensor> &inputs,
                       std::vector<Tensor> &outputs, const RunOptions &options,
                       int64_t firstStep, std::ostream &err) {
  std::vector<const Tensor *> inputPointers;
  for (const Tensor &tensor : inputs)
    inputPointers.push_back(&tensor);
  std::vector<double> times;
  for (int32_t run = 0; run < std::max<int32_t>(options.repeat, 1); ++run) {
    if (entry.kind != EntryKind::Forward)
      runner.setTrainState(entry.kind == EntryKind::TrainStep ? firstStep + run
                                                              : firstStep,
                           options.trainSeed.value_or(0));
    int64_t startNs = txrt_profile_clock_ns();
    outputs = runner.call(entry, inputPointers, options.dims);
    times.push_back(double(txrt_profile_clock_ns() - startNs) / 1e6);
  }
  reportTimes(entry, times, err);
}

} // namespace

const EntryInfo &entryToRun(const ModelInfo &model, const std::string &name) {
  const EntryInfo *entry = model.findEntry(name);
  if (!entry)
    throw UsageError("model '" + model.model + "' has no entry '" + name +
                         "' (entries: " + listEntries(model) + ")",
                     "run");
  return *entry;
}

int runCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
               const RunOptions &givenOptions, std::ostream &out,
               std::ostream &err) {
  // trainSeed is resolved below, once a loaded checkpoint is known.
  RunOptions options = givenOptions;
  const EntryInfo *entry = &entryToRun(model, options.entry);
  txc_entry_fn function = entryTable[size_t(entry - model.entries.data())];
  if (!function)
    throw ModelError("the entry table has no function for '" + entry->name +
                     "'");

  // Everything the user can get wrong is checked before the entry runs.
  if (options.saveGradsPath) {
    // A train_step entry hands its gradients straight to Adam's update in
    // its activation arena: the arena's gradient region is never written,
    // and saving it would write zeros (or an older train_grad's values).
    std::string gradEntry;
    for (const EntryInfo &other : model.entries)
      if (other.kind == EntryKind::TrainGrad && gradEntry.empty())
        gradEntry = other.name;
    if (entry->kind != EntryKind::TrainGrad || !model.hasTrainingState())
      throw UsageError(
          "--save-grads needs a train_grad entry; '" + entry->name +
              "' is a " + entryKindName(entry->kind) + " entry" +
              (entry->kind == EntryKind::TrainStep
                   ? ", whose gradients go straight into Adam's update and "
                     "are not kept"
                   : "") +
              (gradEntry.empty() ? std::string()
                                 : "; run '" + gradEntry +
                                       "' (the same step without the "
                                       "update) with --save-grads"),
          "run");
  }
  // --step and --seed are a training entry's update number and dropout
  // seed: a forward entry reads neither, and they changed nothing.
  if ((options.trainStep || options.trainSeed) &&
      entry->kind != EntryKind::TrainGrad &&
      entry->kind != EntryKind::TrainStep)
    throw UsageError(std::string(options.trainStep ? "--step" : "--seed") +
                         " applies to training entries (train_step, "
                         "train_grad); '" +
                         entry->name + "' is a " + entryKindName(entry->kind) +
                         " entry",
                     "run");
  std::vector<InputSource> sources = resolveInputs(*entry, options.inputs);
  std::vector<Tensor> inputs = readInputs(model, *entry, sources);
  std::vector<int64_t> dims =
      bindDims(model, *entry, inputs, sources, options.dims);
  for (size_t i = 0; i < inputs.size(); ++i)
    checkIds(entry->inputs[i], inputs[i], sources[i], dims);
  // On a device the arena's home is the runner's (ParameterHome): filled
  // through write() here, read back after the calls for what is saved.
  std::unique_ptr<ModelRunner> runner;
  if (runsOnDevice(model)) {
    if (options.profile.enabled)
      throw UsageError("--profile times the CPU's runtime calls; on a GPU "
                       "use `bench` (or Nsight Systems) instead",
                       "run");
    runner = std::make_unique<ModelRunner>(model, entryTable, options.threads);
  }
  std::optional<ParameterArena> hostParams;
  if (!runner)
    hostParams.emplace(model);
  std::optional<TrainingPosition> loaded = fillParameters(
      model, *entry, runner ? runner->params().write() : *hostParams, options,
      err);
  const int64_t firstStep =
      options.trainStep.value_or(loaded ? loaded->step + 1 : 1);
  // A saved update numbered at or before the loaded checkpoint's step would
  // record that step beside Adam's moments of all the loaded updates and a
  // data position past it: info then said `run` saved step 5 "since" step
  // 40, and train --resume went back to step 6's batch.
  if (options.savePath && loaded && options.trainStep &&
      entry->kind == EntryKind::TrainStep && *options.trainStep <= loaded->step)
    throw UsageError("--step " + std::to_string(*options.trainStep) +
                         " is not after step " + std::to_string(loaded->step) +
                         " of '" + *options.loadPath +
                         "', and --save would record it beside the moments "
                         "of those " +
                         std::to_string(loaded->step) +
                         " updates; leave --step out (the run goes on at " +
                         std::to_string(loaded->step + 1) +
                         "), or --save only a run from --init",
                     "run");
  // A loaded training checkpoint's run goes on with its seed, as its step:
  // `run train --load C --save C` then `train --resume C` is one run.
  options.trainSeed = options.trainSeed.value_or(loaded ? loaded->seed : 0);
  const int64_t runs = std::max<int32_t>(options.repeat, 1);
  const int64_t lastStep =
      entry->kind == EntryKind::TrainStep ? firstStep + runs - 1 : firstStep;
  if (options.savePath && savesTrainingCheckpoint(model, *entry) &&
      lastStep > kMaxTrainingCount)
    throw InputError("--save would record step " + std::to_string(lastStep) +
                     ", past " + std::to_string(kMaxTrainingCount) +
                     " (2^40), the most a checkpoint holds; no reader would "
                     "load it");
  prepareOutputDirectory(options.outDir);
  checkRunOutputs(*entry, options, sources);
  // One run at a time saves to a file, as train claims its --save: a
  // `run --save C` beside a `train --save C` replaced the newer saves of
  // one with the other's (a tester lost train's steps 201..400).
  std::optional<WriterLock> saveLock;
  if (options.savePath)
    saveLock.emplace(*options.savePath, "--save");
  checkCheckpointOverwrites(model, *entry, options);

  std::vector<Tensor> outputs;
  for (const TensorSig &sig : entry->outputs)
    outputs.push_back(allocateTensor(sig.dtype, concreteShape(sig, dims),
                                     "output '" + sig.name + "'"));
  if (runner)
    callEntryOnDevice(*runner, *entry, inputs, outputs, options, firstStep,
                      err);
  else
    callEntry(model, function, *entry, *hostParams, dims, inputs, outputs,
              options, firstStep, out, err);
  const ParameterArena &params =
      runner ? runner->params().read() : *hostParams;

  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path = outputPath(options, entry->outputs[i]);
    writeNpy(path, outputs[i]);
    out << entry->outputs[i].name << ": " << dtypeName(outputs[i].dtype)
        << formatShape(outputs[i].shape) << " -> " << path << "\n";
  }
  // Caches the entry writes in place (decode_step, lm_step: the new
  // positions' keys and values) are written out too, so that a step's
  // caches are the next call's inputs; the cross-attention caches it only
  // reads are not (they were labelled "updated" unchanged).
  for (size_t i = 0; i < inputs.size(); ++i)
    if (entry->inputs[i].role == "cache" &&
        entry->inputs[i].writesLastRows.has_value()) {
      std::string path = outputPath(options, entry->inputs[i]);
      writeNpy(path, inputs[i]);
      out << entry->inputs[i].name << ": " << dtypeName(inputs[i].dtype)
          << formatShape(inputs[i].shape) << " -> " << path
          << " (the cache, updated)\n";
    }
  if (options.saveGradsPath) {
    params.saveGradients(*options.saveGradsPath,
                         {{"format", kGradientsFormat},
                          {"model", model.model},
                          {"entry", entry->name},
                          {"step", std::to_string(lastStep)},
                          {"seed", std::to_string(*options.trainSeed)}});
    out << "saved the gradients to " << *options.saveGradsPath << "\n";
  }
  // Nothing non-finite is saved, as train saves nothing of a diverged step:
  // no load takes such a file, and --save may name the checkpoint the run
  // loaded (a good one, replaced by one that cannot be read).
  if (options.savePath)
    if (std::optional<ParameterArena::NonFiniteValue> bad =
            params.findNonFinite())
      throw DriverError(
          bad->tensor + " is non-finite (" + bad->value + ") after " +
              (savesTrainingCheckpoint(model, *entry)
                   ? "the step" + std::string(lastStep > firstStep ? "s" : "")
                   : std::string(options.loadPath ? "loading"
                                                  : "initialization")) +
              ": nothing was saved to '" + *options.savePath +
              "' (no load takes a non-finite value; the outputs above "
              "were written)",
          kExitFailure);
  if (options.savePath && savesTrainingCheckpoint(model, *entry)) {
    // Parameters, Adam's moments and the step: --load continues from here.
    TrainingPosition position = loaded.value_or(TrainingPosition{});
    // The data position stays the loaded run's: it names the batch after
    // the step train last saved, not after these.
    if (loaded && lastStep != loaded->step)
      position.dataPositionStep =
          loaded->dataPositionStep.value_or(loaded->step);
    position.step = lastStep;
    position.seed = *options.trainSeed;
    // A loaded run's batch size (or --max-tokens) stays: `train --resume`
    // continues that run, not these steps' rows. Otherwise the rows the
    // updates took (axis 0 of the entry's first input): the file recorded
    // 1, and a train --resume of it took batches of 1.
    if (!(loaded && (loaded->batchSize > 0 || loaded->maxTokens > 0)) &&
        !entry->inputs.empty() && !entry->inputs[0].shape.empty()) {
      const DimRef &rows = entry->inputs[0].shape[0];
      position.batchSize =
          rows.isSymbolic() ? dims[size_t(rows.dim)] : rows.size;
    }
    position.batchSize = std::max<int64_t>(position.batchSize, 1);
    std::optional<LabelSet> labels = loadedLabels(options);
    saveCheckpoint(*options.savePath, model, params, position,
                   loadedTokenizer(options), nullptr,
                   labels ? &*labels : nullptr);
    out << "saved the parameters, Adam's moments and step " << lastStep
        << " to " << *options.savePath << "\n";
  } else if (options.savePath) {
    params.save(*options.savePath, parametersMetadata(model, "txc"));
    out << "saved the parameters to " << *options.savePath << "\n";
  }
  return kExitOk;
}

} // namespace txrt::driver
