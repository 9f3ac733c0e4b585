//===- Generation.h - continuing prompts with a language model --*- C++ -*-===//
//
// `generate` asks a PrefixModel for the logits of the token after each row
// of a batch of prompts and picks it with Sampling.h; a row stops at the
// end-of-text id or after maxNewTokens. Rows are LEFT-padded to a common
// length (the model's padding mask hides the pad keys), so every row's
// newest token is the last column.
//
//   LogitsRerun  the compiled `logits` entry (tokens [B, T] -> [B, T, V])
//                re-run over the whole (left-padded) prefix each step; a
//                prefix longer than the T bound keeps its last T tokens.
//
// An incremental implementation over the `lm_step` entry (a KV cache)
// plugs in behind the same interface.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_GENERATION_H
#define TXRT_DRIVER_GENERATION_H

#include "core/ModelRunner.h"
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
  virtual int64_t vocabSize() const = 0;
};

/// The compiled `logits` entry, re-running the whole prefix every step.
class LogitsRerun : public PrefixModel {
public:
  LogitsRerun(ModelRunner &runner, int32_t pad);
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override;
  int64_t vocabSize() const override;

private:
  ModelRunner &runner_;
  const EntryInfo &logits_;
  int32_t pad_;
  int64_t window_; ///< the bound of the tokens input's length dim
};

struct GenerateSettings {
  int32_t eos = 0;
  int64_t maxNewTokens = 1;
  SamplingOptions sampling;
};

/// Continues each prompt (non-empty); `firstRow` is the index of prompts[0]
/// among all prompts (the draws are keyed by it). The outputs exclude the
/// prompt and the end-of-text id.
std::vector<TokenIds> generateTokens(PrefixModel &model,
                                     const std::vector<TokenIds> &prompts,
                                     const GenerateSettings &settings,
                                     uint64_t firstRow = 0);

} // namespace txrt::driver

#endif // TXRT_DRIVER_GENERATION_H
