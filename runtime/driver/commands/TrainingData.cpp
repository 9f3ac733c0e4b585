//===- TrainingData.cpp - what each model kind trains and evaluates on ----===//
#include "commands/TrainingData.h"
#include "loop/UnigramWatch.h"
#include "core/Error.h"
#include "data/InputValidation.h"
#include "data/SentencePiece.h"
#include "loop/Checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <tuple>

namespace txrt::driver {

namespace {

/// "1 pair", "2 pairs".
std::string counted(size_t count, const std::string &noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string kindPhrase(ModelKind kind) {
  switch (kind) {
  case ModelKind::Seq2Seq:
    return "a seq2seq model";
  case ModelKind::LanguageModel:
    return "a language model";
  case ModelKind::Classifier:
    return "a classifier";
  case ModelKind::None:
    break;
  }
  return "a model without a kind";
}

/// Names the right data flag for the model's kind.
[[noreturn]] void wrongDataFlag(const ModelInfo &model,
                                const std::string &given) {
  std::string right = model.kind == ModelKind::LanguageModel
                          ? "--text FILE.txt (plain text, a blank line "
                            "between documents)"
                      : model.kind == ModelKind::Classifier
                          ? "--data FILE.tsv ('label<TAB>text' lines)"
                          : "--data FILE.tsv ('source<TAB>target' lines)";
  throw InputError(given + " does not apply: '" + model.model + "' is " +
                   kindPhrase(model.kind) + "; give " + right);
}

/// The warning when a word vocabulary built from this data looks built
/// from text written without spaces (unspacedTextHint).
void warnUnspacedText(TrainingData &data, const TrainDataOptions &options) {
  if (options.tokenizer || options.tokenizerKind != "word" ||
      data.tokenizer.subwords)
    return;
  for (const Vocabulary *vocabulary :
       {&data.tokenizer.source, &data.tokenizer.target}) {
    std::string hint = unspacedTextHint(*vocabulary);
    if (!hint.empty()) {
      data.warnings.push_back(data.flag + " '" + data.path + "': " + hint);
      return;
    }
  }
}

} // namespace

void requireKind(const ModelInfo &model, const std::string &command) {
  if (model.kind != ModelKind::None)
    return;
  throw InputError(
      "'" + model.model +
      "' declares no model kind, so it supports only run, "
      "info and export, not " +
      command +
      " (a model of text ids: write `kind seq2seq`, `kind language_model` or "
      "`kind classifier` in the spec and mark the entry inputs with roles; "
      "a model of other inputs, float features or per-token labels, trains "
      "with `run train --input NAME=FILE ... --load C --save C` a batch at a "
      "time, or `--repeat N` updates on one batch: docs/driver.md, \"Models "
      "without a kind\")");
}

void requireModelKind(const ModelInfo &model, ModelKind kind,
                      const std::string &command) {
  requireKind(model, command);
  if (model.kind == kind)
    return;
  std::string instead = model.kind == ModelKind::LanguageModel
                            ? "train --text, eval --text and generate"
                        : model.kind == ModelKind::Classifier
                            ? "train --data, eval --data and predict"
                            : "train --data, eval --data and translate";
  throw InputError(command + " is for " + kindPhrase(kind) + "; '" +
                   model.model + "' is " + kindPhrase(model.kind) +
                   " (it supports " + instead + ")");
}

void requireSeq2SeqOption(const ModelInfo &model, const std::string &option,
                          const std::string &otherKinds) {
  if (model.kind == ModelKind::Seq2Seq)
    return;
  throw InputError(option + " applies to seq2seq models; '" + model.model +
                   "' is " + kindPhrase(model.kind) + otherKinds);
}

const EntryInfo &entryWithRole(const ModelInfo &model, std::string_view role,
                               const std::string &command) {
  if (const EntryInfo *entry = model.findEntryByRole(role))
    return *entry;
  throw ModelError("'" + model.model + "' (" + kindPhrase(model.kind) +
                   ") has no entry with role '" + std::string(role) +
                   "', which " + command + " needs");
}

const TensorSig &inputWithRole(const EntryInfo &entry, std::string_view role) {
  if (const TensorSig *sig = entry.findInputByRole(role))
    return *sig;
  throw ModelError("entry '" + entry.name + "' has no input with role '" +
                   std::string(role) + "'");
}

Tokenizer buildSingleTokenizer(
    const ModelInfo &model,
    const std::vector<std::vector<std::string>> &documents, int64_t minFreq,
    const std::string &path) {
  int32_t pad = modelPadId(model);
  Tokenizer tokenizer;
  tokenizer.minFreq = minFreq;
  try {
    tokenizer.source = Vocabulary::build(documents, minFreq, pad);
  } catch (const std::invalid_argument &error) {
    throw InputError("cannot build the vocabulary of '" + path +
                     "' with config pad = " + std::to_string(pad) + ": " +
                     error.what());
  }
  requireSomeWords(tokenizer.source, minFreq, "'" + path + "'");
  tokenizer.target = tokenizer.source;
  checkTokenizerFitsModel(model, tokenizer, "'" + path + "'", nullptr,
                          /*builtFromData=*/true);
  return tokenizer;
}

int64_t classCount(const ModelInfo &model) {
  if (const EntryInfo *classify = model.findEntryByRole("classify"))
    if (!classify->outputs.empty() && !classify->outputs[0].shape.empty() &&
        !classify->outputs[0].shape.back().isSymbolic())
      return classify->outputs[0].shape.back().size;
  if (std::optional<int64_t> classes = model.configCount("classes"))
    return *classes;
  throw ModelError("'" + model.model + "' has no classify entry with a "
                   "constant class dim and no config classes");
}

void checkLabelsFitModel(const ModelInfo &model, const LabelSet &labels,
                         const std::string &origin) {
  int64_t classes = classCount(model);
  if (labels.size() <= classes)
    return;
  std::string list;
  for (const std::string &label : labels.labels())
    list += (list.empty() ? "" : ", ") + label;
  std::string fix = model.configCount("classes")
                        ? "; recompile with txc -D classes=" +
                              std::to_string(labels.size())
                        : "";
  // "the labels inside 'C'" have; "'train.tsv'" has.
  const bool plural = origin.rfind("the labels", 0) == 0;
  throw InputError(
      origin + (plural ? " are " : " has ") + std::to_string(labels.size()) +
      (plural               ? " ("
       : labels.size() == 1 ? " label ("
                            : " labels (") +
      list + ") but '" + model.model + "' has " + std::to_string(classes) +
      (classes == 1 ? " class" : " classes") + fix);
}

LabelSet loadModelLabels(const ModelInfo &model,
                         const SafetensorsReader &checkpoint,
                         const std::optional<std::string> &explicitPath) {
  // The labels inside the checkpoint change with its weights in one rename;
  // the file beside it is a copy for other tools (and all that checkpoints
  // from before the labels moved inside have).
  const std::string &checkpointPath = checkpoint.path();
  std::optional<LabelSet> inside = checkpointLabels(checkpoint);
  if (explicitPath) {
    LabelSet given = LabelSet::load(*explicitPath);
    if (inside && inside->labels() != given.labels())
      throw InputError("--labels '" + *explicitPath +
                       "' does not match the labels stored inside '" +
                       checkpointPath +
                       "' (the checkpoint's classes are those labels, in "
                       "their order); leave out --labels");
    checkLabelsFitModel(model, given, "--labels '" + *explicitPath + "'");
    return given;
  }
  if (inside) {
    checkLabelsFitModel(model, *inside,
                        "the labels inside '" + checkpointPath + "'");
    return *inside;
  }
  std::string path = checkpointSibling(checkpointPath, kLabelsSuffix);
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw InputError("no label file for '" + checkpointPath +
                     "': it has no labels inside and '" + path +
                     "' does not exist (train --save writes it beside the "
                     "checkpoint of a classifier; --labels FILE gives one, "
                     "e.g. the training checkpoint's CKPT.labels.json for "
                     "its export)");
  LabelSet labels = LabelSet::load(path);
  checkLabelsFitModel(model, labels, "'" + path + "'");
  return labels;
}

/// train --tokenizer FILE: a SentencePiece .model, or a tokenizer JSON
/// (txc's, or one file of a Hugging Face pair) whose vocabularies the run
/// keeps, checked against the model's config as a built one is. A
/// language model or classifier reads one vocabulary (`single`).
Tokenizer loadTokenizerFile(const ModelInfo &model, const std::string &path,
                            bool single) {
  Tokenizer tokenizer = Tokenizer::load(path);
  if (single && tokenizer.source.words() != tokenizer.target.words())
    throw InputError("--tokenizer '" + path +
                     "' holds two vocabularies (source and target), and " +
                     (model.kind == ModelKind::Classifier
                          ? "a classifier"
                          : "a language model") +
                     " reads one; give a file whose sides are the same");
  checkTokenizerFitsModel(model, tokenizer, "--tokenizer '" + path + "'");
  if (std::string problem = jointVocabularyProblem(
          model, tokenizer, "--tokenizer '" + path + "'");
      !problem.empty())
    throw InputError(problem +
                     "; give a file with one vocabulary for both sides, or "
                     "leave out --tokenizer (train builds one from both "
                     "sides of the data)");
  return tokenizer;
}

std::vector<int32_t> encodeClassifierText(const Tokenizer &tokenizer,
                                          const std::vector<std::string> &words,
                                          std::string_view text) {
  std::vector<int32_t> ids = {tokenizer.source.sosId()};
  std::vector<int32_t> rest = tokenizer.subwords
                                  ? tokenizer.encodeSource(text)
                                  : tokenizer.source.encode(words);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

std::string fitClassifierText(std::vector<int32_t> &ids,
                              const Tokenizer &tokenizer,
                              const LengthBound &length, bool truncate,
                              int64_t *truncated, const std::string &wayOut) {
  if (int64_t(ids.size()) <= length.bound)
    return "";
  if (truncate) {
    ids.resize(size_t(length.bound));
    if (truncated)
      ++*truncated;
    return "";
  }
  const std::string unit = tokenizer.unit();
  return "the text has " + std::to_string(ids.size() - 1) + " " +
         (ids.size() == 2 ? unit.substr(0, unit.size() - 1) : unit) +
         "; with the leading [SOS] that is " + std::to_string(ids.size()) +
         " positions, more than " + length.describe() + wayOut;
}

std::string truncationNote(int64_t truncated, const LengthBound &length) {
  const std::string bound = std::to_string(length.bound);
  return "note: " + std::to_string(truncated) +
         (truncated == 1 ? " text was" : " texts were") + " longer than the " +
         bound + " positions " +
         (length.constant ? "the spec gives" : "of dim " + length.dim) +
         " and " + (truncated == 1 ? "was" : "were") + " cut to the first " +
         bound + " ([SOS] included)";
}

std::vector<EncodedExample>
encodeLabeledText(const LabeledText &text, const Tokenizer &tokenizer,
                  const LabelSet &labels, const LengthBound &length,
                  bool truncate, int64_t *truncated, const std::string &wayOut,
                  const LabelsOrigin &origin) {
  std::vector<EncodedExample> encoded;
  std::string problems;
  size_t count = 0;
  bool unknownLabel = false;
  auto problem = [&](const LabeledExample &example, const std::string &what) {
    if (count++ < kMaxReportedProblems)
      problems += (problems.empty() ? "" : "\n") + text.path + ":" +
                  std::to_string(example.line) + ": " + what;
  };
  for (const LabeledExample &example : text.examples) {
    std::optional<int64_t> label = labels.id(example.label);
    if (!label) {
      problem(example, "the label " + quotedForMessage(example.label) +
                           " is not one " +
                           (origin.what.empty() ? "the model was trained on"
                                                : "of " + origin.what));
      unknownLabel = true;
      continue;
    }
    EncodedExample out;
    out.tokens = encodeClassifierText(tokenizer, example.words, example.text);
    // SentencePiece normalizes a text of only non-ASCII blanks or invisible
    // characters (U+200B, control bytes) to no piece: it trained and was
    // scored as [SOS] alone (a seq2seq side is refused the same way).
    if (out.tokens.size() == 1) {
      problem(example, "the text is empty: it gives no " +
                           std::string(tokenizer.unit()) +
                           " (only blank or invisible characters)");
      continue;
    }
    std::string tooLong = fitClassifierText(out.tokens, tokenizer, length,
                                            truncate, truncated, wayOut);
    if (!tooLong.empty()) {
      problem(example, tooLong);
      continue;
    }
    out.label = int32_t(*label);
    encoded.push_back(std::move(out));
  }
  if (count) {
    if (count > kMaxReportedProblems)
      problems += "\n... and " + std::to_string(count - kMaxReportedProblems) +
                  " more bad lines in '" + text.path + "'";
    if (unknownLabel && !origin.hint.empty())
      problems += "\n" + origin.hint;
    throw InputError(problems);
  }
  return encoded;
}

std::vector<std::string> sampleSentences(const std::string &path,
                                         size_t maxPairs) {
  // Reservoir sampling (Vitter's algorithm R) with a fixed generator: the
  // same file gives the same sample; a file of at most maxPairs pairs
  // gives all of them in file order.
  std::vector<std::pair<std::string, std::string>> sample;
  std::mt19937_64 random(0x5eed);
  size_t seen = 0;
  forEachSentencePair(path, [&](const TabbedLine &line) {
    ++seen;
    if (sample.size() < maxPairs) {
      sample.emplace_back(line.left, line.right);
      return;
    }
    size_t slot = size_t(random() % seen);
    if (slot < maxPairs)
      sample[slot] = {std::string(line.left), std::string(line.right)};
  });
  std::vector<std::string> sentences;
  sentences.reserve(sample.size() * 2);
  for (auto &[source, target] : sample) {
    sentences.push_back(std::move(source));
    sentences.push_back(std::move(target));
  }
  return sentences;
}

Tokenizer trainSubwordTokenizer(const ModelInfo &model,
                                const std::string &path,
                                std::optional<int64_t> vocabSize, bool bpe,
                                const std::vector<std::string> *texts) {
  // One model for both sides: it must fit the smaller vocabulary.
  std::optional<VocabularyLimit> smallest;
  std::vector<VocabularyLimit> limits;
  for (const char *role : model.kind == ModelKind::Seq2Seq
                              ? std::vector<const char *>{"source", "target_in"}
                              : std::vector<const char *>{"tokens"})
    if (std::optional<VocabularyLimit> limit = vocabularyLimit(model, role)) {
      limits.push_back(*limit);
      if (!smallest || limit->limit < smallest->limit)
        smallest = limit;
    }
  if (!smallest)
    smallest = VocabularyLimit{std::numeric_limits<int32_t>::max(), "", ""};
  int64_t size = vocabSize.value_or(smallest->limit);
  // Every config value too small for the model, each once (src_vocab and
  // tgt_vocab: naming one, the advice failed again on the other).
  std::string recompile;
  for (const VocabularyLimit &limit : limits)
    if (!limit.key.empty() && limit.limit < size &&
        recompile.find(" -D " + limit.key + "=") == std::string::npos)
      recompile += " -D " + limit.key + "=" + std::to_string(size);
  if (size > smallest->limit)
    throw InputError(
        "--vocab-size " + std::to_string(size) + " does not fit '" +
        model.model + "': " +
        (smallest->key.empty()
             ? "it takes ids below " + std::to_string(smallest->limit) + " (" +
                   smallest->what + ")"
             : "its config " + smallest->key + " is " +
                   std::to_string(smallest->limit)) +
        (model.kind != ModelKind::Seq2Seq
             ? std::string()
             : " (one SentencePiece model serves the source and the target "
               "side, so it must fit both)") +
        "; give --vocab-size " + std::to_string(smallest->limit) + " or less" +
        (recompile.empty() ? std::string()
                           : ", or recompile with txc" + recompile));
  const std::string smallestKey = smallest->key;
  if (size <= kNumSpecialTokens)
    throw InputError("--vocab-size " + std::to_string(size) +
                     " leaves no room beside the 4 specials");
  std::vector<std::string> sentences =
      texts ? *texts : sampleSentences(path, kSubwordSamplePairs);
  SentencePieceOptions options;
  options.algorithm = bpe ? SentencePieceOptions::Algorithm::Bpe
                          : SentencePieceOptions::Algorithm::Unigram;
  options.vocabSize = int32_t(size);
  options.padId = modelPadId(model);
  if (options.padId >= kNumSpecialTokens)
    throw InputError("--tokenizer spm needs the model's config pad in 0..3, "
                     "not " + std::to_string(options.padId));
  try {
    return Tokenizer::fromSentencePiece(
        SentencePieceModel::train(sentences, options));
  } catch (const InputError &error) {
    // SentencePiece refuses a vocabulary below the data's characters
    // ("... smaller than required_chars. 30 vs 33") or above what the
    // data can fill ("Vocabulary size too high").
    const std::string what = error.what();
    const bool tooSmall = what.find("required_chars") != std::string::npos;
    // "Vocabulary size too high (512). Please set it to a value <= 163.":
    // said in the driver's terms, without SentencePiece's source location.
    const std::string limitText = "Please set it to a value <= ";
    auto limitOf = [&](const std::string &message) -> int64_t {
      size_t at = message.find(limitText);
      if (message.find("Vocabulary size too high") == std::string::npos ||
          at == std::string::npos)
        return 0;
      return std::atoll(message.c_str() + at + limitText.size());
    };
    if (int64_t most = limitOf(what); most > kNumSpecialTokens) {
      // SentencePiece's limit is its estimate for the size asked for, not
      // a bound: asked for 300 it said 216, and 344 (its limit for 640)
      // trained. The size advised is one that trains (a few tries), so
      // that following the advice works.
      std::optional<int64_t> trains;
      for (int64_t candidate = most, tries = 0;
           !trains && candidate > kNumSpecialTokens && tries < 4; ++tries) {
        SentencePieceOptions retry = options;
        retry.vocabSize = int32_t(candidate);
        try {
          (void)SentencePieceModel::train(sentences, retry);
          trains = candidate;
        } catch (const InputError &again) {
          int64_t next = limitOf(again.what());
          if (next <= kNumSpecialTokens || next >= candidate)
            break;
          candidate = next;
        }
      }
      throw InputError(
          "--tokenizer spm: the " + std::to_string(sentences.size()) +
          " sentences of '" + path +
          "' fill fewer SentencePiece pieces than the " + std::to_string(size) +
          (vocabSize ? " --vocab-size asks for"
           : smallestKey.empty()
               ? " ids the model takes (the default --vocab-size)"
               : " of the model's config " + smallestKey +
                     " (the default --vocab-size)") +
          (trains ? "; give --vocab-size " + std::to_string(*trains) +
                        " (checked: it trains on this text), or more text"
                  : "; give a smaller --vocab-size (SentencePiece estimated " +
                        std::to_string(most) +
                        " pieces at most; its estimate changes with the size "
                        "asked for), or more text"));
    }
    // "... smaller than required_chars. 20 vs 52. Increase vocab_size or
    // decrease character_coverage with --character_coverage option.":
    // said in the driver's terms (train has no --character_coverage).
    const std::string vs = " vs ";
    const size_t at = what.find(vs, what.find("required_chars"));
    if (tooSmall && at != std::string::npos) {
      const int64_t needed = std::atoll(what.c_str() + at + vs.size());
      // Past the model's vocabulary, --vocab-size alone cannot follow
      // (it was advised, then refused as not fitting the model).
      std::string recompileFor;
      for (const VocabularyLimit &limit : limits)
        if (!limit.key.empty() && limit.limit < needed &&
            recompileFor.find(" -D " + limit.key + "=") == std::string::npos)
          recompileFor += " -D " + limit.key + "=" + std::to_string(needed);
      if (needed > size)
        throw InputError(
            "--tokenizer spm: the " + std::to_string(sentences.size()) +
            " sentences of '" + path + "' hold more distinct characters than " +
            std::to_string(size) + " pieces take: SentencePiece needs " +
            std::to_string(needed) +
            " at least (each character and its special pieces); " +
            (needed <= smallest->limit
                 ? "give --vocab-size " + std::to_string(needed) +
                       " or more, within the model's vocabulary"
                 : "that is more than the model takes (" +
                       std::to_string(smallest->limit) + " ids" +
                       (recompileFor.empty()
                            ? std::string(")")
                            : "): recompile with txc" + recompileFor) +
                       " and give --vocab-size " + std::to_string(needed) +
                       ", or use the word tokenizer"));
    }
    throw InputError(what + " (from '" + path + "'; " +
                     (tooSmall ? "the data has more distinct characters than "
                                 "that: a larger --vocab-size is needed, "
                                 "within the model's vocabulary"
                               : "a smaller --vocab-size may fit the data") +
                     ")");
  }
}

namespace {

/// The warning when a word vocabulary the run did not build from its data
/// (--resume's, a --tokenizer file's) maps more than a tenth of the data's
/// words to [UNK]: training on it teaches the model [UNK], silently.
/// `sides`: (what, unknown, total) per side ("source words", ...).
void warnUnknownWords(TrainingData &data, const TrainDataOptions &options,
                      const std::vector<std::tuple<std::string, int64_t,
                                                   int64_t>> &sides) {
  // A vocabulary from --resume / --init-from, or a --tokenizer file.
  const bool fromFile = !options.tokenizer && options.tokenizerKind != "word" &&
                        options.tokenizerKind != "spm";
  if ((!options.tokenizer && !fromFile) || data.tokenizer.subwords)
    return; // built from this data, or subwords (no [UNK] to speak of)
  if (options.tokenizerDataHash && *options.tokenizerDataHash == data.hash)
    return; // built from this very data: its [UNK]s are --min-freq's
  std::string shares;
  bool many = false;
  for (const auto &[what, unknown, total] : sides) {
    if (total == 0)
      continue;
    const double share = double(unknown) / double(total);
    many = many || share > 0.1;
    char text[64];
    std::snprintf(text, sizeof(text), "%.1f%%", 100.0 * share);
    shares += (shares.empty() ? "" : " and ") + std::string(text) + " of the " +
              what;
  }
  if (!many)
    return;
  if (fromFile) {
    data.warnings.push_back(
        shares + " of " + data.flag + " '" + data.path +
        "' are [UNK] in the vocabulary of --tokenizer '" +
        options.tokenizerKind +
        "': the model cannot learn those words; without --tokenizer, train "
        "builds a vocabulary from this data");
    return;
  }
  data.warnings.push_back(
      shares + " of " + data.flag + " '" + data.path + "' are [UNK] in " +
      (options.tokenizerOrigin.empty() ? std::string("the given vocabulary")
                                       : options.tokenizerOrigin) +
      ", which was built from other data: the model cannot learn those "
      "words; a new run (without --resume, --init-from or --tokenizer) "
      "builds a vocabulary from this data");
}

} // namespace

int64_t textBlockLength(const EntryInfo &entry, const TensorSig &tokens,
                        const LengthBound &length, std::optional<int64_t> block,
                        const std::string &what) {
  if (!block)
    return length.bound;
  if (*block > length.bound)
    throw InputError(what + " is longer than " + length.describe() +
                     "; give --block " + std::to_string(length.bound) +
                     " or less");
  if (length.constant && *block != length.bound)
    throw InputError(what + ": input '" + tokens.name + "' of entry '" +
                     entry.name + "' takes blocks of " + length.describe() +
                     "; leave --block out or give --block " +
                     std::to_string(length.bound));
  return *block;
}

TrainingData loadTrainingData(const ModelInfo &model, const EntryInfo &train,
                              const TrainDataOptions &options) {
  requireKind(model, "train");
  TrainingData data;
  const int32_t pad = modelPadId(model);
  if (model.kind == ModelKind::LanguageModel) {
    if (options.textPath.empty())
      wrongDataFlag(model, "--data");
    const TensorSig &tokens = inputWithRole(train, "tokens");
    data.batchBound = inputBound(model, train, tokens, 0);
    LengthBound length = inputBound(model, train, tokens, 1);
    data.block =
        textBlockLength(train, tokens, length, options.block,
                        "--block " + std::to_string(options.block.value_or(0)));
    TextCorpus corpus = readTextCorpus(options.textPath);
    data.path = options.textPath;
    data.flag = "--text";
    data.hash = corpus.hash;
    if (options.tokenizer)
      data.tokenizer = *options.tokenizer;
    else if (options.tokenizerKind == "spm")
      data.tokenizer = trainSubwordTokenizer(model, data.path,
                                             options.vocabSize, options.spmBpe,
                                             &corpus.texts);
    else if (options.tokenizerKind != "word")
      data.tokenizer = loadTokenizerFile(model, options.tokenizerKind, true);
    else
      data.tokenizer = buildSingleTokenizer(model, corpus.documents,
                                            options.minFreq, data.path);
    warnUnspacedText(data, options);
    if (data.tokenizer.subwords)
      checkTokenizerFitsModel(model, data.tokenizer,
                              "the SentencePiece model");
    std::vector<int32_t> stream = encodeCorpus(corpus, data.tokenizer);
    std::vector<int64_t> tokenCounts(size_t(data.tokenizer.source.size()), 0);
    for (int32_t id : stream)
      ++tokenCounts[size_t(id)];
    int64_t words = 0;
    for (const auto &document : corpus.documents)
      words += int64_t(document.size());
    warnUnknownWords(data, options,
                     {{"words", tokenCounts[size_t(
                                    data.tokenizer.source.unkId())],
                       words}});
    data.targetEntropy = unigramEntropy(tokenCounts);
    TokenBlocks blocks(std::move(stream), data.block, pad);
    if (blocks.size() == 0)
      throw InputError("'" + data.path + "' has too few words for one "
                       "next-token block");
    data.summary = counted(blocks.size(), "block") + " of " +
                   counted(size_t(data.block), "token") + " (" +
                   counted(size_t(blocks.streamLength()), "token") + ", " +
                   counted(corpus.documents.size(), "document") + ") from " +
                   data.path + ": vocabulary " +
                   std::to_string(data.tokenizer.source.size());
    data.unit = "tokens";
    data.makeSource = [blocks = std::move(blocks),
                       full = data.batchBound.constant](
                          int64_t batch, int64_t maxTokens, uint64_t seed) {
      // Every block has the same length: name it, not "example 1" and its
      // source and target sides.
      if (maxTokens && maxTokens < blocks.blockLength())
        throw InputError(
            "--max-tokens " + std::to_string(maxTokens) +
            " is smaller than one block of the text (" +
            std::to_string(blocks.blockLength()) +
            " positions); raise --max-tokens to " +
            std::to_string(blocks.blockLength()) + " or more, or give --block " +
            std::to_string(maxTokens) + " or less");
      return std::make_unique<LanguageModelBatches>(blocks, batch, seed,
                                                    maxTokens, full);
    };
    return data;
  }
  if (!options.textPath.empty())
    wrongDataFlag(model, "--text");
  data.path = options.dataPath;
  data.flag = "--data";
  if (model.kind == ModelKind::Classifier) {
    const TensorSig &tokens = inputWithRole(train, "tokens");
    inputWithRole(train, "label");
    data.batchBound = inputBound(model, train, tokens, 0);
    LengthBound length = inputBound(model, train, tokens, 1);
    LabeledText text = readLabeledText(data.path);
    data.hash = text.hash;
    std::vector<std::vector<std::string>> documents;
    std::vector<std::string> texts; // as written, for SentencePiece
    for (const LabeledExample &example : text.examples) {
      documents.push_back(example.words);
      texts.push_back(example.text);
    }
    if (options.tokenizer)
      data.tokenizer = *options.tokenizer;
    else if (options.tokenizerKind == "spm")
      data.tokenizer = trainSubwordTokenizer(model, data.path,
                                             options.vocabSize, options.spmBpe,
                                             &texts);
    else if (options.tokenizerKind != "word")
      data.tokenizer = loadTokenizerFile(model, options.tokenizerKind, true);
    else
      data.tokenizer = buildSingleTokenizer(model, documents,
                                            options.minFreq, data.path);
    warnUnspacedText(data, options);
    if (data.tokenizer.subwords)
      checkTokenizerFitsModel(model, data.tokenizer,
                              "the SentencePiece model");
    data.labels = options.labels ? *options.labels : LabelSet::fromData(text);
    checkLabelsFitModel(model, *data.labels, "'" + data.path + "'");
    std::vector<EncodedExample> examples =
        encodeLabeledText(text, data.tokenizer, *data.labels, length, false,
                          nullptr, "", options.labelsOrigin);
    std::vector<int64_t> labelCounts(size_t(data.labels->size()), 0);
    int64_t unknown = 0, words = 0;
    for (const EncodedExample &example : examples) {
      ++labelCounts[size_t(example.label)];
      // Past the leading [SOS]: the text's words.
      words += int64_t(example.tokens.size()) - 1;
      unknown += std::count(example.tokens.begin() + 1, example.tokens.end(),
                            data.tokenizer.source.unkId());
    }
    warnUnknownWords(data, options, {{"words", unknown, words}});
    // One label for every example: nothing to tell apart, often the wrong
    // column or a file of one class (it trained without a word).
    const auto present =
        std::count_if(labelCounts.begin(), labelCounts.end(),
                      [](int64_t count) { return count > 0; });
    if (present == 1 && !examples.empty())
      data.warnings.push_back(
          "every example of " + data.flag + " '" + data.path +
          "' has the label " +
          quotedForMessage(data.labels->label(examples.front().label)) +
          ": a classifier learns nothing from one label (each line is "
          "'label<TAB>text', the label first)");
    data.targetEntropy = unigramEntropy(labelCounts);
    data.targetUnit = "label";
    data.summary = std::to_string(examples.size()) + " examples from " +
                   data.path +
                   (data.tokenizer.subwords ? ": SentencePiece vocabulary "
                                            : ": vocabulary ") +
                   std::to_string(data.tokenizer.source.size()) + ", " +
                   std::to_string(data.labels->size()) +
                   (data.labels->size() == 1 ? " label" : " labels");
    data.unit = "examples";
    BatchShape shape;
    shape.sourceLength = length.padTo();
    shape.fullBatches = data.batchBound.constant;
    // One example a line of the file, in order (a bad line fails above).
    std::vector<int64_t> lines;
    for (const LabeledExample &example : text.examples)
      lines.push_back(example.line);
    data.makeSource = [examples = std::move(examples), pad, shape,
                       lines = std::move(lines), path = data.path](
                          int64_t batch, int64_t maxTokens, uint64_t seed) {
      if (maxTokens) // FILE:LINE of an example too long, not its number
        checkFitsMaxTokens(exampleLengths(examples), maxTokens, [&](size_t i) {
          return "the text at " + path + ":" + std::to_string(lines[i]);
        });
      return std::make_unique<ClassifierBatches>(examples, pad, batch, seed,
                                                 maxTokens, shape);
    };
    return data;
  }
  SequenceBounds bounds = sequenceBounds(model, train, train);
  data.batchBound = bounds.batch;
  // The file is streamed: once to build the tokenizer (word counts, or a
  // sample for SentencePiece) when the run does not bring one, once to
  // encode. Only the ids stay (data/PairIds.h). A file replaced or
  // rewritten meanwhile trained on other pairs than its vocabulary's (a
  // tester's: every word [UNK], exit 0), under a hash of neither: the
  // file must be the same after the last pass as before the first.
  const std::optional<FileStamp> before = regularFileStamp(data.path);
  if (options.tokenizer)
    data.tokenizer = *options.tokenizer;
  else if (options.tokenizerKind == "spm")
    data.tokenizer = trainSubwordTokenizer(model, data.path,
                                           options.vocabSize, options.spmBpe);
  else if (options.tokenizerKind != "word")
    data.tokenizer = loadTokenizerFile(model, options.tokenizerKind, false);
  else
    data.tokenizer = buildTokenizer(model, data.path, options.minFreq);
  warnUnspacedText(data, options);
  if (data.tokenizer.subwords)
    checkTokenizerFitsModel(model, data.tokenizer,
                            "the SentencePiece model");
  PairIds pairs =
      readEncodedParallelText(data.path, data.tokenizer, bounds, data.hash);
  if (before && regularFileStamp(data.path) != before)
    throw InputError(
        data.flag + " '" + data.path + "' changed while it was read (" +
        (!options.tokenizer && (options.tokenizerKind == "word" ||
                                options.tokenizerKind == "spm")
             ? "its vocabulary and its pairs"
             : "the pairs read and the hash recorded for them") +
        " would come from different contents); train again once the file "
        "is written");
  data.summary =
      counted(pairs.size(), "pair") + " from " + data.path +
      (data.tokenizer.subwords
           ? ": one SentencePiece vocabulary of " +
                 std::to_string(data.tokenizer.source.size()) + " pieces"
       // Equal word lists of two tables (a tiny corpus) are two
       // vocabularies that happen to match: said so as the model has them.
       : data.tokenizer.source.words() == data.tokenizer.target.words() &&
               !sharedSourceTargetTable(model).empty()
           ? ": one vocabulary of " +
                 std::to_string(data.tokenizer.source.size()) +
                 " ids for both sides"
           : ": vocabularies " + std::to_string(data.tokenizer.source.size()) +
                 " / " + std::to_string(data.tokenizer.target.size()));
  data.unit = "target tokens";
  std::vector<int64_t> targetCounts(size_t(data.tokenizer.target.size()), 0);
  int64_t sourceWords = 0, sourceUnknown = 0, targetWords = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (int32_t id : pairs.target(i))
      ++targetCounts[size_t(id)];
    targetWords += int64_t(pairs.target(i).size());
    ++targetCounts[size_t(data.tokenizer.target.eosId())];
    for (int32_t id : pairs.source(i)) {
      ++sourceWords;
      sourceUnknown += id == data.tokenizer.source.unkId();
    }
  }
  warnUnknownWords(
      data, options,
      {{"source words", sourceUnknown, sourceWords},
       {"target words",
        targetCounts[size_t(data.tokenizer.target.unkId())], targetWords}});
  {
    char line[160];
    std::snprintf(line, sizeof(line),
                  "held: %zu %s, %zu token ids in %zu bytes (%.1f a pair)",
                  pairs.size(), pairs.size() == 1 ? "pair" : "pairs",
                  pairs.tokens(), pairs.bytes(),
                  double(pairs.bytes()) / double(pairs.size()));
    data.storage = line;
  }
  data.targetEntropy = unigramEntropy(targetCounts);
  // The ids move into the source (no copy of the corpus): a second call
  // would find them gone, so it is an error.
  BatchShape shape;
  shape.sourceLength = bounds.source.padTo();
  shape.targetLength = bounds.target.padTo();
  shape.fullBatches = bounds.batch.constant;
  data.makeSource = [pairs = std::move(pairs), target = data.tokenizer.target,
                     pad, path = data.path, shape,
                     made = false](int64_t batch, int64_t maxTokens,
                                   uint64_t seed) mutable {
    if (made)
      throw std::logic_error("makeSource called twice on seq2seq data");
    made = true;
    if (maxTokens)
      checkFitsMaxTokens(pairLengths(pairs), maxTokens, [&](size_t i) {
        return "the pair at " + path + ":" + std::to_string(pairs.line(i));
      });
    return std::make_unique<Seq2SeqBatches>(std::move(pairs), target, pad,
                                            batch, seed, maxTokens, shape);
  };
  return data;
}

} // namespace txrt::driver
