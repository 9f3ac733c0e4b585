//===- TrainCommand.h - `PROGRAM train`: train on TSV parallel text -*- C++ -*-===//
//
// Reads and checks the data, builds (or, with --resume, loads) the
// tokenizer, encodes every pair against the bounds of the train entry's
// inputs, fills the parameter arena (--init, or --resume with the Adam
// moments) and only then runs the steps: for update `step` (1-based) the
// batch is BatchPlan's batch of that step, the context gets
// txrt_context_set_train_state(ctx, step, seed), and the train_step entry
// runs. Checkpoints (Checkpoint.h) are written atomically every --every
// steps and at the end, with the tokenizer and the loss curve beside them.
// A non-finite loss, or a parameter or Adam moment the update made NaN or
// infinite (every step is checked, FiniteCheck.h), stops the run (exit 1)
// without saving, naming the step and the tensor: nothing non-finite is
// ever written over a checkpoint.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TRAINCOMMAND_H
#define TXRT_DRIVER_TRAINCOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"

#include <ostream>

namespace txrt::driver {

/// Runs `train`; summary lines to `out`, progress and notes to `err` (a bar
/// when `interactive`). Returns the exit code or throws DriverError.
int trainCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                 const TrainOptions &options, std::ostream &out,
                 std::ostream &err, bool interactive);

} // namespace txrt::driver

#endif // TXRT_DRIVER_TRAINCOMMAND_H
