//===- GenerateCommand.cpp - `PROGRAM generate`: continue prompts ---------===//
//
// Language models only. Prompts come from the arguments or stdin lines; an
// empty prompt starts from the end-of-text id (a new document). Each output
// line is the prompt's words followed by the generated ones.
//
//===----------------------------------------------------------------------===//
#include "commands/GenerateCommand.h"
#include "commands/TrainingData.h"
#include "core/Error.h"
#include "core/ModelRunner.h"
#include "decoding/Generation.h"

#include <memory>

namespace txrt::driver {

int generateCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                    const GenerateOptions &options, std::istream &in,
                    std::ostream &out, std::ostream &err) {
  requireModelKind(model, ModelKind::LanguageModel, "generate");
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
  runner.params().load(checkpoint);
  const Vocabulary &vocabulary = tokenizer.source;

  std::vector<std::string> lines = options.prompts;
  if (lines.empty()) {
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      lines.push_back(line);
    }
  }
  std::vector<TokenIds> prompts;
  for (const std::string &line : lines) {
    TokenIds ids = vocabulary.encode(splitWords(line));
    if (ids.empty())
      ids.push_back(vocabulary.eosId());
    prompts.push_back(std::move(ids));
  }

  std::unique_ptr<PrefixModel> decoder;
  if (options.kvCache && LmStepCached::available(model))
    decoder = std::make_unique<LmStepCached>(runner, modelPadId(model));
  else
    decoder = std::make_unique<LogitsRerun>(runner, modelPadId(model));
  GenerateSettings settings;
  settings.eos = vocabulary.eosId();
  settings.maxNewTokens = options.maxNewTokens;
  settings.sampling.temperature = options.temperature;
  settings.sampling.topK = options.topK;
  settings.sampling.topP = options.topP;
  settings.sampling.seed = options.seed;
  for (size_t begin = 0; begin < prompts.size(); begin += size_t(batch)) {
    size_t end = std::min(prompts.size(), begin + size_t(batch));
    std::vector<TokenIds> chunk(prompts.begin() + std::ptrdiff_t(begin),
                                prompts.begin() + std::ptrdiff_t(end));
    std::vector<TokenIds> continuations =
        generateTokens(*decoder, chunk, settings, begin);
    for (size_t k = 0; k < chunk.size(); ++k) {
      std::vector<std::string> words = splitWords(lines[begin + k]);
      for (const std::string &word : vocabulary.decode(continuations[k]))
        words.push_back(word);
      out << joinWords(words) << "\n";
    }
  }
  return kExitOk;
}

} // namespace txrt::driver
