//===- PredictCommand.h - `PROGRAM predict`: label texts --------*- C++ -*-===//
//
// Classifiers: the `classify` entry (tokens[, segments] -> logits [B, C])
// over [SOS] + the text's words, right-padded, segments zero. Shared by
// predict and eval.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PREDICTCOMMAND_H
#define TXRT_DRIVER_PREDICTCOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"
#include "core/ModelRunner.h"

#include <istream>
#include <ostream>
#include <vector>

namespace txrt::driver {

/// Class log-probabilities (log-softmax of the logits, exact where a
/// probability would underflow) of encoded texts ([SOS] + word ids each),
/// at most `batch` texts of one length per call (none padded): [texts]
/// [classes], in the texts' order.
std::vector<std::vector<double>>
classifyEncoded(ModelRunner &runner, const EntryInfo &classify,
                const std::vector<std::vector<int32_t>> &texts, int32_t pad,
                int64_t batch);

int predictCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                   const PredictOptions &options, std::istream &in,
                   std::ostream &out, std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_PREDICTCOMMAND_H
