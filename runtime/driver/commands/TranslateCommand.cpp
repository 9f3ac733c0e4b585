//===- TranslateCommand.cpp - `PROGRAM translate`: decode sentences -------===//
#include "commands/TranslateCommand.h"
#include "commands/TrainingData.h"
#include "core/Error.h"
#include "core/ModelRunner.h"
#include "data/InputLines.h"
#include "data/TabbedLines.h"
#include "loop/Ema.h"

#include <algorithm>
#include <numeric>

namespace txrt::driver {

std::vector<TokenIds>
translateAll(NextTokenModel &decoder, const std::vector<TokenIds> &sources,
             int64_t batch, const DecodeOptions &options,
             const std::function<bool()> &interrupted,
             const std::function<std::string(size_t)> &where) {
  // Sentences of similar lengths go together (Marian and fairseq batch
  // by length too): less padding in every batch, and rows that tend to end
  // together, so a batch stops sooner. Each sentence's translation is its
  // own (the rows do not depend on each other); the outputs come back in
  // input order.
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sources[a].size() < sources[b].size();
  });
  // Beam search: `batch` rows hold batch / beamSize sentences' hypotheses.
  const bool beam = options.beamSize > 1;
  const size_t sentences =
      beam ? size_t(std::max<int64_t>(batch / options.beamSize, 1))
           : size_t(batch);
  std::vector<TokenIds> outputs(sources.size());
  for (size_t begin = 0; begin < order.size(); begin += sentences) {
    if (interrupted && interrupted())
      throw Interrupted{};
    size_t end = std::min(order.size(), begin + sentences);
    std::vector<TokenIds> chunk;
    for (size_t k = begin; k < end; ++k)
      chunk.push_back(sources[order[k]]);
    std::vector<TokenIds> words;
    try {
      words = beam ? beamDecodeBatch(decoder, chunk, options)
                   : greedyDecode(decoder, chunk, options);
    } catch (const NonFiniteLogitsError &error) {
      // The row of a length-sorted batch: name the sentence instead.
      const size_t source = order[begin + size_t(error.row())];
      if (where)
        throw error.at(where(source));
      throw error.atRow(int64_t(source));
    }
    for (size_t k = begin; k < end; ++k)
      outputs[order[k]] = std::move(words[k - begin]);
  }
  return outputs;
}

DecodeOptions decodeOptionsFor(const Vocabulary &target,
                               const SequenceBounds &bounds,
                               const std::optional<int64_t> &maxLength) {
  DecodeOptions options;
  options.sos = target.sosId();
  options.eos = target.eosId();
  options.pad = target.padId();
  // Only ids the target tokenizer can write out (the model's vocab dim may
  // be larger), and never [PAD] or [SOS].
  options.allowed = {target.size(), {target.padId(), target.sosId()}};
  options.maxLength = bounds.target.bound;
  if (maxLength) {
    if (*maxLength > bounds.target.bound)
      throw InputError("--max-len " + std::to_string(*maxLength) +
                       " is larger than " + bounds.target.describe());
    options.maxLength = *maxLength;
  }
  return options;
}

namespace {

/// Encodes one sentence; a sentence over the source bound keeps its first
/// ids with `truncate` (counted in `*truncated`), else it is a problem
/// named by `where` (and gives no ids).
TokenIds encodeSentence(const std::string &sentence, const Tokenizer &tokenizer,
                        const SequenceBounds &bounds, const std::string &where,
                        bool truncate, int64_t &truncated,
                        ProblemList &problems) {
  TokenIds ids = tokenizer.encodeSource(sentence);
  if (int64_t(ids.size()) > bounds.source.bound) {
    if (truncate) {
      ids.resize(size_t(bounds.source.bound));
      ++truncated;
      return ids;
    }
    problems.add(where + ": the sentence has " + std::to_string(ids.size()) +
                 " " + tokenizer.unit() + ", more than " +
                 bounds.source.describe() +
                 "; give --truncate to translate its first " +
                 std::to_string(bounds.source.bound));
    return {};
  }
  return ids;
}

} // namespace

int translateCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                     const TranslateOptions &options, std::istream &in,
                     std::ostream &out, std::ostream &err) {
  requireModelKind(model, ModelKind::Seq2Seq, "translate");
  ModelRunner runner(model, entryTable, options.threads);
  const EntryInfo &encode = entryWithRole(model, "encode", "translate");
  const EntryInfo &decode = entryWithRole(model, "decode", "translate");
  runner.reserveArena(encode);
  runner.reserveArena(decode);
  SequenceBounds bounds = sequenceBounds(model, encode, decode);
  // One open file for the tokenizer and the parameters: a checkpoint
  // replaced meanwhile (train --every) cannot mix two of them.
  SafetensorsReader checkpoint(options.loadPath);
  Tokenizer tokenizer =
      loadModelTokenizer(model, checkpoint, options.tokenizerPath, err);
  loadWeightsForInference(checkpoint, model, runner.params().write(),
                          options.noEma, err);
  DecodeOptions decoding =
      decodeOptionsFor(tokenizer.target, bounds, options.maxLength);
  decoding.beamSize = options.beam;
  decoding.lengthPenaltyAlpha = options.alpha;
  if (options.beam > bounds.batch.bound)
    throw InputError("--beam " + std::to_string(options.beam) +
                     " needs that many rows, more than " +
                     bounds.batch.describe());
  int64_t batch = options.batch.value_or(bounds.batch.bound);
  if (batch > bounds.batch.bound)
    throw InputError("--batch " + std::to_string(batch) +
                     " is larger than " + bounds.batch.describe());

  std::unique_ptr<NextTokenModel> decoder =
      makeDecoder(runner, tokenizer.source.padId(), options.kvCache);
  // It fell back without a word (a ported notebook's query-side mask).
  if (options.kvCache && !model.noKvCache.empty())
    err << "note: this executable has no KV cache, so each token re-runs "
           "the decoder over the prefix (slower); txc derived no decode_step: "
        << model.noKvCache << "\n";
  // The sentences a chunk at a time (InputLines.h), each chunk's lines
  // checked and then translated and written: answers come while the input
  // still arrives. Sorting by length works within a chunk; each
  // translation is the one its sentence gets alone either way.
  std::string written; // the last text whose answers were flushed
  InputLineReader reader(options.sentences, "sentence", in);
  const size_t chunkLines = InputLineReader::chunkLines(batch);
  InputLines chunk;
  bool tabNoted = false;
  ProblemList problems; // a chunk's bad lines: not UTF-8, or too long
  int64_t truncated = 0; // --truncate: the sentences cut to the bound
  UnknownTokenCount unknown(tokenizer.source.unkId());
  while (reader.next(chunk, chunkLines, &problems)) {
    const std::vector<std::string> &lines = chunk.lines;
    noteTabbedLine(chunk, tabNoted, err, "translated as one sentence",
                   "`cut -f1 FILE.tsv` gives the sources");
    std::vector<TokenIds> sources;
    std::vector<size_t> rows; // lines with words
    for (size_t i = 0; i < lines.size(); ++i) {
      if (chunk.bad[i])
        continue;
      TokenIds ids = encodeSentence(lines[i], tokenizer, bounds, chunk.where[i],
                                    options.truncate, truncated, problems);
      if (ids.empty())
        continue;
      unknown.add(ids, chunk.where[i]);
      rows.push_back(i);
      sources.push_back(std::move(ids));
    }
    problems.throwIfAny("bad sentences");
    std::vector<TokenIds> outputs =
        translateAll(*decoder, sources, batch, decoding, {},
                     [&](size_t k) { return chunk.where[rows[k]]; });
    std::vector<std::string> translations(lines.size());
    for (size_t k = 0; k < rows.size(); ++k)
      translations[rows[k]] = tokenizer.decodeTarget(outputs[k]);
    for (const std::string &translation : translations)
      out << asOneLine(translation) << "\n";
    checkAnswersWritten(out, chunk, written);
  }
  if (truncated)
    err << "note: " << truncated
        << (truncated == 1 ? " sentence was" : " sentences were")
        << " longer than " << bounds.source.describe() << " and "
        << (truncated == 1 ? "was" : "were") << " cut to the first "
        << bounds.source.bound << " " << tokenizer.unit() << "\n";
  if (std::string note = unknown.note("sentence", tokenizer.unit());
      !note.empty())
    err << note << "\n";
  return kExitOk;
}

} // namespace txrt::driver
