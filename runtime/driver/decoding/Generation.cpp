//===- Generation.cpp - continuing prompts with a language model ----------===//
#include "decoding/Generation.h"
#include "core/Error.h"
#include "data/Batching.h"

#include <algorithm>
#include <map>
#include <numeric>

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

LogitsRerun::LogitsRerun(ModelRunner &runner, int32_t pad, int64_t context)
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
  staticLength_ = !length.isSymbolic();
  rowsTo_ = tokens->padTo(0);
  context_ = context > 0 ? std::min(context, window_) : window_;
}

int64_t LogitsRerun::vocabSize() const {
  const DimRef &vocab = logits_.outputs[0].shape[2];
  if (vocab.isSymbolic())
    throw ModelError("the vocabulary dim of '" + logits_.name +
                     "' must be static");
  return vocab.size;
}

std::vector<float> LogitsRerun::next(const std::vector<TokenIds> &prefixes) {
  const int64_t rows = int64_t(prefixes.size());
  // The position of each row's newest token: the last column when left
  // padded; with a constant length, right padded (a short prompt was
  // refused as "dim 1 is 2 but the model expects 8").
  std::vector<int64_t> newest(prefixes.size());
  Tensor tokens;
  if (staticLength_) {
    tokens = Tensor(DType::I32, {rows, window_});
    int32_t *ids = tokens.as<int32_t>();
    std::fill(ids, ids + rows * window_, pad_);
    for (int64_t row = 0; row < rows; ++row) {
      const TokenIds &prefix = prefixes[size_t(row)];
      const int64_t kept = std::min<int64_t>(int64_t(prefix.size()), context_);
      std::copy(prefix.end() - kept, prefix.end(), ids + row * window_);
      newest[size_t(row)] = std::max<int64_t>(kept, 1) - 1;
    }
  } else {
    tokens = leftPad(prefixes, pad_, context_);
    std::fill(newest.begin(), newest.end(), tokens.shape[1] - 1);
  }
  // A constant batch: rows of pad after the prompts (not read).
  tokens = padIdsTo(std::move(tokens), pad_, rowsTo_);
  const int64_t length = tokens.shape[1];
  std::vector<Tensor> outputs = runner_.call(logits_, {&tokens});
  const int64_t vocab = outputs[0].shape[2];
  std::vector<float> logits(size_t(rows * vocab));
  const float *all = outputs[0].as<float>();
  for (int64_t row = 0; row < rows; ++row)
    std::copy_n(all + (row * length + newest[size_t(row)]) * vocab, vocab,
                logits.begin() + row * vocab);
  return logits;
}

//===----------------------------------------------------------------------===//
// LmStepCached
//===----------------------------------------------------------------------===//

bool LmStepCached::available(const ModelInfo &model) {
  const EntryInfo *step = model.findEntryByRole("lm_step");
  if (!step)
    return false;
  // Sizes the spec writes as constants: generation reruns `logits` over
  // padded rows and positions instead (LogitsRerun).
  const TensorSig *tokens = step->findInputByRole("tokens");
  return !tokens || (tokens->padTo(0) == 1 && tokens->padTo(1) == 1);
}

LmStepCached::LmStepCached(ModelRunner &runner, int32_t pad, int64_t context)
    : runner_(runner), step_(*runner.model().findEntryByRole("lm_step")),
      rerun_(runner, pad, context), pad_(pad) {
  const TensorSig *tokens = step_.findInputByRole("tokens");
  if (!tokens || !step_.findInputByRole("cache_ids") ||
      step_.outputs.size() != 1 || step_.outputs[0].shape.size() != 3)
    throw ModelError("entry '" + step_.name + "' must map tokens, cache_ids "
                     "and caches to logits [B, T, V]");
  for (const TensorSig &sig : step_.inputs)
    if (sig.role != "tokens" && sig.role != "cache_ids" &&
        (sig.role != "cache" || sig.shape.size() != 3 ||
         sig.shape[2].isSymbolic()))
      throw ModelError("input '" + sig.name + "' of entry '" + step_.name +
                       "' is none of tokens, cache_ids and caches [B, "
                       "cache, d]");
  const DimRef &length = tokens->shape[1];
  window_ = length.isSymbolic() ? runner.model().dims[size_t(length.dim)].bound
                                : length.size;
  if (context > 0)
    window_ = std::min(window_, context);
}

namespace {

/// Whether `prefix` [rows, n] starts with `held` [rows, n - 1].
bool extendsByOne(const Tensor &held, const Tensor &prefix) {
  if (held.shape.size() != 2 || held.shape[0] != prefix.shape[0] ||
      held.shape[1] + 1 != prefix.shape[1])
    return false;
  const int64_t rows = held.shape[0], n = held.shape[1];
  for (int64_t row = 0; row < rows; ++row)
    if (!std::equal(held.as<int32_t>() + row * n,
                    held.as<int32_t>() + (row + 1) * n,
                    prefix.as<int32_t>() + row * (n + 1)))
      return false;
  return true;
}

} // namespace

TokenIds PrefixModel::nextGreedy(const std::vector<TokenIds> &prefixes,
                                 const AllowedIds &allowed) {
  std::vector<float> logits = next(prefixes);
  const int64_t vocab = vocabSize();
  return chooseDecoded(logits.data(), int64_t(prefixes.size()), vocab, vocab,
                       allowed);
}

bool LmStepCached::advance(const std::vector<TokenIds> &prefixes) {
  Tensor all = leftPad(prefixes, pad_);
  const int64_t rows = all.shape[0], length = all.shape[1];
  if (length > window_) {
    held_ = Tensor();
    ranPastWindow_ = true;
    return false;
  }
  int64_t fresh = length; // new positions this call
  if (extendsByOne(held_, all)) {
    fresh = 1;
  } else {
    // The caches keep their storage from prompt batch to prompt batch (a
    // step's graph replays at the same addresses).
    caches_.resize(step_.inputs.size());
    for (size_t i = 0; i < step_.inputs.size(); ++i)
      if (step_.inputs[i].role == "cache")
        caches_[i].assign(runner_.device(), DType::F32,
                          {rows, 0, step_.inputs[i].shape[2].size},
                          "cache '" + step_.inputs[i].name + "' of entry '" +
                              step_.name + "'");
  }
  std::vector<size_t> sameRows(static_cast<size_t>(rows));
  std::iota(sameRows.begin(), sameRows.end(), size_t(0));
  Tensor tokens(DType::I32, {rows, fresh});
  for (int64_t row = 0; row < rows; ++row)
    std::copy_n(all.as<int32_t>() + row * length + length - fresh, fresh,
                tokens.as<int32_t>() + row * fresh);
  std::vector<EntryInput> inputs;
  std::vector<ResidentTensor *> caches;
  bool allWritten = true;
  for (size_t i = 0; i < step_.inputs.size(); ++i) {
    const std::string &role = step_.inputs[i].role;
    if (role == "tokens") {
      inputs.push_back(&tokens);
    } else if (role == "cache_ids") {
      inputs.push_back(&all);
    } else {
      caches.push_back(&caches_[i]);
      allWritten = allWritten && step_.inputs[i].writesLastRows.has_value();
      inputs.push_back(&caches_[i]);
    }
  }
  // Every cache grows in one call (on a device, one launch); lm_step
  // writes the new positions (writes_last_rows) before it reads them, so
  // they need no zeros.
  ResidentTensor::regrowAll(caches, sameRows, fresh, !allWritten);
  // The logits stay where the step wrote them (the same block from token
  // to token, for a step's graph to replay).
  runner_.callKeeping(step_, inputs, logits_);
  held_ = std::move(all);
  return true;
}

std::vector<float> LmStepCached::next(const std::vector<TokenIds> &prefixes) {
  if (!advance(prefixes))
    return rerun_.next(prefixes);
  Tensor output = logits_[0].read();
  const int64_t rows = output.shape[0], fresh = output.shape[1],
                vocab = output.shape[2];
  std::vector<float> logits(size_t(rows * vocab));
  for (int64_t row = 0; row < rows; ++row)
    std::copy_n(output.as<float>() + (row * fresh + fresh - 1) * vocab, vocab,
                logits.begin() + row * vocab);
  return logits;
}

TokenIds LmStepCached::nextGreedy(const std::vector<TokenIds> &prefixes,
                                  const AllowedIds &allowed) {
  if (!advance(prefixes))
    return rerun_.nextGreedy(prefixes, allowed);
  const ResidentTensor &output = logits_[0];
  const int64_t rows = output.shape()[0], fresh = output.shape()[1],
                vocab = output.shape()[2];
  // Each row's last position: rows fresh * vocab floats apart.
  return chooseWhereTheyAre(output, (fresh - 1) * vocab, rows, vocab,
                            fresh * vocab, allowed);
}

std::vector<TokenIds> generateTokens(PrefixModel &model,
                                     const std::vector<TokenIds> &prompts,
                                     const GenerateSettings &settings,
                                     const std::vector<uint64_t> &rowKeys) {
  const int64_t vocab = model.vocabSize();
  std::vector<TokenIds> prefixes = prompts, outputs(prompts.size());
  std::vector<bool> done(prompts.size(), false);
  for (int64_t position = 0; position < settings.maxNewTokens; ++position) {
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; }))
      break;
    // Finished rows stay in the batch (growing by [EOS], ignored): every
    // row keeps the left padding it started with, so its positions do not
    // change while the batch is decoded.
    // Greedy (temperature 0): the model chooses, on its device if it has
    // one; sampling needs every row's logits here.
    const bool greedy = settings.sampling.temperature <= 0.0;
    std::vector<float> logits;
    TokenIds choices;
    if (greedy) {
      choices = model.nextGreedy(prefixes, settings.allowed);
    } else {
      logits = model.next(prefixes);
      for (size_t row = 0; row < prompts.size(); ++row) {
        // The ids it may emit only, as beam search checks them: a NaN in
        // a row it never picks ([SOS]) refused weights greedy decoding
        // accepted.
        settings.allowed.apply(logits.data() + int64_t(row) * vocab, 1, vocab);
        if (!done[row])
          requireFiniteLogits(logits.data() + int64_t(row) * vocab, vocab,
                              int64_t(row));
      }
    }
    for (size_t row = 0; row < prompts.size(); ++row) {
      int32_t id = done[row] ? settings.eos
                   : greedy  ? choices[row]
                             : sampleToken(logits.data() + int64_t(row) * vocab,
                                           vocab, settings.sampling,
                                           rowKeys.empty() ? row : rowKeys[row],
                                           uint64_t(position));
      prefixes[row].push_back(id);
      if (id == settings.eos)
        done[row] = true;
      else
        outputs[row].push_back(id);
    }
  }
  return outputs;
}

std::vector<std::vector<size_t>>
equalLengthBatches(const std::vector<TokenIds> &prompts, size_t batch) {
  std::vector<std::vector<size_t>> batches;
  std::map<size_t, size_t> open; // prompt length -> its batch being filled
  for (size_t index = 0; index < prompts.size(); ++index) {
    size_t length = prompts[index].size();
    auto it = open.find(length);
    if (it == open.end() || batches[it->second].size() >= batch) {
      batches.emplace_back();
      it = open.insert_or_assign(length, batches.size() - 1).first;
    }
    batches[it->second].push_back(index);
  }
  return batches;
}

} // namespace txrt::driver
