//===- Decoding.h - greedy and beam-search decoding -------------*- C++ -*-===//
//
// Decoding asks a NextTokenModel for the logits of the token after each
// row's prefix. RerunDecoder implements it with the compiled entries of
// roles `encode` (source -> memory) and `decode` (target_in prefix, memory,
// source -> logits [B, T, V]), inputs found by role, re-running the whole
// prefix at every step; an incremental implementation over a KV-cache entry
// (role "decode_step") plugs in behind the same interface.
//
//   greedy  every row takes the argmax (ties: the lowest id) until it emits
//           [EOS] or has maxLength tokens; rows are decoded together.
//   beam    per sentence, `beamSize` hypotheses extended by their best
//           beamSize + 1 tokens each (so [EOS] among them leaves beamSize
//           others), the best beamSize unfinished ones kept by
//           log-probability, with the [EOS] continuations ranked above the
//           last of them finishing;
//           finished hypotheses ([EOS]) are ranked by log P / lp(length),
//           lp = ((5 + length) / 6)^alpha (GNMT, alpha 0.6, length counting
//           [EOS]), the best beamSize of them kept; search ends when
//           beamSize have finished and no alive hypothesis, were it to end
//           at the next step, would rank above the worst of them, or at
//           the length bound (then, if none finished, the unfinished ones
//           compete). Not just "beamSize finished": a beam as wide as the
//           vocabulary takes improbable [EOS] continuations at the first
//           steps, and those must not end the search on their own.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_DECODING_H
#define TXRT_DRIVER_DECODING_H

#include "core/ModelRunner.h"
#include "core/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace txrt::driver {

using TokenIds = std::vector<int32_t>;

/// The ids a search may choose: [0, emittable) (0: every id of the
/// logits) less `excluded`. A model's vocab dim may be larger than its
/// tokenizer (config vocab is a bound), and the ids past it have no text;
/// [PAD] and [SOS] are excluded where a tokenizer writes the output (no
/// target holds them after the first position, and the detokenizer drops
/// them).
struct AllowedIds {
  int64_t emittable = 0;
  std::vector<int32_t> excluded;
  /// Sets every other id's logit to -infinity in `rows` rows of `vocab`.
  void apply(float *logits, int64_t rows, int64_t vocab) const;
  /// The greedy choice in a row of `vocab` logits: the first id of the
  /// largest logit once apply() has run (ties: the lowest id; the first
  /// NaN wins, as in torch.argmax; a row with nothing above -infinity
  /// gives 0), without writing the row.
  int32_t choose(const float *row, int64_t vocab) const;
  /// choose() of `rows` rows of `vocab` logits, `rowStride` floats apart.
  TokenIds chooseRows(const float *logits, int64_t rows, int64_t vocab,
                      int64_t rowStride) const;
};

/// AllowedIds::chooseRows on host logits, for decoding: a chosen logit
/// that is not finite (NaN, infinity: finite weights of a run saved just
/// before it diverged) is a KernelError, not an empty line with exit 0.
TokenIds chooseDecoded(const float *logits, int64_t rows, int64_t vocab,
                       int64_t rowStride, const AllowedIds &allowed);

/// Refuses (KernelError) a row of `vocab` logits that beam search or
/// sampling cannot rank: a NaN or +infinity anywhere, or nothing above
/// -infinity (-infinity alone is an id made impossible, which is fine).
void requireFiniteLogits(const float *row, int64_t vocab, int64_t rowIndex);

/// The greedy choices of `rows` rows of `vocab` logits in `logits` (an
/// entry's output kept where it ran), row r at `offset` + r * `rowStride`
/// floats: made on its device when it has one that can
/// (Device::argmaxRows, only the ids come back, unchecked), else on the
/// host (chooseDecoded).
TokenIds chooseWhereTheyAre(const ResidentTensor &logits, int64_t offset,
                            int64_t rows, int64_t vocab, int64_t rowStride,
                            const AllowedIds &allowed);

/// Scores the next token of each row of a batch of prefixes.
class NextTokenModel {
public:
  virtual ~NextTokenModel() = default;
  /// Starts a batch of source rows (already encoded, unpadded).
  virtual void start(const std::vector<TokenIds> &sources) = 0;
  /// `prefixes` (one per source row, equal lengths, starting with [SOS]) ->
  /// logits [rows * vocab] of the next token of each row.
  virtual std::vector<float> next(const std::vector<TokenIds> &prefixes) = 0;
  /// next() and the greedy choice of each row among `allowed`
  /// (AllowedIds::choose). A decoder whose logits stay on a device
  /// chooses there and copies only the ids back.
  virtual TokenIds nextGreedy(const std::vector<TokenIds> &prefixes,
                              const AllowedIds &allowed);
  virtual int64_t vocabSize() const = 0;
};

/// The compiled encode + decode entries, re-running the prefix each step.
class RerunDecoder : public NextTokenModel {
public:
  RerunDecoder(ModelRunner &runner, int32_t pad);
  void start(const std::vector<TokenIds> &sources) override;
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override;
  int64_t vocabSize() const override;

private:
  ModelRunner &runner_;
  const EntryInfo &encode_, &decode_;
  int32_t pad_;
  /// The rows and positions the spec writes as constants for the source
  /// and target_in inputs (1 where a dim): the batches are padded to them.
  int64_t sourceRows_ = 1, sourceLength_ = 1, targetRows_ = 1,
          targetLength_ = 1;
  Tensor src_;
  ResidentTensor memory_; ///< encode's output, where decode runs
};

/// Incremental decoding with the compiled KV-cache entries (txc's
/// tx-decode-step): `decode_init` (memory -> cross-attention keys and
/// values, once per batch of sentences) and `decode_step` (the newest token
/// of each row, src, those, and the self-attention caches self_k.j /
/// self_v.j [rows, positions, d], which the step extends in place) -> the
/// next token's logits. A step costs one token's work. The caches follow
/// the rows: when a prefix is an earlier row's prefix plus one token under
/// the same source (greedy keeps rows, beam search reorders them), that
/// row's caches move with it; otherwise the prefix is replayed token by
/// token. The caches and decode_init's outputs are ResidentTensors: on a
/// device they stay there, and a step copies only the newest tokens in and
/// the logits out.
class CachedDecoder : public NextTokenModel {
public:
  CachedDecoder(ModelRunner &runner, int32_t pad);
  /// Whether the model has the entries (encode, decode_step).
  static bool available(const ModelInfo &model);
  void start(const std::vector<TokenIds> &sources) override;
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override;
  /// On a device, the choice is made there (Device::argmaxRows): a token
  /// copies B ids back, not B x vocab logits.
  TokenIds nextGreedy(const std::vector<TokenIds> &prefixes,
                      const AllowedIds &allowed) override;
  int64_t vocabSize() const override;

private:
  /// Runs the steps that extend the caches to `prefixes` (one, or a replay
  /// from empty caches); the next token's logits are left in logits_.
  void advance(const std::vector<TokenIds> &prefixes);
  /// Whether decode_step's input `input` is a self-attention cache.
  bool isCacheInput(size_t input) const;
  /// Every self-attention cache: row r becomes row from[r], one more
  /// position (ResidentTensor::regrowAll).
  void regrowCaches(const std::vector<size_t> &from);
  /// Runs decode_step on the last token of each prefix's first `length`
  /// tokens, growing the caches by one position; the logits [rows, 1,
  /// vocab] stay in logits_.
  void step(const std::vector<TokenIds> &prefixes, size_t length);

  ModelRunner &runner_;
  const EntryInfo &encode_, &step_;
  const EntryInfo *init_;
  int32_t pad_;
  std::vector<TokenIds> sources_;        ///< the batch's source rows
  Tensor src_;
  ResidentTensor srcHere_;               ///< src_ where the entries run
  std::vector<ResidentTensor> memory_;   ///< encode's output
  std::vector<ResidentTensor> cross_;    ///< decode_init's outputs
  std::vector<std::string> crossNames_;  ///< their names
  std::vector<ResidentTensor> caches_;   ///< per step input, or empty
  std::vector<TokenIds> cached_;         ///< what the caches hold, per row
  std::vector<ResidentTensor> logits_;   ///< the last step's output
};

/// decode's logits [B, T, V] for the whole target prefix `tgtIn` [B, T]
/// (teacher forcing: eval's and validation's loss) of the source rows `src`
/// [B, S]; encode's memory stays where the entries run
/// (ModelRunner::callKeeping). ModelError when the model lacks the entries.
Tensor teacherForcedLogits(ModelRunner &runner, const Tensor &src,
                           const Tensor &tgtIn);

/// The best decoder the model supports: CachedDecoder when it has the
/// KV-cache entries (and `incremental`), else RerunDecoder.
std::unique_ptr<NextTokenModel> makeDecoder(ModelRunner &runner, int32_t pad,
                                            bool incremental = true);

struct DecodeOptions {
  int32_t sos = 0, eos = 0, pad = 0;
  int64_t maxLength = 1; ///< tokens generated per row, [EOS] included
  int32_t beamSize = 1;
  double lengthPenaltyAlpha = 0.6;
  AllowedIds allowed; ///< the target tokenizer's ids
};

/// Greedy decoding of a batch; the outputs exclude [SOS] and [EOS].
std::vector<TokenIds> greedyDecode(NextTokenModel &model,
                                   const std::vector<TokenIds> &sources,
                                   const DecodeOptions &options);

/// Beam search of one sentence; the output excludes [SOS] and [EOS].
TokenIds beamDecode(NextTokenModel &model, const TokenIds &source,
                    const DecodeOptions &options);

/// Beam search of several sentences at once, as Marian and fairseq batch
/// it: sentence s's hypotheses are rows s * beamSize ... of one batch, each
/// sentence searched as beamDecode searches it alone (an ended search's
/// rows grow by [PAD] until every search has ended). With a model whose
/// rows do not depend on each other, each output is beamDecode's.
std::vector<TokenIds> beamDecodeBatch(NextTokenModel &model,
                                      const std::vector<TokenIds> &sources,
                                      const DecodeOptions &options);

/// GNMT's length penalty ((5 + length) / 6)^alpha.
double lengthPenalty(int64_t length, double alpha);

} // namespace txrt::driver

#endif // TXRT_DRIVER_DECODING_H
