//===- GenerateCommand.cpp - `PROGRAM generate`: continue prompts ---------===//
//
// Language models only. Prompts come from the arguments or stdin lines; an
// empty prompt starts from the end-of-text id (a new document). Each output
// line is the prompt's words followed by the generated ones (with a subword
// tokenizer, the prompt as written and the detokenized continuation).
//
//===----------------------------------------------------------------------===//
#include "commands/GenerateCommand.h"
#include "commands/TrainingData.h"
#include "core/Error.h"
#include "core/ModelRunner.h"
#include "data/InputLines.h"
#include "decoding/Generation.h"
#include "loop/Checkpoint.h"
#include "loop/Ema.h"

#include <memory>

namespace txrt::driver {

int generateCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                    const GenerateOptions &options, std::istream &in,
                    std::ostream &out, std::ostream &err) {
  requireModelKind(model, ModelKind::LanguageModel, "generate");
  // Top-k and nucleus filtering restrict sampling; at temperature 0 the
  // choice is the argmax either way (it ran greedy, saying nothing).
  if (options.temperature == 0 && (options.topK > 0 || options.topP < 1))
    err << "note: " << (options.topK > 0 ? "--top-k" : "--top-p")
        << (options.topK > 0 && options.topP < 1 ? " and --top-p filter"
                                                  : " filters")
        << " what is sampled, and without --temperature (default 0) "
           "decoding is greedy: give --temperature T > 0 to sample\n";
  const EntryInfo &logits = entryWithRole(model, "logits", "generate");
  LengthBound batchBound =
      inputBound(model, logits, inputWithRole(logits, "tokens"), 0);
  int64_t batch = options.batch.value_or(batchBound.bound);
  if (batch > batchBound.bound)
    throw InputError("--batch " + std::to_string(batch) + " is larger than " +
                     batchBound.describe());
  ModelRunner runner(model, entryTable, options.threads);
  runner.reserveArena(logits);
  SafetensorsReader checkpoint(options.loadPath);
  Tokenizer tokenizer =
      loadModelTokenizer(model, checkpoint, options.tokenizerPath, err);
  loadWeightsForInference(checkpoint, model, runner.params().write(),
                          options.noEma, err);
  const Vocabulary &vocabulary = tokenizer.source;
  // The context: the last `block` tokens the model was trained on (learned
  // positions past them were never trained; eval scores the same blocks),
  // unless --block says otherwise; at most this executable's bound.
  const LengthBound length =
      inputBound(model, logits, inputWithRole(logits, "tokens"), 1);
  int64_t context = 0;
  if (options.block) {
    if (*options.block > length.bound)
      throw InputError("--block " + std::to_string(*options.block) +
                       " is longer than " + length.describe());
    context = *options.block;
  } else if (const int64_t trained = recordedBlock(checkpoint)) {
    if (trained <= length.bound)
      context = trained;
    else
      err << "note: '" << options.loadPath << "' was trained on blocks of "
          << trained << " tokens; this executable takes " << length.describe()
          << ": reading at most the last " << length.bound
          << " tokens (--block N for fewer)\n";
  }

  // The tokens a prediction reads at most (0 above: the bound).
  const int64_t window = context ? context : length.bound;
  std::unique_ptr<PrefixModel> decoder;
  LmStepCached *cached = nullptr;
  if (options.kvCache && LmStepCached::available(model)) {
    auto made =
        std::make_unique<LmStepCached>(runner, modelPadId(model), context);
    cached = made.get();
    decoder = std::move(made);
  } else {
    decoder = std::make_unique<LogitsRerun>(runner, modelPadId(model), context);
    if (options.kvCache && !model.noKvCache.empty())
      err << "note: this executable has no KV cache, so each token re-runs "
             "the model over the prefix (slower); txc derived no lm_step: "
          << model.noKvCache << "\n";
  }
  GenerateSettings settings;
  settings.eos = vocabulary.eosId();
  settings.maxNewTokens = options.maxNewTokens;
  settings.sampling.temperature = options.temperature;
  settings.sampling.topK = options.topK;
  settings.sampling.topP = options.topP;
  settings.sampling.seed = options.seed;
  settings.allowed = {vocabulary.size(), {vocabulary.padId(), vocabulary.sosId()}};
  // The prompts a chunk at a time (InputLines.h): texts come while the input
  // still arrives. A prompt's sampling stream is keyed by its index in the
  // whole input, so the chunking changes no text.
  std::string written; // the last text whose answers were flushed
  InputLineReader reader(options.prompts, "prompt", in);
  const size_t chunkLines = InputLineReader::chunkLines(batch);
  InputLines chunk;
  UnknownTokenCount unknown(vocabulary.unkId());
  bool ranPastContext = false;
  // The longest prompt that alone fills the window: no --max-new-tokens
  // keeps such a prompt's generation within it (the note said one did).
  size_t longestPrompt = 0;
  while (reader.next(chunk, chunkLines)) {
    const std::vector<std::string> &lines = chunk.lines;
    std::vector<TokenIds> prompts;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string &line = lines[i];
      // A subword tokenizer encodes the prompt as written (TextCorpus.h).
      TokenIds ids = tokenizer.subwords ? tokenizer.encodeSource(line)
                                        : vocabulary.encode(splitWords(line));
      unknown.add(ids, chunk.where[i]);
      if (ids.empty())
        ids.push_back(vocabulary.eosId());
      prompts.push_back(std::move(ids));
    }
    // Only prompts of one length share a batch: no row is padded, so a
    // prompt's text does not depend on its batch mates (Generation.h).
    std::vector<TokenIds> continuations(prompts.size());
    for (const std::vector<size_t> &rows :
         equalLengthBatches(prompts, size_t(batch))) {
      std::vector<TokenIds> batchPrompts;
      std::vector<uint64_t> keys;
      for (size_t index : rows) {
        batchPrompts.push_back(prompts[index]);
        keys.push_back(uint64_t(reader.textsBefore() + index));
      }
      std::vector<TokenIds> generated;
      try {
        generated = generateTokens(*decoder, batchPrompts, settings, keys);
      } catch (const NonFiniteLogitsError &error) {
        // The row of a batch of equal-length prompts: name the prompt.
        if (error.row() >= 0 && size_t(error.row()) < rows.size())
          throw error.at(chunk.where[rows[size_t(error.row())]]);
        throw;
      }
      for (size_t k = 0; k < rows.size(); ++k)
        continuations[rows[k]] = std::move(generated[k]);
    }
    // Without the cache too: a prefix (the prompt and the tokens generated
    // before the last) longer than the context was cut to its last tokens,
    // and nothing said so.
    // The last step read the prompt and every token before the last; a
    // run that stopped early stopped at an [EOS] it does not return, so
    // its last step read them all.
    for (size_t index = 0; index < prompts.size(); ++index)
      if (!continuations[index].empty() &&
          int64_t(prompts[index].size() + continuations[index].size()) -
                  (int64_t(continuations[index].size()) <
                           int64_t(settings.maxNewTokens)
                       ? 0
                       : 1) >
              window) {
        ranPastContext = true;
        longestPrompt = std::max(longestPrompt, prompts[index].size());
      }
    for (size_t index = 0; index < prompts.size(); ++index) {
      if (tokenizer.subwords) {
        // Detokenized: the prompt's pieces and the new ones decoded together
        // (an empty prompt's context is [EOS], where decoding would stop).
        TokenIds ids = prompts[index];
        if (ids.size() == 1 && ids[0] == vocabulary.eosId())
          ids.clear();
        const std::string prompt = tokenizer.decodeTarget(ids);
        ids.insert(ids.end(), continuations[index].begin(),
                   continuations[index].end());
        const std::string text = tokenizer.decodeTarget(ids);
        // The prompt as written, not as its pieces decode (characters the
        // model has no piece for decode as ⁇), then what was generated.
        if (!prompt.empty() && text.compare(0, prompt.size(), prompt) == 0) {
          std::string written = lines[index];
          std::string rest = text.substr(prompt.size());
          if (!rest.empty() && rest.front() == ' ')
            while (!written.empty() &&
                   (written.back() == ' ' || written.back() == '\t'))
              written.pop_back();
          out << asOneLine(written + rest) << "\n";
        } else if (prompt.empty()) {
          // No piece (an empty line, or one of only characters the
          // normalizer drops, U+200B): the prompt as written all the same
          // (it printed the generated text alone), then the text.
          std::string written = lines[index];
          while (!written.empty() &&
                 (written.back() == ' ' || written.back() == '\t'))
            written.pop_back();
          out << asOneLine(written.empty() || text.empty()
                               ? written + text
                               : written + " " + text)
              << "\n";
        } else
          out << asOneLine(text) << "\n";
        continue;
      }
      std::vector<std::string> words = splitWords(lines[index]);
      for (const std::string &word : vocabulary.decode(continuations[index]))
        words.push_back(word);
      out << asOneLine(joinWords(words)) << "\n";
    }
    checkAnswersWritten(out, chunk, written);
  }
  if (std::string note = unknown.note("prompt", tokenizer.unit());
      !note.empty())
    err << note << "\n";
  // Past the window the cache serves no more: every further token re-ran
  // the last window tokens through `logits`, as fast as --no-cache, and
  // nothing said so.
  auto tokens = [](int64_t count) {
    return std::to_string(count) + (count == 1 ? " token" : " tokens");
  };
  // What keeps a run within the window: fewer new tokens, unless a prompt
  // fills it alone.
  auto within = [&](int64_t size) {
    const int64_t longest = int64_t(longestPrompt);
    return longest > size
               ? "a prompt of " + tokens(longest) +
                     " is longer than it: only its last " + tokens(size) +
                     (size == 1 ? " is read" : " are read")
           : longest == size
               ? "a prompt of " + tokens(longest) + " fills it alone"
               : std::string("--max-new-tokens keeps within it");
  };
  if (cached && cached->ranPastWindow())
    err << "note: generation ran past the " << tokens(cached->window())
        << " the model reads at once: from there each new token re-read the "
           "last "
        << tokens(cached->window()) << " without the KV cache (slower; "
        << within(cached->window()) << ")\n";
  else if (!cached && ranPastContext)
    err << "note: generation ran past the " << tokens(window)
        << " the model reads at once: from there each new token was "
           "predicted from the last "
        << tokens(window) << " (" << within(window) << ")\n";
  return kExitOk;
}

} // namespace txrt::driver
