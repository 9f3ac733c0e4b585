//===- ExportCommand.cpp - `PROGRAM export`: parameters for other tools ---===//
#include "commands/ExportCommand.h"
#include "cli/OutputPaths.h"
#include "core/Error.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"

namespace txrt::driver {

namespace {

/// What checkpoints to average must agree on where they hold it: their
/// rows mean the same tokens (the tokenizer) and, of a classifier, the
/// same classes (the labels). The first holder's, as JSON.
struct RowMeaning {
  const char *differs; ///< "another tokenizer", "other labels"
  const char *mixes;   ///< "rows of other tokens", ...
  std::optional<std::string> json;
  std::string from;

  void check(std::optional<std::string> its, const std::string &path) {
    if (!its)
      return;
    if (!json) {
      json = std::move(its);
      from = path;
    } else if (*its != *json) {
      throw InputError("'" + path + "' has " + differs + " than '" + from +
                       "': an average of their weights would mix " + mixes +
                       "; average checkpoints of one run");
    }
  }
};

std::optional<std::string> tokenizerJson(const SafetensorsReader &file) {
  std::optional<Tokenizer> tokenizer = checkpointTokenizer(file);
  return tokenizer ? std::optional<std::string>(tokenizer->toJson())
                   : std::nullopt;
}

std::optional<std::string> labelsJson(const SafetensorsReader &file) {
  std::optional<LabelSet> labels = checkpointLabels(file);
  return labels ? std::optional<std::string>(labels->toJson()) : std::nullopt;
}

/// params = the mean of params (`loaded`'s weights, --load) and every
/// --average file's, each read as --load is; summed in double, rounded
/// once.
void averageIn(const ModelInfo &model, const ExportOptions &options,
               const SafetensorsReader &loaded, ParameterArena &params,
               std::ostream &err) {
  // One file under two names (./c, a symlink, --keep-last's hard link of
  // the checkpoint and its step file) counted twice.
  std::vector<std::string> files = {options.loadPath};
  for (const std::string &path : options.averagePaths) {
    for (const std::string &earlier : files)
      if (sameFile(path, earlier))
        throw InputError("--average '" + path + "' is the same file as '" +
                         earlier +
                         "' (given twice, through a link, or train "
                         "--keep-last's link of the checkpoint to its latest "
                         "step file): each checkpoint counts once");
    files.push_back(path);
  }
  RowMeaning tokens{"another tokenizer", "rows of other tokens", {}, ""};
  RowMeaning classes{"other labels", "the rows of other classes", {}, ""};
  tokens.check(tokenizerJson(loaded), options.loadPath);
  classes.check(labelsJson(loaded), options.loadPath);
  std::vector<std::vector<double>> sums;
  for (const ParamInfo &info : model.params) {
    const float *values = params.param(info);
    sums.emplace_back(values, values + info.numElements);
  }
  ParameterArena other(model);
  for (const std::string &path : options.averagePaths) {
    SafetensorsReader file(path);
    loadWeightsForInference(file, model, other, options.noEma, err);
    tokens.check(tokenizerJson(file), path);
    classes.check(labelsJson(file), path);
    for (size_t p = 0; p < model.params.size(); ++p) {
      const float *values = other.param(model.params[p]);
      std::vector<double> &sum = sums[p];
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += double(values[i]);
    }
  }
  const double count = double(options.averagePaths.size() + 1);
  for (size_t p = 0; p < model.params.size(); ++p) {
    float *values = params.param(model.params[p]);
    const std::vector<double> &sum = sums[p];
    for (size_t i = 0; i < sum.size(); ++i)
      values[i] = float(sum[i] / count);
  }
}

} // namespace

int exportCommand(const ModelInfo &model, const ExportOptions &options,
                  std::ostream &out, std::ostream &err) {
  const std::vector<NamedPath> outputs = {
      {options.outputPath, "the export file", NamedPath::Format::Safetensors}};
  std::vector<NamedPath> inputs = {{options.loadPath, "--load"}};
  for (const std::string &path : options.averagePaths)
    inputs.push_back({path, "--average"});
  checkOutputPaths(outputs, inputs);
  checkWritableDirectories(outputs);
  // The parameters alone over a training checkpoint would drop its
  // moments, step and tokenizer (train --save and run --save refuse too).
  if (auto existing = existingTrainingCheckpoint(options.outputPath))
    throw InputError(
        "the export file '" + options.outputPath +
        "' is a training checkpoint (" + describeTrainingCheckpoint(*existing) +
        "): export writes the parameters only, and writing over it would "
        "drop its moments, step and tokenizer; export to another file");
  ParameterArena params(model);
  {
    SafetensorsReader loaded(options.loadPath);
    loadWeightsForInference(loaded, model, params, options.noEma, err);
    if (!options.averagePaths.empty())
      averageIn(model, options, loaded, params, err);
  }
  exportParameters(options.outputPath, model, params);
  int64_t count = 0;
  for (const ParamInfo &info : model.params)
    count += info.numElements;
  out << "exported " << model.params.size() << " parameters (" << count
      << " values) of '" << model.model << "' from ";
  if (options.averagePaths.empty()) {
    out << options.loadPath;
  } else {
    out << "the average of " << options.averagePaths.size() + 1 << " ("
        << options.loadPath;
    for (const std::string &path : options.averagePaths)
      out << ", " << path;
    out << ")";
  }
  out << " to " << options.outputPath << "\n";
  return kExitOk;
}

} // namespace txrt::driver
