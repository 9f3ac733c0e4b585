//===- ParallelText.cpp - TSV parallel text: read, check, encode ----------===//
#include "data/ParallelText.h"
#include "loop/Checkpoint.h"
#include "core/Error.h"
#include "formats/FileIO.h"
#include "formats/Json.h"
#include "core/Init.h"
#include "data/InputValidation.h"
#include "data/TabbedLines.h"
#include "core/Parameters.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

namespace txrt::driver {

namespace {

bool isBlank(std::string_view text) {
  return text.find_first_not_of(" \t\n\r\v\f") == std::string_view::npos;
}

/// Whether both sides of `line` hold a word; problems for those that don't.
bool bothSidesPresent(const TabbedLine &line, const std::string &path,
                      ProblemList &problems) {
  bool source = !isBlank(line.left), target = !isBlank(line.right);
  if (!source)
    problems.add(fileLine(path, line.number) + "the source side is empty");
  if (!target)
    problems.add(fileLine(path, line.number) + "the target side is empty");
  return source && target;
}

constexpr TabbedColumns kPairColumns = {"source", "target"};

} // namespace

ParallelText parseParallelText(std::string_view content,
                               const std::string &path) {
  ParallelText text;
  text.path = path;
  text.hash = fnv1a64(content);
  ProblemList problems;
  forEachTabbedLine(content, path, kPairColumns, problems,
                    [&](const TabbedLine &line) {
                      if (!bothSidesPresent(line, path, problems))
                        return;
                      SentencePair pair;
                      pair.line = line.number;
                      pair.sourceText = std::string(line.left);
                      pair.targetText = std::string(line.right);
                      pair.source = splitWords(pair.sourceText);
                      pair.target = splitWords(pair.targetText);
                      text.pairs.push_back(std::move(pair));
                    });
  // (A line's length is known once every line is read and the tokenizer
  // made: two runs showed the problems of one file.)
  if (!text.pairs.empty())
    problems.note("the lengths of the other lines are checked once these "
                  "are fixed");
  problems.throwIfAny("bad lines in '" + path + "'");
  if (text.pairs.empty())
    throw InputError("'" + path + "' holds no sentence pairs");
  return text;
}

uint64_t forEachSentencePair(const std::string &path,
                             const SentencePairVisitor &visit) {
  ProblemList problems;
  int64_t pairs = 0;
  uint64_t hash = forEachTabbedLineInFile(
      path, kPairColumns, problems, [&](const TabbedLine &line) {
        if (!bothSidesPresent(line, path, problems))
          return;
        ++pairs;
        visit(line);
      });
  // (A line's length is known once every line is read and the tokenizer
  // made: two runs showed the problems of one file.)
  if (pairs > 0)
    problems.note("the lengths of the other lines are checked once these "
                  "are fixed");
  problems.throwIfAny("bad lines in '" + path + "'");
  if (pairs == 0)
    throw InputError("'" + path + "' holds no sentence pairs");
  return hash;
}

ParallelText readParallelText(const std::string &path) {
  return parseParallelText(readWholeFile(path), path);
}

//===----------------------------------------------------------------------===//
// Bounds
//===----------------------------------------------------------------------===//

std::string LengthBound::describe() const {
  if (constant)
    return "the size " + std::to_string(bound) + " the spec gives this axis (" +
           (configKey.empty() ? std::string() : "config " + configKey + "; ") +
           "a dim, `dim N <= " + std::to_string(bound) + "`, lets it vary)";
  std::string text = "dim " + dim + " <= " + std::to_string(bound);
  if (configKey.empty())
    return text + " (recompile with a larger bound to raise it)";
  return text + " (config " + configKey + "; recompile with txc -D " +
         configKey + "=N to raise it)";
}

namespace {

LengthBound boundOf(const ModelInfo &model, const TensorSig &sig, size_t axis,
                    const EntryInfo &entry) {
  if (sig.shape.size() != 2 || sig.dtype != DType::I32)
    throw ModelError("input '" + sig.name + "' of entry '" + entry.name +
                     "' must be i32[batch, length], not " +
                     model.formatSignature(sig));
  const DimRef &ref = sig.shape[axis];
  LengthBound bound;
  if (ref.isSymbolic()) {
    const DimInfo &dim = model.dims[size_t(ref.dim)];
    bound.dim = dim.name;
    bound.bound = dim.bound;
    bound.configKey = model.configKeyForBound(dim);
  } else {
    bound.dim = std::to_string(ref.size);
    bound.bound = ref.size;
    bound.constant = true;
  }
  return bound;
}

} // namespace

LengthBound inputBound(const ModelInfo &model, const EntryInfo &entry,
                       const TensorSig &sig, size_t axis) {
  return boundOf(model, sig, axis, entry);
}

SequenceBounds sequenceBounds(const ModelInfo &model, const EntryInfo &srcEntry,
                              const EntryInfo &tgtEntry) {
  const TensorSig *src = srcEntry.findInputByRole("source");
  const TensorSig *tgt = tgtEntry.findInputByRole("target_in");
  if (!src)
    throw ModelError("entry '" + srcEntry.name +
                     "' has no input with role 'source'");
  if (!tgt)
    throw ModelError("entry '" + tgtEntry.name +
                     "' has no input with role 'target_in'");
  SequenceBounds bounds;
  bounds.batch = boundOf(model, *src, 0, srcEntry);
  bounds.source = boundOf(model, *src, 1, srcEntry);
  bounds.target = boundOf(model, *tgt, 1, tgtEntry);
  return bounds;
}

namespace {

/// Problems for a pair whose ids do not fit `bounds`, or a side that gives
/// none: SentencePiece normalizes a side that is only a non-ASCII blank or
/// an invisible character (U+00A0, U+3000, U+200B) to no piece, which
/// trained silently as an empty sentence (ASCII blanks are refused before).
void checkPairLength(size_t sourceLength, size_t targetLength,
                     const SequenceBounds &bounds, const std::string &unit,
                     const std::string &at, ProblemList &problems,
                     const std::string &wayOut = "") {
  if (sourceLength == 0)
    problems.add(at + "the source side is empty: it gives no " + unit +
                 " (only blank or invisible characters)");
  if (targetLength == 0)
    problems.add(at + "the target side is empty: it gives no " + unit +
                 " (only blank or invisible characters)");
  if (int64_t(sourceLength) > bounds.source.bound)
    problems.add(at + "the source sentence has " +
                 std::to_string(sourceLength) + " " + unit + ", more than " +
                 bounds.source.describe() + wayOut);
  if (int64_t(targetLength) + 1 > bounds.target.bound)
    problems.add(at + "the target sentence has " +
                 std::to_string(targetLength) + " " +
                 (targetLength == 1 ? unit.substr(0, unit.size() - 1) : unit) +
                 "; with [SOS] / [EOS] " + "that is " +
                 std::to_string(targetLength + 1) + " positions, more than " +
                 bounds.target.describe() + wayOut);
}

} // namespace

std::vector<EncodedPair> encodeParallelText(const ParallelText &text,
                                            const Tokenizer &tokenizer,
                                            const SequenceBounds &bounds,
                                            PairCuts *cuts,
                                            const std::string &wayOut) {
  std::vector<EncodedPair> encoded;
  encoded.reserve(text.pairs.size());
  ProblemList problems;
  const std::string unit = tokenizer.unit();
  for (const SentencePair &pair : text.pairs) {
    EncodedPair ids{tokenizer.subwords ? tokenizer.encodeSource(pair.sourceText)
                                       : tokenizer.source.encode(pair.source),
                    tokenizer.subwords ? tokenizer.encodeTarget(pair.targetText)
                                       : tokenizer.target.encode(pair.target),
                    pair.line};
    if (cuts && int64_t(ids.source.size()) > bounds.source.bound) {
      ids.source.resize(size_t(bounds.source.bound));
      ++cuts->sources;
    }
    // [SOS] and T - 1 words fill the bound's T positions of the input; the
    // outputs are those words and the next one (in place of [EOS]).
    if (cuts && int64_t(ids.target.size()) + 1 > bounds.target.bound &&
        bounds.target.bound >= 2) {
      const size_t kept = size_t(std::max<int64_t>(bounds.target.bound - 1, 0));
      ids.nextTarget = ids.target[kept];
      ids.target.resize(kept);
      ++cuts->targets;
    }
    // With cuts only a T bound of 1 leaves a target too long.
    checkPairLength(ids.source.size(), ids.target.size(), bounds, unit,
                    fileLine(text.path, pair.line), problems,
                    cuts ? "; a T bound of 1 holds [SOS] alone: no word of "
                           "a reference can be scored"
                         : wayOut);
    encoded.push_back(std::move(ids));
  }
  problems.throwIfAny("sentences too long or empty in '" + text.path + "'");
  return encoded;
}

PairIds readEncodedParallelText(const std::string &path,
                                const Tokenizer &tokenizer,
                                const SequenceBounds &bounds,
                                uint64_t &outHash) {
  PairIds pairs;
  ProblemList problems;
  const std::string unit = tokenizer.unit();
  outHash = forEachSentencePair(path, [&](const TabbedLine &line) {
    std::vector<int32_t> source = tokenizer.encodeSource(line.left);
    std::vector<int32_t> target = tokenizer.encodeTarget(line.right);
    checkPairLength(source.size(), target.size(), bounds, unit,
                    fileLine(path, line.number), problems);
    if (problems.count() == 0)
      pairs.add(source, target, line.number);
  });
  problems.throwIfAny("sentences too long or empty in '" + path + "'");
  pairs.shrinkToFit();
  return pairs;
}

//===----------------------------------------------------------------------===//
// Vocabularies against the model
//===----------------------------------------------------------------------===//

void requireSomeWords(const Vocabulary &vocabulary, int64_t minFreq,
                      const std::string &what) {
  if (vocabulary.size() > kNumSpecialTokens || minFreq <= 1)
    return;
  throw InputError("--min-freq " + std::to_string(minFreq) +
                   " keeps no word of " + what +
                   ": every word occurs "
                   "fewer times, so every token would be [UNK]; lower "
                   "--min-freq");
}

int32_t modelPadId(const ModelInfo &model) {
  std::optional<double> pad = model.configNumber("pad");
  if (!pad)
    return 0;
  if (*pad != std::floor(*pad) || *pad < 0 ||
      *pad > double(std::numeric_limits<int32_t>::max()))
    throw ModelError("config pad must be an integer in 0.." +
                     std::to_string(std::numeric_limits<int32_t>::max()) +
                     " (txc checks it: a compiler bug)");
  return int32_t(*pad);
}

namespace {

/// `trainedConfig`: the config a checkpoint was trained with (its
/// __metadata__ "config" object), whose value for the vocabulary's key is
/// the one that loads its tensors; nullptr when the tokenizer comes from
/// data.
void checkFits(const ModelInfo &model, const Vocabulary &vocab, bool subwords,
               const char *role, const char *side, const std::string &origin,
               const Json *trainedConfig, ProblemList &problems,
               bool builtFromData = false, int64_t needed = 0) {
  std::optional<VocabularyLimit> found = vocabularyLimit(model, role);
  if (!found || vocab.size() <= found->limit)
    return;
  // The size to recompile with: this side's, or more where one config item
  // sizes both sides (`needed`, the larger side's): -D vocab=31 for the
  // source and =33 for the target was one setting given two values.
  needed = std::max<int64_t>(needed, vocab.size());
  const std::string &key = found->key;
  const int64_t limit = found->limit;
  std::optional<int64_t> trained;
  if (trainedConfig && !key.empty())
    if (const Json *value = jsonMember(*trainedConfig, key))
      trained = jsonInteger(*value);
  const std::string other =
      subwords ? " (or train a SentencePiece model with a smaller "
                 "--vocab-size)"
      : builtFromData ? " (or drop rare words with --min-freq)"
                      : "";
  std::string advice =
      key.empty() ? "change the spec to take " + std::to_string(vocab.size()) +
                        " ids there and recompile" + other
      : trained && *trained >= vocab.size()
          ? "recompile with txc -D " + key + "=" + std::to_string(*trained) +
                " (the checkpoint was trained with config " + key + " = " +
                std::to_string(*trained) + ")"
          : "recompile with txc -D " + key + "=" + std::to_string(needed) +
                other;
  std::string bound =
      key.empty() ? "the model takes ids below " + std::to_string(limit) +
                        " (" + found->what + ")"
                  : "the model's config " + key + " is " +
                        std::to_string(limit);
  // Text without spaces (Chinese, Thai): the cure is subwords, not a larger
  // vocabulary of whole phrases.
  const std::string hint =
      builtFromData && !subwords ? unspacedTextHint(vocab) : "";
  problems.add("the " + std::string(side) + (*side ? " " : "") + "vocabulary " +
               origin + " needs " + std::to_string(vocab.size()) +
               " ids (4 specials + " +
               std::to_string(vocab.size() - kNumSpecialTokens) +
               (subwords ? " pieces" : " words") + ") but " + bound + "; " +
               advice + (hint.empty() ? "" : ". But " + hint));
}

/// The ids both sides need when one config item sizes the source and the
/// target vocabularies, else 0.
int64_t sharedVocabularyNeed(const ModelInfo &model, const Vocabulary &source,
                             const Vocabulary &target) {
  std::optional<VocabularyLimit> a = vocabularyLimit(model, "source");
  std::optional<VocabularyLimit> b = vocabularyLimit(model, "target_in");
  if (!a || !b || a->key.empty() || a->key != b->key)
    return 0;
  return std::max<int64_t>(source.size(), target.size());
}

} // namespace

Tokenizer buildTokenizer(const ModelInfo &model, const ParallelText &text,
                         int64_t minFreq) {
  WordCounts sources, targets;
  for (const SentencePair &pair : text.pairs) {
    for (const std::string &word : pair.source)
      ++sources[word];
    for (const std::string &word : pair.target)
      ++targets[word];
  }
  return buildTokenizer(model, sources, targets, minFreq, text.path);
}

Tokenizer buildTokenizer(const ModelInfo &model, const std::string &path,
                         int64_t minFreq) {
  WordCounts sources, targets;
  forEachSentencePair(path, [&](const TabbedLine &line) {
    for (std::string &word : splitWords(line.left))
      ++sources[std::move(word)];
    for (std::string &word : splitWords(line.right))
      ++targets[std::move(word)];
  });
  return buildTokenizer(model, sources, targets, minFreq, path);
}

Tokenizer buildTokenizer(const ModelInfo &model, const WordCounts &sources,
                         const WordCounts &targets, int64_t minFreq,
                         const std::string &path) {
  int32_t pad = modelPadId(model);
  Tokenizer tokenizer;
  tokenizer.minFreq = minFreq;
  // An embedding shared by encoder and decoder: one vocabulary from both
  // sides' counts (fairseq's joined dictionary), or its rows would be one
  // word in the source and another in the target.
  const bool joint = !sharedSourceTargetTable(model).empty();
  try {
    if (joint) {
      WordCounts both = sources;
      for (const auto &[word, count] : targets)
        both[word] += count;
      tokenizer.source = Vocabulary::fromCounts(both, minFreq, pad);
      tokenizer.target = tokenizer.source;
    } else {
      tokenizer.source = Vocabulary::fromCounts(sources, minFreq, pad);
      tokenizer.target = Vocabulary::fromCounts(targets, minFreq, pad);
    }
  } catch (const std::invalid_argument &error) {
    throw InputError("cannot build the vocabularies of '" + path +
                     "' with config pad = " + std::to_string(pad) + ": " +
                     error.what());
  }
  ProblemList problems;
  requireSomeWords(tokenizer.source, minFreq,
                   "the source side of '" + path + "'");
  requireSomeWords(tokenizer.target, minFreq,
                   "the target side of '" + path + "'");
  std::string origin = "of '" + path + "'";
  const int64_t shared =
      sharedVocabularyNeed(model, tokenizer.source, tokenizer.target);
  // The joint vocabulary against both sides' bounds; once when they are
  // one bound (one message).
  std::optional<VocabularyLimit> sourceLimit = vocabularyLimit(model, "source"),
                                 targetLimit =
                                     vocabularyLimit(model, "target_in");
  if (!joint || !sourceLimit || !targetLimit ||
      sourceLimit->limit != targetLimit->limit ||
      sourceLimit->key != targetLimit->key)
    checkFits(model, tokenizer.source, false, "source",
              joint ? "joint" : "source", origin, nullptr, problems, true,
              shared);
  checkFits(model, tokenizer.target, false, "target_in",
            joint ? "joint" : "target", origin, nullptr, problems, true,
            shared);
  problems.throwIfAny("problems");
  return tokenizer;
}

void checkTokenizerFitsModel(const ModelInfo &model, const Tokenizer &tokenizer,
                             const std::string &origin,
                             const Json *trainedConfig, bool builtFromData) {
  ProblemList problems;
  const bool subwords = tokenizer.subwords != nullptr;
  if (tokenizer.source.words() == tokenizer.target.words() &&
      model.kind != ModelKind::Seq2Seq) {
    // One vocabulary (language models, classifiers).
    checkFits(model, tokenizer.source, subwords, "tokens", "", "in " + origin,
              trainedConfig, problems, builtFromData);
  } else {
    const int64_t shared =
        sharedVocabularyNeed(model, tokenizer.source, tokenizer.target);
    checkFits(model, tokenizer.source, subwords, "source", "source",
              "in " + origin, trainedConfig, problems, builtFromData, shared);
    checkFits(model, tokenizer.target, subwords, "target_in", "target",
              "in " + origin, trainedConfig, problems, builtFromData, shared);
  }
  int32_t pad = modelPadId(model);
  // One vocabulary: said once, without a side.
  const bool one = tokenizer.source.words() == tokenizer.target.words();
  for (auto [side, which] :
       {std::pair{&tokenizer.source, " of its source vocabulary"},
        std::pair{&tokenizer.target, " of its target vocabulary"}}) {
    if (side->padId() != pad)
      problems.add(origin + " has [PAD] at id " +
                   std::to_string(side->padId()) + (one ? "" : which) +
                   " but the model's config pad is " + std::to_string(pad));
    if (one)
      break;
  }
  problems.throwIfAny("problems");
}

std::string jointVocabularyProblem(const ModelInfo &model,
                                   const Tokenizer &tokenizer,
                                   const std::string &origin) {
  if (model.kind != ModelKind::Seq2Seq ||
      tokenizer.source.words() == tokenizer.target.words())
    return "";
  std::string table = sharedSourceTargetTable(model);
  if (table.empty())
    return "";
  return "the model looks up source and target ids in one table '" + table +
         "', but " + origin + " holds two vocabularies (" +
         std::to_string(tokenizer.source.size()) + " source and " +
         std::to_string(tokenizer.target.size()) +
         " target ids): a row would be one word in the source and another "
         "in the target";
}

Tokenizer loadModelTokenizer(const ModelInfo &model,
                             const SafetensorsReader &checkpoint,
                             const std::optional<std::string> &explicitPath,
                             std::ostream &err) {
  const std::string &checkpointPath = checkpoint.path();
  checkCheckpointModel(checkpoint, model);
  std::optional<Tokenizer> stored = checkpointTokenizer(checkpoint);
  std::string origin = "the tokenizer inside '" + checkpointPath + "'";
  Tokenizer tokenizer;
  if (explicitPath) {
    tokenizer = Tokenizer::load(*explicitPath);
    // One vocabulary is read: an edited other side was ignored without a
    // word (train refuses such a file too).
    if ((model.kind == ModelKind::LanguageModel ||
         model.kind == ModelKind::Classifier) &&
        tokenizer.source.words() != tokenizer.target.words())
      throw InputError("--tokenizer '" + *explicitPath +
                       "' holds two vocabularies (source and target), and " +
                       (model.kind == ModelKind::Classifier
                            ? "a classifier"
                            : "a language model") +
                       " reads one; give a file whose sides are the same");
    if (stored)
      if (std::string why = stored->differenceFrom(tokenizer); !why.empty())
        throw InputError("--tokenizer '" + *explicitPath +
                         "' does not match the tokenizer stored inside '" +
                         checkpointPath + "' (" + why +
                         "); the checkpoint was trained with its own, so "
                         "leave out --tokenizer");
    origin = "'" + *explicitPath + "'";
  } else if (stored) {
    tokenizer = std::move(*stored);
  } else {
    std::string path = checkpointSibling(checkpointPath, kTokenizerSuffix);
    std::error_code error;
    if (!std::filesystem::exists(path, error))
      throw InputError("no tokenizer for '" + checkpointPath +
                       "': it has "
                       "none inside and '" +
                       path +
                       "' does not exist (train "
                       "--save writes one; pass --tokenizer FILE to use "
                       "another)");
    err << "note: '" << checkpointPath << "' has no tokenizer inside (an "
        << "older txc's checkpoint, a run --save or an export); using '" << path
        << "', which cannot be checked against it\n";
    tokenizer = Tokenizer::load(path);
    origin = "'" + path + "'";
  }
  // The checkpoint's config says which vocabulary size loads its tensors.
  std::optional<Json> trainedConfig;
  if (const std::string *config = checkpoint.metadataValue("config")) {
    try {
      trainedConfig = parseJson(*config);
    } catch (const std::exception &) {
      // Not JSON: the tensors' checks say what is wrong with the file.
    }
  }
  checkTokenizerFitsModel(model, tokenizer, origin,
                          trainedConfig && trainedConfig->is_object()
                              ? &*trainedConfig
                              : nullptr);
  // Trained so (by a txc before joint vocabularies): the model computes
  // what it was trained to, but says so. Not for a checkpoint without the
  // table (another model's: its tensors' errors come next, alone).
  const std::string table = sharedSourceTargetTable(model);
  if (std::string problem = jointVocabularyProblem(model, tokenizer, origin);
      !problem.empty() && checkpoint.find(table))
    err << "warning: " << problem << "; "
        << (explicitPath ? "right only for weights trained with this very "
                           "tokenizer"
                         : "the checkpoint was trained that way (by a txc "
                           "before joint vocabularies)")
        << ", and a new run without --init-from builds one vocabulary of "
           "both sides\n";
  return tokenizer;
}

} // namespace txrt::driver
