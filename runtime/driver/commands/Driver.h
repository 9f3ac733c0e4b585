//===- Driver.h - main() of a compiled model executable ---------*- C++ -*-===//
//
// main() (main.cpp) hands argv and the two symbols of txc's object file to
// driverMain, which parses the metadata and the command line, dispatches to
// `info` / `run`, and converts every error into `error: ...` lines on stderr
// and an exit code (Error.h): 0 ok, 1 runtime failure, 2 bad input. No
// exception escapes and nothing aborts on user input.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_DRIVER_H
#define TXRT_DRIVER_DRIVER_H

#include "core/ModelAbi.h"

#include <ostream>
#include <string>
#include <vector>

namespace txrt::driver {

/// Runs one command (`args` without the program name) and returns the exit
/// code; errors go to `err` as "error: ..." lines.
int runDriver(const std::string &program, const std::vector<std::string> &args,
              const char *modelJson, const txc_entry_fn *entryTable,
              std::ostream &out, std::ostream &err);

/// main() of a compiled model: runDriver on std::cout / std::cerr.
int driverMain(int argc, char **argv, const char *modelJson,
               const txc_entry_fn *entryTable);

} // namespace txrt::driver

#endif // TXRT_DRIVER_DRIVER_H
