//===- Generation.cpp - continuing prompts with a language model ----------===//
#include "decoding/Generation.h"
#include "core/Error.h"

#include <algorithm>

namespace txrt::driver {

Tensor leftPad(const std::vector<TokenIds> &rows, int32_t pad,
               int64_t window) {
  int64_t longest = 1;
  for (const TokenIds &row : rows)
    longest = std::max(longest, int64_t(row.size()));
  if (window > 0)
    longest = std::min(longest, window);
  Tensor tensor(DType::I32, {int64_t(rows.size()), longest});
  int32_t *ids = tensor.as<int32_t>();
  std::fill(ids, ids + tensor.numElements(), pad);
  for (size_t r = 0; r < rows.size(); ++r) {
    int64_t keep = std::min(longest, int64_t(rows[r].size()));
    std::copy(rows[r].end() - keep, rows[r].end(),
              ids + int64_t(r + 1) * longest - keep);
  }
  return tensor;
}

LogitsRerun::LogitsRerun(ModelRunner &runner, int32_t pad)
    : runner_(runner), logits_([&]() -> const EntryInfo & {
        const EntryInfo *entry = runner.model().findEntryByRole("logits");
        if (!entry)
          throw ModelError("model '" + runner.model().model +
                           "' has no entry with role 'logits', which "
                           "generate needs");
        return *entry;
      }()),
      pad_(pad) {
  const TensorSig *tokens = logits_.findInputByRole("tokens");
  if (!tokens || logits_.inputs.size() != 1 || tokens->shape.size() != 2 ||
      logits_.outputs.size() != 1 || logits_.outputs[0].shape.size() != 3)
    throw ModelError("entry '" + logits_.name + "' must map tokens [B, T] to "
                     "logits [B, T, V]");
  const DimRef &length = tokens->shape[1];
  window_ = length.isSymbolic() ? runner.model().dims[size_t(length.dim)].bound
                                : length.size;
}

int64_t LogitsRerun::vocabSize() const {
  const DimRef &vocab = logits_.outputs[0].shape[2];
  if (vocab.isSymbolic())
    throw ModelError("the vocabulary dim of '" + logits_.name +
                     "' must be static");
  return vocab.size;
}

std::vector<float> LogitsRerun::next(const std::vector<TokenIds> &prefixes) {
  Tensor tokens = leftPad(prefixes, pad_, window_);
  const int64_t rows = tokens.shape[0], length = tokens.shape[1];
  std::vector<Tensor> outputs = runner_.call(logits_, {&tokens});
  const int64_t vocab = outputs[0].shape[2];
  std::vector<float> logits(size_t(rows * vocab));
  const float *all = outputs[0].as<float>();
  for (int64_t row = 0; row < rows; ++row)
    std::copy_n(all + (row * length + length - 1) * vocab, vocab,
                logits.begin() + row * vocab);
  return logits;
}

std::vector<TokenIds> generateTokens(PrefixModel &model,
                                     const std::vector<TokenIds> &prompts,
                                     const GenerateSettings &settings,
                                     uint64_t firstRow) {
  const int64_t vocab = model.vocabSize();
  std::vector<TokenIds> prefixes = prompts, outputs(prompts.size());
  std::vector<bool> done(prompts.size(), false);
  for (int64_t position = 0; position < settings.maxNewTokens; ++position) {
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; }))
      break;
    // Finished rows stay in the batch (growing by [EOS], ignored): every
    // row keeps the left padding it started with, so its positions do not
    // change while the batch is decoded.
    std::vector<float> logits = model.next(prefixes);
    for (size_t row = 0; row < prompts.size(); ++row) {
      int32_t id = done[row] ? settings.eos
                             : sampleToken(logits.data() + int64_t(row) * vocab,
                                           vocab, settings.sampling,
                                           firstRow + row, uint64_t(position));
      prefixes[row].push_back(id);
      if (id == settings.eos)
        done[row] = true;
      else
        outputs[row].push_back(id);
    }
  }
  return outputs;
}

} // namespace txrt::driver
