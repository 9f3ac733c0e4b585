//===- CommandLineExport.cpp - the grammar of `PROGRAM export` ------------===//
//
//   PROGRAM export W.safetensors --load FILE [--no-ema]
//
//===----------------------------------------------------------------------===//
#include "cli/CommandLine.h"
#include "cli/CommandLineParsing.h"

#include <algorithm>

namespace txrt::driver {

const char *const kExportUsage =
    R"(usage: PROGRAM export W.safetensors --load FILE [--average FILE]...
                      [--no-ema]

Writes the model's parameters alone (no Adam moments, no training position,
no tokenizer) to W.safetensors, F32, named exactly as the model names them
(PyTorch's module naming, so torch's load_state_dict(strict=True) takes
them), with __metadata__ {"format": "pt"}. Written to a temporary file and
renamed, never half-written. `train --init-from W.safetensors` reads such a
file back. Of a train --ema checkpoint it writes the weight average, the
weights eval, translate, generate and predict use.

options:
  --load FILE       the checkpoint (train --save) or parameter file (run
                    --save, export) to read (required)
  --average FILE    average FILE's weights in (repeatable; fairseq's
                    average_checkpoints): W is the element-wise mean of
                    --load and every --average, each read as --load is
                    (checkpoints of this model with the same tokenizer,
                    e.g. train --keep-last's CKPT.step-N.safetensors)
  --no-ema          the raw weights of a train --ema checkpoint, not their
                    average
  -h, --help        show this text
)";

void parseExport(ArgCursor &cursor, CommandLine &line) {
  ExportOptions &options = line.exportOptions;
  bool haveLoad = false;
  while (!cursor.done()) {
    std::string arg = cursor.next();
    if (help(arg, line, "export"))
      return;
    if (arg == "--load") {
      options.loadPath = pathOption(cursor, arg);
      haveLoad = true;
    } else if (arg == "--average") {
      options.averagePaths.push_back(pathOption(cursor, arg));
    } else if (arg == "--no-ema") {
      cursor.noValue(arg);
      options.noEma = true;
    } else if (options.outputPath.empty() &&
               !(arg.size() > 1 && arg[0] == '-')) {
      options.outputPath = arg;
    } else {
      unexpected(cursor, arg);
    }
  }
  if (options.outputPath.empty())
    cursor.fail("export needs the file to write (W.safetensors)");
  if (!haveLoad)
    cursor.fail("export needs --load FILE");
  // Each checkpoint counts once: one given twice weighs double, which an
  // average of the last checkpoints does not mean.
  std::vector<std::string> seen = {options.loadPath};
  for (const std::string &path : options.averagePaths) {
    if (std::find(seen.begin(), seen.end(), path) != seen.end())
      cursor.fail("export: '" + path +
                  "' is given twice (--load and --average each name a "
                  "checkpoint to average once)");
    seen.push_back(path);
  }
}

} // namespace txrt::driver
