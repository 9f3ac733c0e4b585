//===- Validation.h - train --valid: loss, accuracy and BLEU on held-out pairs -*- C++ -*-===//
//
// Every --valid-every N steps the training loop runs the model over the
// whole validation file with the weights it has now:
//   loss, accuracy  teacher forced through the encode and decode entries
//                   (mean cross-entropy over the non-pad target tokens, no
//                   label smoothing; argmax == target), as `eval` computes
//   BLEU            greedy decoding of every source sentence, scored as
//                   `eval` scores it (translationBleu, EvalCommand.h:
//                   sacreBLEU on detokenized text with a subword tokenizer,
//                   BLEU-4 on the tokenizer's words otherwise)
// (a language model: loss, perplexity and next-token accuracy of the --valid
// text, teacher forced through the logits entry as `eval --text` computes
// them, and no BLEU; it is judged by loss; a classifier: loss, accuracy and
// macro-F1 of the --valid 'label<TAB>text' lines as `eval --data` computes
// them (scoreClassifier, EvalCommand.h), judged by loss or accuracy)
// and keeps what --keep-best, --patience and the warnings need: the best
// score so far and how many validations in a row did not improve it. The
// checkpoint carries both (ValidationRecord, Checkpoint.h), so a --resume
// on the same --valid content and --best-by continues them: the resumed
// run keeps, replaces and stops exactly as the uninterrupted one. A record
// of other validation data or another --best-by is not comparable; the
// resumed run then starts a new best (TrainCommand notes it).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_VALIDATION_H
#define TXRT_DRIVER_VALIDATION_H

#include "core/ModelInfo.h"
#include "core/ModelRunner.h"
#include "data/BatchSource.h"
#include "data/LabeledText.h"
#include "data/ParallelText.h"
#include "data/TextCorpus.h"
#include "data/Tokenizer.h"
#include "loop/Bleu.h"
#include "loop/Checkpoint.h"

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace txrt::driver {

struct ValidationScore {
  int64_t step = 0;
  double loss = 0, accuracy = 0;
  BleuScore bleu;
  bool allEmpty = false, allSame = false; ///< of the greedy outputs
  /// False for a language model and a classifier: no translations, no BLEU.
  bool hasBleu = true;
  /// A classifier's macro-F1 (ClassifierMetrics.h); NaN for other kinds.
  double macroF1 = NAN;
  bool isClassifier = false;
  /// Why greedy decoding could not finish (logits not finite), making the
  /// BLEU NaN; "" when it did.
  std::string decodeProblem;
  /// "validation step 400: loss 3.2100, accuracy 41.20%, BLEU 12.34", or
  /// for a language model "validation step 400: loss 3.2100, perplexity
  /// 24.78, accuracy 41.20%", or for a classifier "validation step 400:
  /// loss 0.3100, accuracy 91.20%, macro-F1 0.9050".
  std::string describe() const;
};

/// exp(loss) as `eval` and the validation lines print it: "%.3f" below
/// 1e7, then "%.4e" (a loss of 300 printed 131 digits into a fixed line,
/// which cut the line and the accuracy after it), "inf" past double's range.
std::string formatPerplexity(double loss);

class Validator {
public:
  /// Reads and encodes `path` with `tokenizer` (errors name FILE:LINE; a
  /// classifier's labels must be among `labels`). A language model's text
  /// is cut into blocks of `block` positions, the training's --block (0:
  /// the tokens input's bound).
  Validator(const ModelInfo &model, ModelRunner &runner,
            const Tokenizer &tokenizer, const std::string &path, int64_t batch,
            BestBy bestBy, const LabelSet *labels = nullptr, int64_t block = 0);

  /// Scores the runner's current weights and records the best. A
  /// validation off the --valid-every schedule (`scheduled` false: the end
  /// of a run, or a stop, between scheduled ones) may be the best (kept by
  /// --keep-best) but plays no part in --patience, which counts the
  /// scheduled validations since the best of them: a run resumed from
  /// there never makes it, and it made the resumed run stop at another
  /// step, with other weights, than the uninterrupted one.
  ValidationScore run(int64_t step, bool scheduled = true);

  /// Asked between batches while a validation runs (train: a stop signal
  /// arrived); true abandons it, throwing Interrupted (TranslateCommand.h)
  /// with nothing recorded. Empty: never.
  void setInterrupt(std::function<bool()> interrupted) {
    interrupted_ = std::move(interrupted);
  }

  /// Whether the last run() improved on every earlier one.
  bool improved() const { return improved_; }
  /// The value --best-by compares of `score` (never the best when it is
  /// not finite).
  double judged(const ValidationScore &score) const;
  /// --best-by's name of that value: "loss", "accuracy" or "BLEU".
  const char *judgedName() const;
  /// Scheduled validations in a row, up to the last, without improving on
  /// the best scheduled one (what --patience counts).
  int64_t sinceBest() const { return sinceBest_; }
  /// The step of the best scheduled validation (--patience's reference).
  int64_t patienceBestStep() const { return patienceBest_.step; }
  /// Whether a scheduled validation has scored a finite best yet.
  bool hasPatienceBest() const { return havePatienceBest_; }
  const ValidationScore &best() const { return best_; }
  size_t pairs() const { return pairs_.size(); }

  /// The best so far for a checkpoint; nullopt before the first run().
  std::optional<ValidationRecord> record() const;
  /// Whether `record` was judged by this validation (the same --valid
  /// content and --best-by); if so, continues from it.
  bool resumeFrom(const ValidationRecord &record);

private:
  /// The scores of the runner's current weights.
  ValidationScore score_(int64_t step);
  /// Compares `score` with the best so far and records it; returns it.
  ValidationScore judge(const ValidationScore &score, bool scheduled);
  /// Whether `score` is better than `than` by --best-by.
  bool better(const ValidationScore &score, const ValidationScore &than) const;

  std::function<bool()> interrupted_;
  const ModelInfo &model_;
  ModelRunner &runner_;
  const Tokenizer &tokenizer_;
  std::string path_;
  uint64_t hash_ = 0; ///< of the file's bytes
  std::vector<EncodedPair> pairs_;
  ParallelText text_; ///< the pairs as read (the BLEU references)
  /// A language model's --valid text, cut into blocks of the T bound as
  /// eval --text cuts it (null for seq2seq models).
  std::unique_ptr<TokenBlocks> blocks_;
  /// A classifier's --valid examples and the label set they are encoded in.
  std::vector<EncodedExample> examples_;
  std::optional<LabelSet> labels_;
  SequenceBounds bounds_;
  int64_t batch_;
  /// The rows every call takes (a constant batch of the spec), else 1.
  int64_t padRows_ = 1;
  BestBy bestBy_;
  bool haveBest_ = false, improved_ = false;
  int64_t sinceBest_ = 0;
  ValidationScore best_;
  /// The best of the scheduled validations (--patience).
  bool havePatienceBest_ = false;
  ValidationScore patienceBest_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_VALIDATION_H
