//===- ExportCommand.h - `PROGRAM export`: parameters for other tools -*- C++ -*-===//
//
// `PROGRAM export W.safetensors --load C` writes C's parameters alone, named
// as the model names them (PyTorch state_dict style), for PyTorch and other
// tools; `train --init-from W.safetensors` starts from such a file.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_EXPORTCOMMAND_H
#define TXRT_DRIVER_EXPORTCOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelInfo.h"

#include <ostream>

namespace txrt::driver {

/// Loads options.loadPath (every parameter checked as --load checks it;
/// the weight average of a train --ema checkpoint unless --no-ema, with a
/// note on `err` as eval gives) and writes options.outputPath atomically;
/// returns the exit code.
int exportCommand(const ModelInfo &model, const ExportOptions &options,
                  std::ostream &out, std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_EXPORTCOMMAND_H
