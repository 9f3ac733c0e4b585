//===- Validation.cpp - train --valid: loss, accuracy and BLEU ------------===//
#include "loop/Validation.h"
#include "commands/EvalCommand.h"
#include "commands/TrainingData.h"
#include "commands/TranslateCommand.h"
#include "core/Error.h"
#include "core/Init.h"
#include "data/Batching.h"
#include "decoding/Decoding.h"
#include "formats/FileIO.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace txrt::driver {

std::string formatPerplexity(double loss) {
  const double perplexity = std::exp(loss);
  char text[32];
  std::snprintf(text, sizeof(text),
                std::isfinite(perplexity) && perplexity >= 1e7 ? "%.4e"
                                                               : "%.3f",
                perplexity);
  return text;
}

std::string ValidationScore::describe() const {
  char line[160];
  // NaN without the sign bit printf shows ("-nan" beside "nan" elsewhere).
  const double loss = std::isnan(this->loss) ? NAN : this->loss;
  if (!std::isnan(macroF1)) {
    std::snprintf(line, sizeof(line),
                  "validation step %lld: loss %.4f, accuracy %.2f%%, "
                  "macro-F1 %.4f",
                  static_cast<long long>(step), loss, 100 * accuracy, macroF1);
    return line;
  }
  if (isClassifier) { // a best from a checkpoint that did not record it
    std::snprintf(line, sizeof(line),
                  "validation step %lld: loss %.4f, accuracy %.2f%%",
                  static_cast<long long>(step), loss, 100 * accuracy);
    return line;
  }
  if (!hasBleu) {
    std::snprintf(line, sizeof(line),
                  "validation step %lld: loss %.4f, perplexity %s, "
                  "accuracy %.2f%%",
                  static_cast<long long>(step), loss,
                  formatPerplexity(loss).c_str(), 100 * accuracy);
    return line;
  }
  std::snprintf(line, sizeof(line),
                "validation step %lld: loss %.4f, accuracy %.2f%%, BLEU %.2f",
                static_cast<long long>(step), loss, 100 * accuracy,
                bleu.bleu);
  return line;
}

Validator::Validator(const ModelInfo &model, ModelRunner &runner,
                     const Tokenizer &tokenizer, const std::string &path,
                     int64_t batch, BestBy bestBy, const LabelSet *labels,
                     int64_t block)
    : model_(model), runner_(runner), tokenizer_(tokenizer), path_(path),
      batch_(batch), bestBy_(bestBy) {
  if (model.kind == ModelKind::Classifier) {
    const EntryInfo &classify =
        entryWithRole(model, "classify", "train --valid");
    runner.reserveArena(classify);
    const TensorSig &tokens = inputWithRole(classify, "tokens");
    batch_ = std::min(batch_, inputBound(model, classify, tokens, 0).bound);
    if (!labels)
      throw std::logic_error("a classifier's Validator needs its labels");
    labels_ = *labels;
    LabeledText text = readLabeledText(path);
    hash_ = text.hash;
    examples_ = encodeLabeledText(text, tokenizer, *labels_,
                                  inputBound(model, classify, tokens, 1));
    return;
  }
  if (model.kind == ModelKind::LanguageModel) {
    const EntryInfo &logits = entryWithRole(model, "logits", "train --valid");
    runner.reserveArena(logits);
    const TensorSig &tokens = inputWithRole(logits, "tokens");
    const LengthBound rows = inputBound(model, logits, tokens, 0);
    batch_ = std::min(batch_, rows.bound);
    padRows_ = rows.padTo();
    TextCorpus corpus = readTextCorpus(path);
    hash_ = corpus.hash;
    blocks_ = std::make_unique<TokenBlocks>(
        encodeCorpus(corpus, tokenizer),
        block > 0 ? block : inputBound(model, logits, tokens, 1).bound,
        modelPadId(model));
    return;
  }
  const EntryInfo &encode = entryWithRole(model, "encode", "train --valid");
  const EntryInfo &decode = entryWithRole(model, "decode", "train --valid");
  runner.reserveArena(encode);
  runner.reserveArena(decode);
  bounds_ = sequenceBounds(model, encode, decode);
  batch_ = std::min(batch_, bounds_.batch.bound);
  padRows_ = bounds_.batch.padTo();
  hash_ = fnv1a64(readWholeFile(path));
  ParallelText text = readParallelText(path);
  pairs_ = encodeParallelText(text, tokenizer, bounds_);
  text_ = std::move(text);
}

ValidationScore Validator::run(int64_t step, bool scheduled) {
  return judge(score_(step), scheduled);
}

ValidationScore Validator::score_(int64_t step) {
  ValidationScore score;
  score.step = step;
  if (labels_) {
    ClassifierScore scored =
        scoreClassifier(runner_, *model_.findEntryByRole("classify"),
                        examples_, *labels_, modelPadId(model_), batch_);
    score.loss = scored.loss;
    score.accuracy = scored.matrix.accuracy();
    score.macroF1 = scored.matrix.macroF1();
    score.hasBleu = false;
    score.isClassifier = true;
    return score;
  }
  if (blocks_) {
    const EntryInfo &logits = *model_.findEntryByRole("logits");
    TokenStats stats;
    for (int64_t begin = 0; begin < blocks_->size(); begin += batch_) {
      if (interrupted_ && interrupted_())
        throw Interrupted{};
      std::vector<size_t> indices(
          size_t(std::min(blocks_->size() - begin, batch_)));
      std::iota(indices.begin(), indices.end(), size_t(begin));
      const int32_t pad = modelPadId(model_);
      Tensor input = padIdsTo(blocks_->tokens(indices), pad, padRows_);
      Tensor targets = padIdsTo(blocks_->targets(indices), pad, padRows_);
      std::vector<Tensor> outputs = runner_.call(logits, {&input});
      accumulateTokenStats(outputs[0], targets, modelPadId(model_), stats);
    }
    score.loss = stats.tokens ? stats.lossSum / double(stats.tokens) : 0.0;
    score.accuracy =
        stats.tokens ? double(stats.correct) / double(stats.tokens) : 0.0;
    score.hasBleu = false;
    return score;
  }
  const int32_t pad = modelPadId(model_);
  TokenStats stats;
  for (size_t begin = 0; begin < pairs_.size(); begin += size_t(batch_)) {
    if (interrupted_ && interrupted_())
      throw Interrupted{};
    std::vector<size_t> indices(
        std::min(pairs_.size() - begin, size_t(batch_)));
    std::iota(indices.begin(), indices.end(), begin);
    Batch current = makeBatch(pairs_, indices, tokenizer_.target, pad,
                              bounds_.source.padTo(), bounds_.target.padTo());
    padBatchRows(current, pad, padRows_);
    Tensor logits = teacherForcedLogits(runner_, current.src, current.tgtIn);
    accumulateTokenStats(logits, current.tgtOut, pad, stats);
  }
  std::unique_ptr<NextTokenModel> decoder = makeDecoder(runner_, pad);
  std::vector<TokenIds> sources;
  for (const EncodedPair &pair : pairs_)
    sources.push_back(pair.source);
  score.loss = stats.tokens ? stats.lossSum / double(stats.tokens) : 0.0;
  score.accuracy =
      stats.tokens ? double(stats.correct) / double(stats.tokens) : 0.0;
  std::vector<TokenIds> outputs;
  try {
    outputs =
        translateAll(*decoder, sources, batch_,
                     decodeOptionsFor(tokenizer_.target, bounds_, std::nullopt),
                     interrupted_, [&](size_t k) {
                       // "valid.tsv:3", for a decoding error
                       return path_ + ":" + std::to_string(pairs_[k].line);
                     });
  } catch (const NonFiniteLogitsError &error) {
    // The weights decode to NaN (a run diverging in its decode entry): a
    // BLEU that is not finite, never the best, not the end of the run with
    // every step since the last save lost.
    score.bleu.bleu = NAN;
    score.decodeProblem = error.finding();
    return score;
  }
  std::vector<std::string> hypotheses;
  for (const TokenIds &ids : outputs)
    hypotheses.push_back(tokenizer_.decodeTarget(ids));

  score.bleu = translationBleu(tokenizer_, outputs, text_);
  score.allEmpty = std::all_of(hypotheses.begin(), hypotheses.end(),
                               [](const std::string &h) { return h.empty(); });
  score.allSame =
      hypotheses.size() > 1 &&
      std::all_of(hypotheses.begin(), hypotheses.end(),
                  [&](const std::string &h) { return h == hypotheses[0]; });
  return score;
}

double Validator::judged(const ValidationScore &score) const {
  return bestBy_ == BestBy::Loss       ? score.loss
         : bestBy_ == BestBy::Accuracy ? score.accuracy
                                       : score.bleu.bleu;
}

const char *Validator::judgedName() const {
  return bestBy_ == BestBy::Loss       ? "loss"
         : bestBy_ == BestBy::Accuracy ? "accuracy"
                                       : "BLEU";
}

bool Validator::better(const ValidationScore &score,
                       const ValidationScore &than) const {
  // A lower loss is better; a higher accuracy or BLEU.
  return bestBy_ == BestBy::Loss ? judged(score) < judged(than)
                                 : judged(score) > judged(than);
}

ValidationScore Validator::judge(const ValidationScore &score,
                                 bool scheduled) {
  // A score that is not finite (a NaN loss from weights that give NaN
  // logits) is never the best and never an improvement: it was picked as
  // the first best, and then nothing compared better than it.
  const bool finite = std::isfinite(judged(score)) && std::isfinite(score.loss);
  improved_ = finite && (!haveBest_ || better(score, best_));
  if (improved_) {
    best_ = score;
    haveBest_ = true;
  }
  if (scheduled) {
    if (finite && (!havePatienceBest_ || better(score, patienceBest_))) {
      patienceBest_ = score;
      havePatienceBest_ = true;
      sinceBest_ = 0;
    } else {
      ++sinceBest_; // before any finite one too: --patience still stops
    }
  }
  return score;
}

std::optional<ValidationRecord> Validator::record() const {
  if (!haveBest_)
    return std::nullopt;
  ValidationRecord record;
  record.validPath = path_;
  record.validHash = hash_;
  record.by = bestBy_;
  record.bestStep = best_.step;
  record.bestLoss = best_.loss;
  record.bestAccuracy = best_.accuracy;
  record.bestBleu = best_.bleu.bleu;
  record.bestMacroF1 = best_.macroF1;
  record.sinceBest = sinceBest_;
  // Step 0: no scheduled validation yet (the best came at a stop).
  if (!havePatienceBest_) {
    record.patienceBestStep = 0;
  } else if (patienceBest_.step != best_.step) {
    record.patienceBestStep = patienceBest_.step;
    record.patienceBestLoss = patienceBest_.loss;
    record.patienceBestAccuracy = patienceBest_.accuracy;
    record.patienceBestBleu = patienceBest_.bleu.bleu;
  }
  return record;
}

bool Validator::resumeFrom(const ValidationRecord &record) {
  if (record.validHash != hash_ || record.by != bestBy_)
    return false;
  best_ = ValidationScore();
  best_.step = record.bestStep;
  best_.loss = record.bestLoss;
  best_.accuracy = record.bestAccuracy;
  best_.bleu.bleu = record.bestBleu;
  // As this kind's validations describe it: no BLEU but for translations.
  best_.hasBleu = model_.kind == ModelKind::Seq2Seq;
  best_.macroF1 = record.bestMacroF1;
  best_.isClassifier = model_.kind == ModelKind::Classifier;
  // A checkpoint written before a NaN was refused as the best holds one:
  // taken as no best yet, since nothing compares better than NaN.
  haveBest_ = std::isfinite(judged(best_));
  improved_ = false;
  sinceBest_ = record.sinceBest;
  // --patience's reference: the best itself unless the record names
  // another (the best came at a run's end or a stop). An older checkpoint
  // has none, and its best may have been such a validation: taken as is.
  patienceBest_ = best_;
  havePatienceBest_ = !record.patienceBestStep || *record.patienceBestStep > 0;
  if (record.patienceBestStep && *record.patienceBestStep > 0) {
    patienceBest_.step = *record.patienceBestStep;
    patienceBest_.loss = record.patienceBestLoss;
    patienceBest_.accuracy = record.patienceBestAccuracy;
    patienceBest_.bleu.bleu = record.patienceBestBleu;
  }
  havePatienceBest_ = havePatienceBest_ && std::isfinite(judged(patienceBest_));
  return true;
}

} // namespace txrt::driver
