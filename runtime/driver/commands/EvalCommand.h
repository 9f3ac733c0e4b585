//===- EvalCommand.h - `PROGRAM eval`: loss, accuracy, BLEU -----*- C++ -*-===//
//
// On every pair of the data, in file order and batches of --batch:
//
//   loss      mean over the non-pad target tokens (tgt_out = target + [EOS])
//             of -log softmax(logits)[target], computed here in double from
//             the decode entry's logits given tgt_in = [SOS] + target
//             (teacher forcing, no label smoothing);
//   accuracy  the share of those tokens whose argmax (lowest id on ties) is
//             the target;
//   BLEU      corpus BLEU-4 (Bleu.h) of greedy translations against the
//             target sentences, both as tokenizer words.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_EVALCOMMAND_H
#define TXRT_DRIVER_EVALCOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"
#include "core/Tensor.h"

#include <ostream>

namespace txrt::driver {

/// Sums of the teacher-forced statistics.
struct TokenStats {
  double lossSum = 0;
  int64_t tokens = 0, correct = 0;
};

/// Adds logits [B, T, V] against targets [B, T] (pad tokens skipped).
void accumulateTokenStats(const Tensor &logits, const Tensor &targets,
                          int32_t pad, TokenStats &stats);

int evalCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                const EvalOptions &options, std::ostream &out,
                std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_EVALCOMMAND_H
