//===- EvalCommand.cpp - `PROGRAM eval`: loss, accuracy, BLEU -------------===//
#include "commands/EvalCommand.h"
#include "data/Batching.h"
#include "loop/Bleu.h"
#include "decoding/Decoding.h"
#include "core/Error.h"
#include "core/ModelRunner.h"
#include "data/ParallelText.h"
#include "commands/TrainingData.h"
#include "commands/TranslateCommand.h"

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
    double top = row[0];
    int32_t best = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (row[v] > top) {
        top = row[v];
        best = int32_t(v);
      }
    double sum = 0;
    for (int64_t v = 0; v < vocab; ++v)
      sum += std::exp(double(row[v]) - top);
    stats.lossSum += top + std::log(sum) - double(row[ids[i]]);
    stats.correct += best == ids[i];
    ++stats.tokens;
  }
}

int evalCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                const EvalOptions &options, std::ostream &out,
                std::ostream &err) {
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
  std::vector<EncodedPair> pairs = encodeParallelText(data, tokenizer, bounds);
  runner.params().load(checkpoint);
  int64_t batch = options.batch.value_or(bounds.batch.bound);
  if (batch > bounds.batch.bound)
    throw InputError("--batch " + std::to_string(batch) +
                     " is larger than " + bounds.batch.describe());
  DecodeOptions decoding =
      decodeOptionsFor(tokenizer.target, bounds, options.maxLength);
  const int32_t pad = modelPadId(model);

  TokenStats stats;
  for (size_t begin = 0; begin < pairs.size(); begin += size_t(batch)) {
    std::vector<size_t> indices(
        std::min(pairs.size() - begin, size_t(batch)));
    std::iota(indices.begin(), indices.end(), begin);
    Batch current = makeBatch(pairs, indices, tokenizer.target, pad);
    std::vector<Tensor> memory = runner.call(encode, {&current.src});
    std::vector<const Tensor *> inputs;
    for (const TensorSig &sig : decode.inputs)
      inputs.push_back(sig.role == "memory"   ? &memory[0]
                       : sig.role == "source" ? &current.src
                                              : &current.tgtIn);
    std::vector<Tensor> logits = runner.call(decode, inputs);
    accumulateTokenStats(logits[0], current.tgtOut, pad, stats);
  }

  BleuAccumulator bleu;
  if (!options.noBleu) {
    std::unique_ptr<NextTokenModel> decoder = makeDecoder(runner, pad);
    std::vector<TokenIds> sources;
    for (const EncodedPair &pair : pairs)
      sources.push_back(pair.source);
    std::vector<TokenIds> outputs =
        translateAll(*decoder, sources, batch, decoding);
    for (size_t i = 0; i < pairs.size(); ++i)
      bleu.add(tokenizer.target.decode(outputs[i]), data.pairs[i].target);
  }

  char line[200];
  out << "examples   " << pairs.size() << " (" << options.dataPath << ")\n";
  std::snprintf(line, sizeof(line),
                "loss       %.4f (mean cross-entropy over %lld target "
                "tokens, perplexity %.3f)\n",
                stats.tokens ? stats.lossSum / double(stats.tokens) : 0.0,
                static_cast<long long>(stats.tokens),
                stats.tokens ? std::exp(stats.lossSum / double(stats.tokens))
                             : 0.0);
  out << line;
  std::snprintf(line, sizeof(line), "accuracy   %.2f%% (%lld / %lld tokens)\n",
                stats.tokens ? 100.0 * double(stats.correct) /
                                   double(stats.tokens)
                             : 0.0,
                static_cast<long long>(stats.correct),
                static_cast<long long>(stats.tokens));
  out << line;
  if (!options.noBleu)
    out << "bleu       " << formatBleu(bleu.score())
        << " (greedy, corpus BLEU-4)\n";
  return kExitOk;
}

} // namespace txrt::driver
