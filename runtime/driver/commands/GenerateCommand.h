//===- GenerateCommand.h - `PROGRAM generate`: continue prompts -*- C++ -*-===//
#ifndef TXRT_DRIVER_GENERATECOMMAND_H
#define TXRT_DRIVER_GENERATECOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"

#include <istream>
#include <ostream>

namespace txrt::driver {

int generateCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                    const GenerateOptions &options, std::istream &in,
                    std::ostream &out, std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_GENERATECOMMAND_H
