//===- ParallelText.h - TSV parallel text: read, check, encode --*- C++ -*-===//
//
// Training and evaluation data is UTF-8 text, one pair per line:
//
//   source sentence<TAB>target sentence
//
// A trailing '\r' is dropped (CRLF files). Every line must have exactly one
// tab and words (splitWords) on both sides; the errors name FILE:LINE:
//   empty line, missing tab, more than one tab, empty source / target side,
// and, once the model's bounds are known, a sentence longer than the bound
// of its dim: a source sentence has at most S words (S = the bound of the
// `src` input's sequence dim), a target at most T - 1 ([SOS] + target and
// target + [EOS] both have T positions). The message names the dim, its
// bound, the config key that sets it and the txc flag that raises it.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PARALLELTEXT_H
#define TXRT_DRIVER_PARALLELTEXT_H

#include "core/ModelInfo.h"
#include "formats/Safetensors.h"
#include "data/PairIds.h"
#include "data/TabbedLines.h"
#include "data/Tokenizer.h"
#include "formats/Json.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace txrt::driver {

struct SentencePair {
  std::vector<std::string> source, target; ///< words (splitWords)
  std::string sourceText, targetText;      ///< the sides as written
  int64_t line = 0;                        ///< 1-based line in the file
};

struct ParallelText {
  std::string path;
  std::vector<SentencePair> pairs;
  uint64_t hash = 0; ///< FNV-1a of the file's bytes
};

/// Reads and checks a TSV file; throws InputError listing every bad line
/// (at most kMaxReportedProblems).
ParallelText readParallelText(const std::string &path);

/// Parses TSV content (as readParallelText does; `path` names it in errors).
ParallelText parseParallelText(std::string_view content,
                               const std::string &path);

using SentencePairVisitor = std::function<void(const TabbedLine &)>;

/// Streams `path` in blocks, checking each line as readParallelText does,
/// and visits every good pair (its sides as written: line.left the source,
/// line.right the target); throws the bad lines at the end. Returns the
/// FNV-1a hash of the file. Nothing of the text is kept.
uint64_t forEachSentencePair(const std::string &path,
                             const SentencePairVisitor &visit);

/// The length bounds of one side of the data, from a model entry input.
struct LengthBound {
  std::string dim;       ///< "S" (a constant axis: its size, "16")
  int64_t bound = 0;     ///< the dim's bound (positions)
  std::string configKey; ///< "max_len", or "" when unknown
  /// The spec writes a size (i32[B, 16]), not a dim: every batch has
  /// exactly `bound` along this axis, which the driver pads to.
  bool constant = false;
  /// "dim S <= 16 (config max_len; recompile with txc -D max_len=N to
  /// raise it)"; a constant: "the size 16 the spec gives this axis
  /// (a dim, `dim N <= 16`, lets it vary)".
  std::string describe() const;
  /// What an axis of this bound takes: `bound` when constant, else 1 (the
  /// least a padded tensor has).
  int64_t padTo() const { return constant ? bound : 1; }
};

/// Bounds of the batches a model takes: B, S (source positions) and T
/// (target positions).
struct SequenceBounds {
  LengthBound batch, source, target;
};

/// The bound of `axis` of the i32[batch, length] input `sig` of `entry`;
/// ModelError when the input does not have that shape.
LengthBound inputBound(const ModelInfo &model, const EntryInfo &entry,
                       const TensorSig &sig, size_t axis);

/// The bounds from a [B, S] `src` input and a [B, T] target input of the
/// model's entries (the train entry's, else encode's and decode's); throws
/// ModelError when the entries do not have that shape.
SequenceBounds sequenceBounds(const ModelInfo &model, const EntryInfo &srcEntry,
                              const EntryInfo &tgtEntry);

/// Ids of one pair: src words, and the target words (no [SOS] / [EOS]).
struct EncodedPair {
  std::vector<int32_t> source, target;
  int64_t line = 0;
  /// A target cut to the T - 1 words the bound holds with [SOS] (PairCuts):
  /// the reference's next word, the target where [EOS] would be; -1 when
  /// the target is whole.
  int32_t nextTarget = -1;
};

/// Sentences longer than the bounds, cut instead of refused (eval
/// --truncate) and counted: a source keeps its first S words (or pieces),
/// a target its first T - 1 and the next one (EncodedPair::nextTarget), so
/// that teacher forcing scores the reference's first T words as written.
struct PairCuts {
  int64_t sources = 0, targets = 0;
};

/// Encodes `text` with `tokenizer` (its words, or the sides as written
/// for a subword tokenizer), checking every sentence against `bounds`
/// (errors with FILE:LINE, at most kMaxReportedProblems; a too-long one's
/// ends with `wayOut`), or cutting the too-long ones into `cuts`.
std::vector<EncodedPair> encodeParallelText(const ParallelText &text,
                                            const Tokenizer &tokenizer,
                                            const SequenceBounds &bounds,
                                            PairCuts *cuts = nullptr,
                                            const std::string &wayOut = "");

/// Streams the TSV file `path` (forEachSentencePair) and encodes each pair
/// as it is read, checking it against `bounds` like encodeParallelText:
/// only the ids are kept (PairIds.h). `outHash`: the file's FNV-1a.
PairIds readEncodedParallelText(const std::string &path,
                                const Tokenizer &tokenizer,
                                const SequenceBounds &bounds,
                                uint64_t &outHash);

/// Builds a tokenizer from `text` and checks that each vocabulary fits the
/// model's config `src_vocab` / `tgt_vocab` (or `vocab`), else InputError
/// naming the key, the size needed and the txc -D flag. A model whose
/// source and target ids pick rows of one table (sharedSourceTargetTable)
/// gets one vocabulary of both sides' words.
Tokenizer buildTokenizer(const ModelInfo &model, const ParallelText &text,
                         int64_t minFreq);
/// The same from the file `path`, streamed (the words are counted, the
/// text is not kept).
Tokenizer buildTokenizer(const ModelInfo &model, const std::string &path,
                         int64_t minFreq);
/// The same from counted words (`path` names the data in errors).
Tokenizer buildTokenizer(const ModelInfo &model, const WordCounts &sources,
                         const WordCounts &targets, int64_t minFreq,
                         const std::string &path);

/// Checks a loaded tokenizer against the model's vocabulary sizes; `origin`
/// names it in errors ("'t.json'", "the tokenizer inside 'ckpt'");
/// `trainedConfig`, a checkpoint's config object, gives the advice the size
/// it was trained with; `builtFromData` (a vocabulary train built) adds
/// "or drop rare words with --min-freq", which only such a run can do.
void checkTokenizerFitsModel(const ModelInfo &model, const Tokenizer &tokenizer,
                             const std::string &origin,
                             const Json *trainedConfig = nullptr,
                             bool builtFromData = false);

/// What is wrong with `tokenizer` (named `origin`) for a model whose source
/// and target ids pick rows of one table: two different vocabularies, which
/// make a row one word in the source and another in the target; "" when
/// nothing is (one vocabulary, or no shared table).
std::string jointVocabularyProblem(const ModelInfo &model,
                                   const Tokenizer &tokenizer,
                                   const std::string &origin);

/// The tokenizer of `checkpoint`, checked against the model: the one stored
/// inside it (Checkpoint.h); `explicitPath` (--tokenizer) when given, which
/// must then equal the stored one; for a checkpoint without one, its
/// CKPT.tokenizer.json (with a note on `err` that the pair cannot be
/// verified).
Tokenizer loadModelTokenizer(const ModelInfo &model,
                             const SafetensorsReader &checkpoint,
                             const std::optional<std::string> &explicitPath,
                             std::ostream &err);

/// The model's config `pad` (0 when absent).
int32_t modelPadId(const ModelInfo &model);

/// InputError when `--min-freq` left `vocabulary` (built from `what`) with
/// no word besides the special tokens: every token would be [UNK], and the
/// run trained on nothing without a word.
void requireSomeWords(const Vocabulary &vocabulary, int64_t minFreq,
                      const std::string &what);

} // namespace txrt::driver

#endif // TXRT_DRIVER_PARALLELTEXT_H
