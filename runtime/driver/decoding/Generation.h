//===- Generation.h - continuing prompts with a language model --*- C++ -*-===//
//
// `generate` asks a PrefixModel for the logits of the token after each row
// of a batch of prompts and picks it with Sampling.h; a row stops at the
// end-of-text id or after maxNewTokens. `generate` batches only prompts of
// the same length (equalLengthBatches), so no row is padded and a prompt's
// text never depends on what it is batched with, whatever the model's
// positions (learned absolute positions shift under padding). The
// PrefixModels still LEFT-pad rows of different lengths (the model's
// padding mask hides the pad keys), so every row's newest token is the
// last column.
//
//   LogitsRerun  the compiled `logits` entry (tokens [B, T] -> [B, T, V])
//                re-run over the whole (left-padded) prefix each step; a
//                prefix longer than the T bound keeps its last T tokens. A
//                constant T (no dim) takes right-padded prefixes instead.
//
//   LmStepCached the compiled `lm_step` entry (ModelAbi.h: tokens [B, T] of
//                the new positions, cache_ids [B, cache] every id so far,
//                the key / value caches [B, cache, d] updated in place ->
//                logits [B, T, V]): the first call runs the whole
//                left-padded prompt batch, each later one the newest token;
//                past the T bound it re-runs the logits entry instead, as
//                LogitsRerun does, so both give the same greedy text.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_GENERATION_H
#define TXRT_DRIVER_GENERATION_H

#include "core/ModelRunner.h"
#include "decoding/Decoding.h"
#include "decoding/Sampling.h"

#include <cstdint>
#include <vector>

namespace txrt::driver {

using TokenIds = std::vector<int32_t>;

/// [rows, longest] i32 of `rows` left-padded with `pad`, keeping at most
/// the last `window` tokens of each (0: all).
Tensor leftPad(const std::vector<TokenIds> &rows, int32_t pad,
               int64_t window = 0);

/// Scores the next token of each row of a batch of prefixes.
class PrefixModel {
public:
  virtual ~PrefixModel() = default;
  /// `prefixes` -> logits [rows * vocab] of each row's next token.
  virtual std::vector<float> next(const std::vector<TokenIds> &prefixes) = 0;
  /// next() and the greedy choice of each row among `allowed`
  /// (AllowedIds::choose, Decoding.h). A model whose logits stay on a
  /// device chooses there and copies only the ids back.
  virtual TokenIds nextGreedy(const std::vector<TokenIds> &prefixes,
                              const AllowedIds &allowed);
  virtual int64_t vocabSize() const = 0;
};

/// The compiled `logits` entry, re-running the whole prefix every step.
class LogitsRerun : public PrefixModel {
public:
  /// `context` > 0 keeps only a prefix's last `context` tokens (the block
  /// the model was trained on; 0: the entry's length bound).
  LogitsRerun(ModelRunner &runner, int32_t pad, int64_t context = 0);
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override;
  int64_t vocabSize() const override;

private:
  ModelRunner &runner_;
  const EntryInfo &logits_;
  int32_t pad_;
  int64_t window_; ///< the bound of the tokens input's length dim
  int64_t context_; ///< the tokens of a prefix read (<= window_)
  /// The length is a constant (`logits(ids: i32[B, 8])`): every call takes
  /// exactly window_ tokens, so shorter prefixes are right-padded and each
  /// row's logits are read at its last token (a causal model's earlier
  /// positions do not see the pads after them; train and eval pad a short
  /// last block the same way).
  bool staticLength_ = false;
  /// The rows a constant batch of the spec takes (1 where a dim): padded.
  int64_t rowsTo_ = 1;
};

/// The compiled `lm_step` entry with its KV caches.
class LmStepCached : public PrefixModel {
public:
  /// `context` as LogitsRerun's: past it, the logits entry re-runs the
  /// last `context` tokens.
  LmStepCached(ModelRunner &runner, int32_t pad, int64_t context = 0);
  /// Whether the model has an `lm_step` entry.
  static bool available(const ModelInfo &model);
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override;
  /// On a device, the choice is made there (Device::argmaxRows).
  TokenIds nextGreedy(const std::vector<TokenIds> &prefixes,
                      const AllowedIds &allowed) override;
  int64_t vocabSize() const override { return rerun_.vocabSize(); }
  /// The tokens a prefix may have for the cache to serve it.
  int64_t window() const { return window_; }
  /// Whether a prefix ran past window() (from there the logits entry
  /// re-ran the last window() tokens for every new one).
  bool ranPastWindow() const { return ranPastWindow_; }

private:
  /// Runs lm_step over the new positions of `prefixes`, leaving its logits
  /// [rows, new positions, vocab] in logits_; false (nothing run) when the
  /// prefixes are longer than the window (the logits entry then re-runs).
  bool advance(const std::vector<TokenIds> &prefixes);

  ModelRunner &runner_;
  const EntryInfo &step_;
  LogitsRerun rerun_;
  int32_t pad_;
  int64_t window_;
  bool ranPastWindow_ = false;
  Tensor held_; ///< the left-padded ids the caches hold
  /// Per step input (empty for non-caches); on a device they stay there.
  std::vector<ResidentTensor> caches_;
  std::vector<ResidentTensor> logits_; ///< the last step's output
};

struct GenerateSettings {
  int32_t eos = 0;
  int64_t maxNewTokens = 1;
  SamplingOptions sampling;
  AllowedIds allowed; ///< the tokenizer's ids (Decoding.h)
};

/// Continues each prompt (non-empty); `rowKeys[k]` is prompts[k]'s index
/// among all prompts (the draws are keyed by it; empty: 0, 1, 2, ...). The
/// outputs exclude the prompt and the end-of-text id. Greedy and sampled
/// choices see only the ids the settings allow (their logits set to
/// -infinity), so every generated id has a word.
std::vector<TokenIds> generateTokens(PrefixModel &model,
                                     const std::vector<TokenIds> &prompts,
                                     const GenerateSettings &settings,
                                     const std::vector<uint64_t> &rowKeys = {});

/// Splits prompt indices into batches of at most `batch` (>= 1) prompts of
/// the same length, in the order of their first prompt; indices ascend
/// within a batch.
std::vector<std::vector<size_t>>
equalLengthBatches(const std::vector<TokenIds> &prompts, size_t batch);

} // namespace txrt::driver

#endif // TXRT_DRIVER_GENERATION_H
