//===- RunCommand.h - `PROGRAM run ENTRY`: run a compiled entry -*- C++ -*-===//
//
// Resolves the input files to the entry's inputs, reads and validates them,
// fills the parameter arena (--load or --init), and only then creates the
// txrt context, calls the entry and writes every output as DIR/NAME.npy.
// Any InputError is raised before the entry runs.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_RUNCOMMAND_H
#define TXRT_DRIVER_RUNCOMMAND_H

#include "cli/CommandLine.h"
#include "data/InputFiles.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"

#include <ostream>
#include <vector>

namespace txrt::driver {

/// Pairs the --input arguments with the entry's inputs (by name, the rest
/// in declaration order); throws UsageError for unknown, repeated, extra or
/// missing inputs.
std::vector<InputSource> resolveInputs(const EntryInfo &entry,
                                       const std::vector<InputArg> &args);

/// The entry `run NAME` names; UsageError listing the entries when the
/// model has none of that name.
const EntryInfo &entryToRun(const ModelInfo &model, const std::string &name);

/// Runs `options.entry`; `entryTable` is txc_entry_table. Writes a line per
/// output to `out`, notes and timing to `err`. Returns the exit code or
/// throws DriverError.
int runCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
               const RunOptions &options, std::ostream &out, std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_RUNCOMMAND_H
