//===- BenchCommand.h - `PROGRAM bench`: time training and decoding -*- C++ -*-===//
//
// Synthetic batches of uniformly random word ids (never a special) at the
// requested sizes: one warm-up call of each entry (it creates the kernels'
// primitives), then --steps timed train steps and one greedy decoding of a
// batch for the full target length (the prefix re-run every step). Prints
// the median ms/step, target tokens/s, ms per generated token and the peak
// resident set size. Models without a train_step entry skip the training
// part; models without encode/decode skip decoding.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_BENCHCOMMAND_H
#define TXRT_DRIVER_BENCHCOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"

#include <ostream>

namespace txrt::driver {

int benchCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                 const BenchOptions &options, std::ostream &out,
                 std::ostream &err);

/// The peak resident set size of this process in MiB.
double peakResidentMiB();

} // namespace txrt::driver

#endif // TXRT_DRIVER_BENCHCOMMAND_H
