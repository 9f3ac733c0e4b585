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
//   BLEU      of greedy translations against the targets (translationBleu:
//             sacreBLEU's defaults on detokenized text with a subword
//             tokenizer, corpus BLEU-4 on the tokenizer's words otherwise);
//             `train --valid` reports the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_EVALCOMMAND_H
#define TXRT_DRIVER_EVALCOMMAND_H

#include "cli/CommandLine.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"
#include "core/Tensor.h"
#include "data/ParallelText.h"
#include "data/Tokenizer.h"
#include "core/ModelRunner.h"
#include "data/BatchSource.h"
#include "data/LabeledText.h"
#include "loop/Bleu.h"
#include "loop/ClassifierMetrics.h"

#include <ostream>

namespace txrt::driver {

/// Sums of the teacher-forced statistics.
struct TokenStats {
  double lossSum = 0;
  int64_t tokens = 0, correct = 0;
  /// Set by the call whose row first gave a loss that is not finite: that
  /// row of its batch (-1 before; a later call leaves it), for the error to
  /// name the example.
  int64_t firstNonFiniteRow = -1;
};

/// Adds logits [B, T, V] against targets [B, T] (pad tokens skipped).
void accumulateTokenStats(const Tensor &logits, const Tensor &targets,
                          int32_t pad, TokenStats &stats);

/// The BLEU `eval` and `train --valid` report for the greedy `outputs` of
/// the pairs of `text` (in order): with a subword tokenizer sacreBLEU's
/// defaults (sacreBleu, Bleu.h) on the detokenized outputs against the
/// targets as written; with a word-level one corpus BLEU-4 on the
/// tokenizer's words (BleuAccumulator: no smoothing, effective order).
BleuScore translationBleu(const Tokenizer &tokenizer,
                          const std::vector<std::vector<int32_t>> &outputs,
                          const ParallelText &text);

/// What `eval --data` of a classifier and its `train --valid` report: the
/// mean cross-entropy of the true labels (softmax over the model's classes,
/// in double) and the confusion matrix of argmax predictions among the
/// trained labels (lowest id on ties).
struct ClassifierScore {
  double loss = 0;
  /// The first example whose loss is not finite (-1: none).
  int64_t firstNonFinite = -1;
  ConfusionMatrix matrix{1};
};

/// Scores encoded examples with the `classify` entry, `batch` rows a call.
ClassifierScore scoreClassifier(ModelRunner &runner, const EntryInfo &classify,
                                const std::vector<EncodedExample> &examples,
                                const LabelSet &labels, int32_t pad,
                                int64_t batch);

int evalCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                const EvalOptions &options, std::ostream &out,
                std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_EVALCOMMAND_H
