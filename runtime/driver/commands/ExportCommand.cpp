//===- ExportCommand.cpp - `PROGRAM export`: parameters for other tools ---===//
#include "commands/ExportCommand.h"
#include "cli/OutputPaths.h"
#include "core/Error.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"

namespace txrt::driver {

int exportCommand(const ModelInfo &model, const ExportOptions &options,
                  std::ostream &out, std::ostream &err) {
  const std::vector<NamedPath> outputs = {
      {options.outputPath, "the export file", NamedPath::Format::Safetensors}};
  checkOutputPaths(outputs, {{options.loadPath, "--load"}});
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
  loadWeightsForInference(SafetensorsReader(options.loadPath), model, params,
                          options.noEma, err);
  exportParameters(options.outputPath, model, params);
  int64_t count = 0;
  for (const ParamInfo &info : model.params)
    count += info.numElements;
  out << "exported " << model.params.size() << " parameters (" << count
      << " values) of '" << model.model << "' from " << options.loadPath
      << " to " << options.outputPath << "\n";
  return kExitOk;
}

} // namespace txrt::driver
