//===- PredictCommand.cpp - `PROGRAM predict`: label texts ----------------===//
#include "commands/PredictCommand.h"
#include "commands/TrainingData.h"
#include "core/Error.h"
#include "data/Batching.h"
#include "data/InputLines.h"
#include "data/TabbedLines.h"
#include "loop/Ema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace txrt::driver {

std::vector<std::vector<double>>
classifyEncoded(ModelRunner &runner, const EntryInfo &classify,
                const std::vector<std::vector<int32_t>> &texts, int32_t pad,
                int64_t batch) {
  if (classify.outputs.size() != 1 || classify.outputs[0].shape.size() != 2)
    throw ModelError("entry '" + classify.name +
                     "' must return class logits [B, C]");
  // Texts of one token count are batched together (stably, in input
  // order), as generate batches prompts: no row is padded, so a text's
  // classes are the ones it gets alone whatever the spec reads at padded
  // positions (a model that pools the last position or does not mask
  // padding gave other classes at another --batch).
  std::vector<size_t> order(texts.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return texts[a].size() < texts[b].size();
  });
  const TensorSig *tokenSig = classify.findInputByRole("tokens");
  std::vector<std::vector<double>> probabilities(texts.size());
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1;
    while (end < order.size() && end - begin < size_t(batch) &&
           texts[order[end]].size() == texts[order[begin]].size())
      ++end;
    std::vector<std::vector<int32_t>> chunk;
    for (size_t i = begin; i < end; ++i)
      chunk.push_back(texts[order[i]]);
    // Sizes the spec writes as constants: pad rows and positions (the
    // added rows' classes are not read).
    Tensor tokens = padSequences(chunk, pad, tokenSig ? tokenSig->padTo(1) : 1);
    if (tokenSig)
      tokens = padIdsTo(std::move(tokens), pad, tokenSig->padTo(0));
    Tensor segments(DType::I32, tokens.shape); // one segment: zeros
    std::vector<const Tensor *> inputs;
    for (const TensorSig &sig : classify.inputs) {
      if (sig.role == "tokens")
        inputs.push_back(&tokens);
      else if (sig.role == "segments")
        inputs.push_back(&segments);
      else
        throw ModelError("input '" + sig.name + "' of entry '" +
                         classify.name + "' has role '" + sig.role +
                         "'; classify feeds tokens and segments");
    }
    std::vector<Tensor> outputs = runner.call(classify, inputs);
    const int64_t classes = outputs[0].shape[1];
    const float *logits = outputs[0].as<float>();
    for (size_t row = 0; row < chunk.size(); ++row) {
      const float *scores = logits + int64_t(row) * classes;
      // Log-probabilities, exactly (logit - top - log sum): a probability
      // that underflows to 0 keeps its loss (eval clamped it at 690.8).
      double top = *std::max_element(scores, scores + classes), sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(double(scores[c]) - top);
      double logSum = std::log(sum);
      std::vector<double> logp(static_cast<size_t>(classes));
      for (int64_t c = 0; c < classes; ++c)
        logp[size_t(c)] = double(scores[c]) - top - logSum;
      probabilities[order[begin + row]] = std::move(logp);
    }
    begin = end;
  }
  return probabilities;
}

int predictCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                   const PredictOptions &options, std::istream &in,
                   std::ostream &out, std::ostream &err) {
  requireModelKind(model, ModelKind::Classifier, "predict");
  const EntryInfo &classify = entryWithRole(model, "classify", "predict");
  const TensorSig &tokensSig = inputWithRole(classify, "tokens");
  LengthBound batchBound = inputBound(model, classify, tokensSig, 0);
  LengthBound length = inputBound(model, classify, tokensSig, 1);
  int64_t batch = options.batch.value_or(batchBound.bound);
  if (batch > batchBound.bound)
    throw InputError("--batch " + std::to_string(batch) + " is larger than " +
                     batchBound.describe());
  ModelRunner runner(model, entryTable, options.threads);
  runner.reserveArena(classify);
  SafetensorsReader checkpoint(options.loadPath);
  Tokenizer tokenizer =
      loadModelTokenizer(model, checkpoint, options.tokenizerPath, err);
  LabelSet labels = loadModelLabels(model, checkpoint, options.labelsPath);
  loadWeightsForInference(checkpoint, model, runner.params().write(),
                          options.noEma, err);

  // The texts a chunk at a time (InputLines.h): labels come while the input
  // still arrives. The notes count the whole input, at its end.
  std::string written; // the last text whose answers were flushed
  InputLineReader reader(options.texts, "text", in);
  const size_t chunkLines = InputLineReader::chunkLines(batch);
  InputLines chunk;
  int64_t truncated = 0, empty = 0;
  UnknownTokenCount unknown(tokenizer.source.unkId());
  const std::string wayOut = "; give --truncate to keep the first " +
                             std::to_string(length.bound);
  ProblemList problems; // a chunk's bad texts: not UTF-8, or too long
  bool tabNoted = false;
  while (reader.next(chunk, chunkLines, &problems)) {
    const std::vector<std::string> &lines = chunk.lines;
    noteTabbedLine(chunk, tabNoted, err, "classified as one text",
                   "`cut -f2 FILE.tsv` gives the texts of 'label<TAB>text' "
                   "lines");
    std::vector<std::vector<int32_t>> texts;
    // A line without words has no label: its output line is empty (as
    // translate's is), so the outputs stay line for line with the inputs.
    std::vector<bool> hasWords(lines.size(), false);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (chunk.bad[i])
        continue;
      std::vector<std::string> words = splitWords(lines[i]);
      std::vector<int32_t> ids =
          encodeClassifierText(tokenizer, words, lines[i]);
      // [SOS] alone: no words, or (SentencePiece) only blank or invisible
      // characters, which normalize to no piece.
      if (ids.size() == 1) {
        ++empty;
        continue;
      }
      hasWords[i] = true;
      unknown.add(ids, chunk.where[i]);
      std::string tooLong = fitClassifierText(
          ids, tokenizer, length, options.truncate, &truncated, wayOut);
      if (!tooLong.empty())
        problems.add(chunk.where[i] + ": " + tooLong);
      texts.push_back(std::move(ids));
    }
    problems.throwIfAny("bad texts");
    std::vector<std::vector<double>> probabilities =
        classifyEncoded(runner, classify, texts, modelPadId(model), batch);
    size_t next = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!hasWords[i]) {
        out << "\n";
        continue;
      }
      const std::vector<double> &logp = probabilities[next++];
      // Only the trained labels compete (the model may have more classes).
      int64_t best = 0;
      for (int64_t c = 1; c < labels.size(); ++c)
        if (logp[size_t(c)] > logp[size_t(best)])
          best = c;
      if (!std::isfinite(logp[size_t(best)]))
        throw KernelError("the probabilities of " + chunk.where[i] +
                          " are not finite: the weights in '" +
                          options.loadPath +
                          "' give non-finite outputs (saved by a run that "
                          "diverged?); use an earlier checkpoint");
      char probability[32];
      std::snprintf(probability, sizeof(probability), "%.4f",
                    std::exp(logp[size_t(best)]));
      out << labels.label(best) << "\t" << probability << "\n";
    }
    checkAnswersWritten(out, chunk, written);
  }
  if (truncated)
    err << truncationNote(truncated, length) << "\n";
  if (empty)
    err << "note: " << empty << (empty == 1 ? " text has" : " texts have")
        << " no words and no label (an empty output line each)\n";
  if (std::string note = unknown.note("text", tokenizer.unit()); !note.empty())
    err << note << "\n";
  return kExitOk;
}

} // namespace txrt::driver
