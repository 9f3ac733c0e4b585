//===- InfoCommand.h - `PROGRAM info`: describe the model -------*- C++ -*-===//
//
// The report of `PROGRAM info`: model, source, compile flags, kind, config,
// dims with bounds, entries with signatures, roles and arena sizes (the
// planned activation arena against all its tensors unplanned: the planner's
// saving), parameters with shapes and initializers.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_INFOCOMMAND_H
#define TXRT_DRIVER_INFOCOMMAND_H

#include "core/Memory.h" // formatBytes
#include "core/ModelInfo.h"

#include <ostream>
#include <string>

namespace txrt::driver {

/// `info --json`: the model's metadata (floats as floats,
/// markMetadataFloats) with
/// "runtime": {"march", "cpu_features"}, what the libtxrt linked in needs
/// of the CPU beside the model's own "cpu_features".
std::string modelInfoJson(const std::string &metadata);

/// Prints model, source, compile flags, kind, config, dims, entries
/// (signatures, roles, activation arena vs unplanned tensor bytes) and
/// parameters.
void printModelInfo(const ModelInfo &model, std::ostream &out);

/// `info --load CKPT`: the lines on the checkpoint's training position
/// (step, next batch, batch size, the update frequency and ranks that
/// trained it, seed, data). InputError (exit 2) when the file does not fit
/// the model, as for --resume.
std::string describeCheckpoint(const ModelInfo &model,
                               const std::string &path);

/// `info --json --load CKPT`: the same as one JSON object ("checkpoint",
/// "model", "step", "next" {"epoch", "batch"}, "batch_size",
/// "max_tokens", "update_freq", "ranks", "threads", "seed", "data" {"path",
/// "fnv1a64"}, "block", "precision", "config", "config_as_this_executable",
/// "tokenizer", "labels", "ema_decay", "validation"; null where the
/// checkpoint records nothing, and "next" and "data" null for a model
/// without a kind, which trains through `run`). Errors as
/// describeCheckpoint's.
std::string checkpointJson(const ModelInfo &model, const std::string &path);

} // namespace txrt::driver

#endif // TXRT_DRIVER_INFOCOMMAND_H
