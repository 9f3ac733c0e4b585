//===- TrainingData.h - what each model kind trains and evaluates on -*- C++ -*-===//
//
// The kind-specific half of train and eval: reading the data file, building
// or checking the tokenizer (and a classifier's label set), checking
// lengths against the model's bounds, and the BatchSource of the training
// loop. The loop itself (TrainCommand.cpp) is the same for every kind.
//
//   seq2seq         --data FILE.tsv  'source<TAB>target' (ParallelText.h)
//   language_model  --text FILE.txt  documents split by blank lines
//                                    (TextCorpus.h), one vocabulary
//   classifier      --data FILE.tsv  'label<TAB>text' (LabeledText.h), one
//                                    vocabulary, the label set
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TRAININGDATA_H
#define TXRT_DRIVER_TRAININGDATA_H

#include "core/ModelInfo.h"
#include "data/BatchSource.h"
#include "data/LabeledText.h"
#include "data/ParallelText.h"
#include "data/TextCorpus.h"
#include "data/Tokenizer.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace txrt::driver {

/// "seq2seq", "language model", "classifier"; ModelKind::None is an
/// InputError naming `command` and the commands such a model supports.
void requireKind(const ModelInfo &model, const std::string &command);
/// InputError unless `model` is seq2seq: "OPTION applies to seq2seq
/// models; 'NAME' is a language model" + `otherKinds` (what to use instead).
void requireSeq2SeqOption(const ModelInfo &model, const std::string &option,
                          const std::string &otherKinds = "");

/// InputError unless `model` is of `kind`: names the model's kind and the
/// command that does the same for it (translate -> generate, ...).
void requireModelKind(const ModelInfo &model, ModelKind kind,
                      const std::string &command);

/// The entry with `role`; ModelError naming `command` when absent.
const EntryInfo &entryWithRole(const ModelInfo &model, std::string_view role,
                               const std::string &command);
/// The input of `entry` with `role`; ModelError when absent.
const TensorSig &inputWithRole(const EntryInfo &entry, std::string_view role);

/// One vocabulary (both sides of the Tokenizer) from `documents`, checked
/// against the model's config vocab.
Tokenizer buildSingleTokenizer(const ModelInfo &model,
                               const std::vector<std::vector<std::string>> &documents,
                               int64_t minFreq, const std::string &path);

/// The number of classes of a classifier: the constant last dim of the
/// `classify` entry's output, else config `classes`.
int64_t classCount(const ModelInfo &model);
/// Checks that `labels` fit the model's classes.
void checkLabelsFitModel(const ModelInfo &model, const LabelSet &labels,
                         const std::string &origin);

/// The label set of a classifier checkpoint (the file already open for
/// its tokenizer and weights): the one inside it, else CKPT.labels.json
/// beside it (InputError when missing or malformed), checked against the
/// model. `explicitPath` (predict and eval --labels): that file, which must
/// equal the labels inside when there are some (an export holds none).
LabelSet loadModelLabels(const ModelInfo &model,
                         const SafetensorsReader &checkpoint,
                         const std::optional<std::string> &explicitPath = {});

/// A classifier's input ids of one text: [SOS] + its pieces as written
/// (SentencePiece) or its words' ids.
std::vector<int32_t> encodeClassifierText(const Tokenizer &tokenizer,
                                          const std::vector<std::string> &words,
                                          std::string_view text);

/// Cuts a classifier's ids to `length` positions when `truncate` (counting
/// the cut texts in `*truncated`); otherwise an over-long text is the
/// problem returned ("the text has 70 words; with the leading [SOS] that is
/// 71 positions, more than ..." + `wayOut`), "" when it fits.
std::string fitClassifierText(std::vector<int32_t> &ids,
                              const Tokenizer &tokenizer,
                              const LengthBound &length, bool truncate,
                              int64_t *truncated, const std::string &wayOut);

/// The note eval and predict print after cutting texts: "note: 3 texts
/// were longer than the 16 positions of dim T and were cut to the first 16
/// ([SOS] included)".
std::string truncationNote(int64_t truncated, const LengthBound &length);

/// The positions per block of a language model's text, for the `tokens`
/// input of `entry` (its length bound `length`): `block` where given
/// (`what` names where it came from: "--block 8", or "the checkpoint's
/// --block 8"), else the bound. A block over the bound, or other than a
/// constant length, is an InputError naming `what`.
int64_t textBlockLength(const EntryInfo &entry, const TensorSig &tokens,
                        const LengthBound &length, std::optional<int64_t> block,
                        const std::string &what);

/// Where a run's fixed label set comes from, for the error about a label
/// outside it: "the labels inside --init-from 'C'", and what to do.
struct LabelsOrigin {
  std::string what, hint;
};

/// Encodes labeled text: encodeClassifierText (at most `length` positions,
/// see fitClassifierText) and the label's id (a label outside `labels` is
/// an error naming FILE:LINE and `origin`).
std::vector<EncodedExample>
encodeLabeledText(const LabeledText &text, const Tokenizer &tokenizer,
                  const LabelSet &labels, const LengthBound &length,
                  bool truncate = false, int64_t *truncated = nullptr,
                  const std::string &wayOut = "",
                  const LabelsOrigin &origin = {});

/// Everything the training loop needs from the data, whatever the kind.
struct TrainingData {
  std::string path;   ///< the data file
  std::string flag;   ///< "--data" or "--text"
  uint64_t hash = 0;  ///< FNV-1a of its bytes
  Tokenizer tokenizer;
  std::optional<LabelSet> labels; ///< classifiers
  LengthBound batchBound;
  /// Language models: the positions of a --text block (else 0).
  int64_t block = 0;
  /// "412 pairs from F: vocabularies 120 / 140"
  std::string summary;
  /// "target tokens", "tokens", "examples": what targetTokens counts.
  std::string unit;
  /// The unigram entropy (nats) of what the loss predicts, for the loop's
  /// UnigramWatch: seq2seq the target_out tokens (target + [EOS]), a
  /// language model the token stream, a classifier the labels (unit
  /// "label").
  double targetEntropy = 0;
  std::string targetUnit = "token";
  /// Seq2seq: what the stored corpus takes (PairIds.h), for train
  /// --verbose: "held: 8 pairs, 56 token ids in 456 bytes (57.0 a pair)".
  std::string storage;
  /// Warnings about the data to print before training (a vocabulary not
  /// built from it that maps much of it to [UNK]).
  std::vector<std::string> warnings;
  /// The batches, once batch size (rows, or the row cap with a token
  /// budget), --max-tokens (0: none) and seed are known. Called once (the
  /// seq2seq corpus moves into the source).
  std::function<std::unique_ptr<BatchSource>(int64_t batch, int64_t maxTokens,
                                             uint64_t seed)>
      makeSource;
};

struct TrainDataOptions {
  std::string dataPath, textPath;
  std::optional<int64_t> block;
  int64_t minFreq = 1;
  /// "word", "spm" or a SentencePiece FILE.model (or a tokenizer file),
  /// with --vocab-size and --spm-type for "spm".
  std::string tokenizerKind = "word";
  std::optional<int64_t> vocabSize;
  bool spmBpe = false;
  /// A resumed run's tokenizer and labels (fixed), else built from the data.
  std::optional<Tokenizer> tokenizer;
  std::optional<LabelSet> labels;
  /// Where `labels` come from (a checkpoint's), for the error about a label
  /// outside them.
  LabelsOrigin labelsOrigin;
  /// Where `tokenizer` comes from, for the warning when it knows few of the
  /// data's words: "the vocabulary of --resume 'C'".
  std::string tokenizerOrigin;
  /// The hash of the data that tokenizer's checkpoint was trained on: the
  /// same data, and its [UNK]s are the words --min-freq left out on
  /// purpose (the warning told a plain resume to start over).
  std::optional<uint64_t> tokenizerDataHash;
};

/// The pairs SentencePiece trains on: at most this many, sampled
/// (reservoir, fixed seed) from a larger file.
constexpr size_t kSubwordSamplePairs = 200000;

/// Both sides (source, target, source, ...) of at most `maxPairs` pairs of
/// the TSV file `path`: all of them in file order when it has no more, else
/// a deterministic uniform sample.
std::vector<std::string> sampleSentences(const std::string &path,
                                         size_t maxPairs);

/// A joint SentencePiece tokenizer trained on both sides of the TSV file
/// `path` (a sample of kSubwordSamplePairs pairs when larger), of
/// `vocabSize` pieces (default: the smaller of the model's source and
/// target vocabulary sizes); InputError naming the config key when
/// `vocabSize` exceeds either. A language model passes the `sentences` of
/// its text (TextCorpus::texts) instead, a classifier its texts as written
/// (LabeledExample::text); `path` then names them.
Tokenizer
trainSubwordTokenizer(const ModelInfo &model, const std::string &path,
                      std::optional<int64_t> vocabSize, bool bpe,
                      const std::vector<std::string> *sentences = nullptr);

/// Reads and encodes the training data of `model`'s kind for `train`.
TrainingData loadTrainingData(const ModelInfo &model, const EntryInfo &train,
                              const TrainDataOptions &options);

} // namespace txrt::driver

#endif // TXRT_DRIVER_TRAININGDATA_H
