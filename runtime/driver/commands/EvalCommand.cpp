//===- EvalCommand.cpp - `PROGRAM eval`: what each model kind is scored by ===//
//
//   seq2seq         teacher-forced loss, token accuracy, greedy BLEU
//   language model  next-token loss, perplexity and accuracy over blocks of
//                   the T bound (the logits entry)
//   classifier      accuracy, macro-F1, the confusion table (classify)
//
//===----------------------------------------------------------------------===//
#include "commands/EvalCommand.h"
#include "commands/PredictCommand.h"
#include "commands/TrainingData.h"
#include "commands/TranslateCommand.h"
#include "core/Error.h"
#include "core/ModelRunner.h"
#include "data/Batching.h"
#include "data/ParallelText.h"
#include "decoding/Decoding.h"
#include "loop/Bleu.h"
#include "loop/Checkpoint.h"
#include "loop/ClassifierMetrics.h"
#include "loop/Ema.h"
#include "loop/Validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace txrt::driver {

void accumulateTokenStats(const Tensor &logits, const Tensor &targets,
                          int32_t pad, TokenStats &stats) {
  const int64_t rows = targets.shape[0], length = targets.shape[1];
  const int64_t vocab = logits.shape[2];
  const float *scores = logits.as<float>();
  const int32_t *ids = targets.as<int32_t>();
  for (int64_t i = 0; i < rows * length; ++i) {
    if (ids[i] == pad)
      continue;
    const float *row = scores + i * vocab;
    // torch.argmax: the first NaN, else the first largest (a NaN past id 0
    // was skipped, and counted a correct token where the loss was NaN).
    double top = row[0];
    int32_t best = 0;
    for (int64_t v = 1; v < vocab && !std::isnan(top); ++v)
      if (!(row[v] <= top)) {
        top = row[v];
        best = int32_t(v);
      }
    double sum = 0;
    for (int64_t v = 0; v < vocab; ++v)
      sum += std::exp(double(row[v]) - top);
    const double loss = top + std::log(sum) - double(row[ids[i]]);
    if (!std::isfinite(loss) && stats.firstNonFiniteRow < 0)
      stats.firstNonFiniteRow = i / length;
    stats.lossSum += loss;
    stats.correct += best == ids[i];
    ++stats.tokens;
  }
}

namespace {

int64_t evalBatch(const EvalOptions &options, const LengthBound &bound) {
  int64_t batch = options.batch.value_or(bound.bound);
  if (batch > bound.bound)
    throw InputError("--batch " + std::to_string(batch) +
                     " is larger than " + bound.describe());
  return batch;
}

/// "FILE:LINE" of a pair of the --data file.
std::string pairLine(const EvalOptions &options, const EncodedPair &pair) {
  return options.dataPath + ":" + std::to_string(pair.line);
}

/// Finite weights can still give non-finite outputs (saved by a run that
/// diverged at its next step): a NaN loss is an error, not a score.
void requireFiniteLoss(double loss, const std::string &checkpoint,
                       const std::string &where = "") {
  if (std::isfinite(loss))
    return;
  // "nan", never printf's "-nan".
  const char *text = std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf";
  throw KernelError("the loss over this data is " + std::string(text) +
                    (where.empty() ? "" : " (first at " + where + ")") +
                    ": the weights in '" + checkpoint +
                    "' give non-finite outputs (saved by a run that "
                    "diverged?); use an earlier checkpoint");
}

void printLossLines(const TokenStats &stats, const char *what,
                    std::ostream &out) {
  char line[200];
  std::snprintf(
      line, sizeof(line),
      "loss       %.4f (mean cross-entropy over %lld %s, "
      "perplexity %s)\n",
      stats.tokens ? stats.lossSum / double(stats.tokens) : 0.0,
      static_cast<long long>(stats.tokens), what,
      stats.tokens
          ? formatPerplexity(stats.lossSum / double(stats.tokens)).c_str()
          : "0.000");
  out << line;
  std::snprintf(line, sizeof(line), "accuracy   %.2f%% (%lld / %lld tokens)\n",
                stats.tokens ? 100.0 * double(stats.correct) /
                                   double(stats.tokens)
                             : 0.0,
                static_cast<long long>(stats.correct),
                static_cast<long long>(stats.tokens));
  out << line;
}

int evalLanguageModel(const ModelInfo &model, const txc_entry_fn *entryTable,
                      const EvalOptions &options, std::ostream &out,
                      std::ostream &err) {
  if (options.textPath.empty())
    throw InputError("eval --data does not apply: '" + model.model +
                     "' is a language model; give --text FILE.txt");
  const EntryInfo &logits = entryWithRole(model, "logits", "eval");
  const TensorSig &tokens = inputWithRole(logits, "tokens");
  const LengthBound rows = inputBound(model, logits, tokens, 0);
  int64_t batch = evalBatch(options, rows);
  LengthBound length = inputBound(model, logits, tokens, 1);
  ModelRunner runner(model, entryTable, options.threads);
  runner.reserveArena(logits);
  SafetensorsReader checkpoint(options.loadPath);
  // The weights first: a checkpoint this executable cannot load is the
  // error, without a note on the blocks it would have scored.
  Tokenizer tokenizer =
      loadModelTokenizer(model, checkpoint, options.tokenizerPath, err);
  loadWeightsForInference(checkpoint, model, runner.params().write(),
                          options.noEma, err);
  // The blocks the model was trained on (a learned position past them was
  // never trained), unless --block says otherwise; this executable's bound
  // where it takes no such block (compiled for shorter texts).
  std::optional<int64_t> block = options.block;
  if (const int64_t trained = recordedBlock(checkpoint); !block && trained) {
    if (trained <= length.bound &&
        (!length.constant || trained == length.bound))
      block = trained;
    else
      err << "note: '" << options.loadPath << "' was trained on blocks of "
          << trained << " tokens; this executable takes " << length.describe()
          << ": scoring blocks of " << length.bound
          << " (--block N for others)\n";
  }
  const int64_t blockLength =
      textBlockLength(logits, tokens, length, block,
                      "--block " + std::to_string(block.value_or(0)));
  const int32_t pad = modelPadId(model);
  TextCorpus corpus = readTextCorpus(options.textPath);
  std::vector<int32_t> stream = encodeCorpus(corpus, tokenizer);
  // The stream's first token is no target (blocks predict the next ones).
  if (stream.size() > 1) {
    UnknownTokenCount targets(tokenizer.source.unkId());
    targets.add(stream.data() + 1, stream.data() + stream.size(), "");
    if (std::string note =
            targets.scoredNote("next tokens of '" + options.textPath + "'",
                               nullptr, "the loss, perplexity and accuracy");
        !note.empty())
      err << note << "\n";
  }
  TokenBlocks blocks(std::move(stream), blockLength, pad);
  TokenStats stats;
  std::string firstNonFinite; // the first block whose loss is not finite
  for (int64_t begin = 0; begin < blocks.size(); begin += batch) {
    std::vector<size_t> indices(size_t(std::min(blocks.size() - begin, batch)));
    std::iota(indices.begin(), indices.end(), size_t(begin));
    // A constant batch: the last rows are pad (no target tokens).
    Tensor input = padIdsTo(blocks.tokens(indices), pad, rows.padTo());
    Tensor targets = padIdsTo(blocks.targets(indices), pad, rows.padTo());
    std::vector<Tensor> outputs = runner.call(logits, {&input});
    const bool seen = stats.firstNonFiniteRow >= 0;
    accumulateTokenStats(outputs[0], targets, pad, stats);
    if (!seen && stats.firstNonFiniteRow >= 0) {
      const int64_t first = begin + stats.firstNonFiniteRow;
      firstNonFinite = "block " + std::to_string(first + 1) + " of " +
                       std::to_string(blocks.size()) + ", tokens " +
                       std::to_string(first * blockLength + 1) + " to " +
                       std::to_string(std::min((first + 1) * blockLength + 1,
                                               blocks.streamLength())) +
                       " of '" + options.textPath + "'";
    }
  }
  // Before any score: an accuracy of NaN logits' argmax is none.
  if (stats.tokens)
    requireFiniteLoss(stats.lossSum, options.loadPath, firstNonFinite);
  out << "blocks     " << blocks.size() << " of " << blockLength << " tokens ("
      << options.textPath << ")\n";
  printLossLines(stats, "next tokens", out);
  return kExitOk;
}

int evalClassifier(const ModelInfo &model, const txc_entry_fn *entryTable,
                   const EvalOptions &options, std::ostream &out,
                   std::ostream &err) {
  if (!options.textPath.empty())
    throw InputError("eval --text does not apply: '" + model.model +
                     "' is a classifier; give --data FILE.tsv");
  const EntryInfo &classify = entryWithRole(model, "classify", "eval");
  const TensorSig &tokens = inputWithRole(classify, "tokens");
  int64_t batch = evalBatch(options, inputBound(model, classify, tokens, 0));
  LengthBound length = inputBound(model, classify, tokens, 1);
  ModelRunner runner(model, entryTable, options.threads);
  runner.reserveArena(classify);
  SafetensorsReader checkpoint(options.loadPath);
  Tokenizer tokenizer =
      loadModelTokenizer(model, checkpoint, options.tokenizerPath, err);
  LabelSet labels = loadModelLabels(model, checkpoint, options.labelsPath);
  loadWeightsForInference(checkpoint, model, runner.params().write(),
                          options.noEma, err);
  LabeledText text = readLabeledText(options.dataPath);
  int64_t truncated = 0;
  std::vector<EncodedExample> examples = encodeLabeledText(
      text, tokenizer, labels, length, options.truncate, &truncated,
      "; give --truncate to keep the first " + std::to_string(length.bound));
  if (truncated)
    err << truncationNote(truncated, length) << "\n";
  {
    UnknownTokenCount unknown(tokenizer.source.unkId());
    for (size_t i = 0; i < examples.size(); ++i)
      unknown.add(examples[i].tokens,
                  options.dataPath + ":" +
                      std::to_string(text.examples[i].line));
    if (std::string note = unknown.note("text", tokenizer.unit());
        !note.empty())
      err << note << "\n";
  }
  ClassifierScore score = scoreClassifier(runner, classify, examples, labels,
                                          modelPadId(model), batch);
  // Before any score: an accuracy of NaN logits' argmax is none.
  if (!examples.empty())
    requireFiniteLoss(
        score.loss, options.loadPath,
        score.firstNonFinite < 0
            ? ""
            : options.dataPath + ":" +
                  std::to_string(
                      text.examples[size_t(score.firstNonFinite)].line));
  const ConfusionMatrix &matrix = score.matrix;
  char line[200];
  out << "examples   " << examples.size() << " (" << options.dataPath
      << ")\n";
  std::snprintf(line, sizeof(line), "loss       %.4f (mean cross-entropy)\n",
                score.loss);
  out << line;
  std::snprintf(line, sizeof(line), "accuracy   %.2f%% (%lld / %lld)\n",
                100.0 * matrix.accuracy(),
                static_cast<long long>(std::llround(matrix.accuracy() *
                                                    double(matrix.total()))),
                static_cast<long long>(matrix.total()));
  out << line;
  std::snprintf(line, sizeof(line), "macro-F1   %.4f\n", matrix.macroF1());
  out << line << "\n" << matrix.formatTable(labels.labels());
  return kExitOk;
}

} // namespace

ClassifierScore scoreClassifier(ModelRunner &runner, const EntryInfo &classify,
                                const std::vector<EncodedExample> &examples,
                                const LabelSet &labels, int32_t pad,
                                int64_t batch) {
  std::vector<std::vector<int32_t>> texts;
  for (const EncodedExample &example : examples)
    texts.push_back(example.tokens);
  std::vector<std::vector<double>> probabilities = // log-probabilities
      classifyEncoded(runner, classify, texts, pad, batch);
  ClassifierScore score;
  score.matrix = ConfusionMatrix(labels.size());
  double lossSum = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    const std::vector<double> &logp = probabilities[i];
    // Only the trained labels compete (the model may have more classes).
    int64_t best = 0;
    for (int64_t c = 1; c < labels.size(); ++c)
      if (logp[size_t(c)] > logp[size_t(best)])
        best = c;
    score.matrix.add(examples[i].label, best);
    lossSum -= logp[size_t(examples[i].label)];
    if (!std::isfinite(logp[size_t(examples[i].label)]) &&
        score.firstNonFinite < 0)
      score.firstNonFinite = int64_t(i);
  }
  score.loss = examples.empty() ? 0.0 : lossSum / double(examples.size());
  return score;
}

BleuScore translationBleu(const Tokenizer &tokenizer,
                          const std::vector<std::vector<int32_t>> &outputs,
                          const ParallelText &text) {
  if (tokenizer.subwords) {
    std::vector<std::string> hypotheses, references;
    for (size_t i = 0; i < outputs.size(); ++i) {
      hypotheses.push_back(tokenizer.decodeTarget(outputs[i]));
      references.push_back(text.pairs[i].targetText);
    }
    return sacreBleu(hypotheses, references);
  }
  BleuAccumulator bleu;
  for (size_t i = 0; i < outputs.size(); ++i)
    bleu.add(tokenizer.target.decode(outputs[i]), text.pairs[i].target);
  return bleu.score();
}

int evalCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                const EvalOptions &options, std::ostream &out,
                std::ostream &err) {
  requireKind(model, "eval");
  if (options.labelsPath && model.kind != ModelKind::Classifier)
    throw InputError(
        "eval --labels applies to classifiers; '" + model.model + "' is a " +
        (model.kind == ModelKind::LanguageModel ? "language model"
                                                : "seq2seq model"));
  // Options of another kind's evaluation changed nothing.
  if (options.truncate && model.kind == ModelKind::LanguageModel)
    throw InputError("eval --truncate applies to classifiers and seq2seq "
                     "models (their texts longer than the bounds); '" +
                     model.model +
                     "' is a language model (its text is cut into blocks)");
  if ((options.noBleu || options.maxLength) && model.kind != ModelKind::Seq2Seq)
    throw InputError(std::string("eval ") +
                     (options.noBleu ? "--no-bleu" : "--max-len") +
                     " applies to seq2seq models (the BLEU of their greedy "
                     "translations); '" +
                     model.model + "' is a " +
                     (model.kind == ModelKind::LanguageModel ? "language model"
                                                             : "classifier"));
  if (model.kind == ModelKind::LanguageModel)
    return evalLanguageModel(model, entryTable, options, out, err);
  if (model.kind == ModelKind::Classifier)
    return evalClassifier(model, entryTable, options, out, err);
  if (!options.textPath.empty())
    throw InputError("eval --text does not apply: '" + model.model +
                     "' is a seq2seq model; give --data FILE.tsv");
  ModelRunner runner(model, entryTable, options.threads);
  const EntryInfo &encode = entryWithRole(model, "encode", "eval");
  const EntryInfo &decode = entryWithRole(model, "decode", "eval");
  runner.reserveArena(encode);
  runner.reserveArena(decode);
  SequenceBounds bounds = sequenceBounds(model, encode, decode);
  // One open file for the tokenizer and the parameters: a checkpoint
  // replaced meanwhile (train --every) cannot mix two of them.
  SafetensorsReader checkpoint(options.loadPath);
  Tokenizer tokenizer =
      loadModelTokenizer(model, checkpoint, options.tokenizerPath, err);
  ParallelText data = readParallelText(options.dataPath);
  PairCuts cuts;
  std::vector<EncodedPair> pairs = encodeParallelText(
      data, tokenizer, bounds, options.truncate ? &cuts : nullptr,
      "; give --truncate to score it cut to the bound");
  if (cuts.sources)
    err << "note: " << cuts.sources
        << (cuts.sources == 1 ? " source sentence was"
                              : " source sentences were")
        << " longer than " << bounds.source.describe() << " and "
        << (cuts.sources == 1 ? "was" : "were") << " cut to the first "
        << bounds.source.bound << " " << tokenizer.unit()
        << " (translated and scored so)\n";
  if (cuts.targets)
    err << "note: " << cuts.targets
        << (cuts.targets == 1 ? " reference was" : " references were")
        << " longer than the " << bounds.target.bound - 1 << " "
        << tokenizer.unit() << " " << bounds.target.describe()
        << " holds after [SOS]: the loss and accuracy score "
        << (cuts.targets == 1 ? "its" : "their") << " first "
        << bounds.target.bound << " " << tokenizer.unit()
        << " (no [EOS]); BLEU takes " << (cuts.targets == 1 ? "it" : "them")
        << " whole\n";
  {
    UnknownTokenCount sources(tokenizer.source.unkId()),
        references(tokenizer.target.unkId());
    for (const EncodedPair &pair : pairs) {
      const std::string where =
          options.dataPath + ":" + std::to_string(pair.line);
      sources.add(pair.source, where);
      // A cut reference is scored through its next word (where [EOS]
      // would be): counted too (the note said 1 of 7 where 8 were scored,
      // and nothing when the [UNK] was that word).
      if (pair.nextTarget >= 0) {
        std::vector<int32_t> scored = pair.target;
        scored.push_back(pair.nextTarget);
        references.add(scored, where);
      } else {
        references.add(pair.target, where);
      }
    }
    for (const std::string &note :
         {sources.note("source sentence", tokenizer.unit()),
          references.scoredNote(std::string("reference ") + tokenizer.unit(),
                                "reference", "the loss and accuracy",
                                "; BLEU compares the words as written")})
      if (!note.empty())
        err << note << "\n";
  }
  loadWeightsForInference(checkpoint, model, runner.params().write(),
                          options.noEma, err);
  int64_t batch = options.batch.value_or(bounds.batch.bound);
  if (batch > bounds.batch.bound)
    throw InputError("--batch " + std::to_string(batch) +
                     " is larger than " + bounds.batch.describe());
  DecodeOptions decoding =
      decodeOptionsFor(tokenizer.target, bounds, options.maxLength);
  const int32_t pad = modelPadId(model);

  TokenStats stats;
  std::string firstNonFinite; // "FILE:LINE" of the first such pair
  for (size_t begin = 0; begin < pairs.size(); begin += size_t(batch)) {
    std::vector<size_t> indices(
        std::min(pairs.size() - begin, size_t(batch)));
    std::iota(indices.begin(), indices.end(), begin);
    Batch current = makeBatch(pairs, indices, tokenizer.target, pad,
                              bounds.source.padTo(), bounds.target.padTo());
    // A cut reference (--truncate): its next word where [EOS] would be.
    for (size_t row = 0; row < indices.size(); ++row)
      if (const EncodedPair &pair = pairs[indices[row]]; pair.nextTarget >= 0)
        current.tgtOut.as<int32_t>()[int64_t(row) * current.tgtOut.shape[1] +
                                     int64_t(pair.target.size())] =
            pair.nextTarget;
    padBatchRows(current, pad, bounds.batch.padTo());
    Tensor logits = teacherForcedLogits(runner, current.src, current.tgtIn);
    const bool seen = stats.firstNonFiniteRow >= 0;
    accumulateTokenStats(logits, current.tgtOut, pad, stats);
    if (!seen && stats.firstNonFiniteRow >= 0 &&
        size_t(stats.firstNonFiniteRow) < indices.size())
      firstNonFinite =
          pairLine(options, pairs[indices[size_t(stats.firstNonFiniteRow)]]);
  }
  // Before any score, and before decoding for BLEU.
  if (stats.tokens)
    requireFiniteLoss(stats.lossSum, options.loadPath, firstNonFinite);

  BleuScore bleu;
  if (!options.noBleu) {
    std::unique_ptr<NextTokenModel> decoder = makeDecoder(runner, pad);
    std::vector<TokenIds> sources;
    for (const EncodedPair &pair : pairs)
      sources.push_back(pair.source);
    bleu = translationBleu(
        tokenizer,
        translateAll(*decoder, sources, batch, decoding, {},
                     [&](size_t k) { return pairLine(options, pairs[k]); }),
        data);
  }

  out << "examples   " << pairs.size() << " (" << options.dataPath << ")\n";
  printLossLines(stats, "target tokens", out);
  if (!options.noBleu)
    out << "bleu       " << formatBleu(bleu)
        << (tokenizer.subwords ? " (greedy, detokenized, sacreBLEU 13a)\n"
                               : " (greedy, corpus BLEU-4)\n");
  return kExitOk;
}

} // namespace txrt::driver
