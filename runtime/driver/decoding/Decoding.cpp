//===- Decoding.cpp - greedy and beam-search decoding ---------------------===//
#include "decoding/Decoding.h"
#include "data/Batching.h"
#include "core/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace txrt::driver {

namespace {

/// The entry with `role`; ModelError naming `purpose` when absent.
const EntryInfo &entryByRole(const ModelRunner &runner, std::string_view role,
                             const std::string &purpose) {
  if (const EntryInfo *entry = runner.model().findEntryByRole(role))
    return *entry;
  throw ModelError("model '" + runner.model().model +
                   "' has no entry with role '" + std::string(role) +
                   "', which " + purpose + " needs");
}

/// decode's inputs in their declared order, by role: the encoder's
/// memory, the source ids, and the target prefix for target_in.
std::vector<EntryInput> decodeInputs(const EntryInfo &decode,
                                     ResidentTensor &memory, const Tensor &src,
                                     const Tensor &target) {
  std::vector<EntryInput> inputs;
  for (const TensorSig &sig : decode.inputs)
    inputs.push_back(sig.role == "memory"   ? EntryInput(&memory)
                     : sig.role == "source" ? EntryInput(&src)
                                            : EntryInput(&target));
  return inputs;
}

} // namespace

//===----------------------------------------------------------------------===//
// RerunDecoder
//===----------------------------------------------------------------------===//

RerunDecoder::RerunDecoder(ModelRunner &runner, int32_t pad)
    : runner_(runner), encode_(entryByRole(runner, "encode", "decoding")),
      decode_(entryByRole(runner, "decode", "decoding")), pad_(pad) {
  if (encode_.outputs.size() != 1 || decode_.outputs.size() != 1 ||
      decode_.outputs[0].shape.size() != 3 ||
      !decode_.findInputByRole("target_in"))
    throw ModelError("decoding needs encode(source) -> memory and "
                     "decode(target_in[, memory][, source]) -> logits "
                     "[B, T, V]");
  for (const TensorSig &sig : decode_.inputs)
    if (sig.role != "memory" && sig.role != "source" &&
        sig.role != "target_in")
      throw ModelError("decode input '" + sig.name + "' has role '" +
                       sig.role + "'; decoding feeds target_in, memory and "
                       "source");
  const TensorSig *source = encode_.findInputByRole("source");
  if (!source && !encode_.inputs.empty())
    source = &encode_.inputs.front();
  if (source) {
    sourceRows_ = source->padTo(0);
    sourceLength_ = source->padTo(1);
  }
  const TensorSig *target = decode_.findInputByRole("target_in");
  targetRows_ = target->padTo(0);
  targetLength_ = target->padTo(1);
}

int64_t RerunDecoder::vocabSize() const {
  const DimRef &vocab = decode_.outputs[0].shape[2];
  if (vocab.isSymbolic())
    throw ModelError("the vocabulary dim of decode's logits must be static");
  return vocab.size;
}

void RerunDecoder::start(const std::vector<TokenIds> &sources) {
  src_ =
      padIdsTo(padSequences(sources, pad_, sourceLength_), pad_, sourceRows_);
  std::vector<ResidentTensor> outputs = runner_.callKeeping(encode_, {&src_});
  memory_ = std::move(outputs[0]);
}

std::vector<float> RerunDecoder::next(const std::vector<TokenIds> &prefixes) {
  // Rows and positions past the prefixes (a length or batch the spec
  // writes as a constant) are pad: each row's logits are read at its own
  // newest token.
  Tensor tgt =
      padIdsTo(padSequences(prefixes, pad_, targetLength_), pad_, targetRows_);
  const int64_t rows = int64_t(prefixes.size()), length = tgt.shape[1];
  std::vector<Tensor> outputs =
      runner_.callWith(decode_, decodeInputs(decode_, memory_, src_, tgt));
  const int64_t vocab = outputs[0].shape[2];
  std::vector<float> logits(size_t(rows * vocab));
  const float *all = outputs[0].as<float>();
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t newest =
        std::max<int64_t>(int64_t(prefixes[size_t(row)].size()), 1) - 1;
    std::copy_n(all + (row * length + newest) * vocab, vocab,
                logits.begin() + row * vocab);
  }
  return logits;
}

//===----------------------------------------------------------------------===//
// CachedDecoder
//===----------------------------------------------------------------------===//

namespace {

/// The source or target_in input of `entry` whose batch the spec writes as
/// a constant (more than one row), or null: decode_step's caches hold a row
/// per hypothesis, so such a model decodes with `decode` over padded rows.
const TensorSig *constantBatchInput(const EntryInfo &entry) {
  for (const TensorSig &sig : entry.inputs)
    if ((sig.role == "source" || sig.role == "target_in") && sig.padTo(0) > 1)
      return &sig;
  return nullptr;
}

} // namespace

bool CachedDecoder::available(const ModelInfo &model) {
  const EntryInfo *encode = model.findEntryByRole("encode");
  const EntryInfo *step = model.findEntryByRole("decode_step");
  if (!encode || !step)
    return false;
  if (constantBatchInput(*encode) || constantBatchInput(*step))
    return !model.findEntryByRole("decode");
  return true;
}

void CachedDecoder::regrowCaches(const std::vector<size_t> &from) {
  // Every cache in one call (on a device, one launch); the new position
  // needs no zeros where decode_step writes it first (writes_last_rows).
  std::vector<ResidentTensor *> caches;
  bool allWritten = true;
  for (size_t i = 0; i < step_.inputs.size(); ++i)
    if (isCacheInput(i)) {
      caches.push_back(&caches_[i]);
      allWritten = allWritten && step_.inputs[i].writesLastRows.has_value();
    }
  ResidentTensor::regrowAll(caches, from, 1, !allWritten);
}

bool CachedDecoder::isCacheInput(size_t input) const {
  const TensorSig &sig = step_.inputs[input];
  return sig.role == "cache" &&
         std::find(crossNames_.begin(), crossNames_.end(), sig.name) ==
             crossNames_.end();
}

CachedDecoder::CachedDecoder(ModelRunner &runner, int32_t pad)
    : runner_(runner), encode_(entryByRole(runner, "encode", "decoding")),
      step_(entryByRole(runner, "decode_step", "incremental decoding")),
      init_(runner.model().findEntryByRole("decode_init")), pad_(pad) {
  if (step_.outputs.size() != 1 || step_.outputs[0].shape.size() != 3)
    throw ModelError("decode_step must return logits [B, T, V]");
  if (init_)
    for (const TensorSig &sig : init_->outputs)
      crossNames_.push_back(sig.name);
  // decode_init's outputs feed decode_step's inputs of the same names (the
  // cross-attention keys and values); the rest go by role.
  for (const TensorSig &sig : step_.inputs) {
    bool known = sig.role == "target_in" || sig.role == "source" ||
                 sig.role == "cache" ||
                 std::find(crossNames_.begin(), crossNames_.end(), sig.name) !=
                     crossNames_.end();
    if (!known)
      throw ModelError("decode_step input '" + sig.name + "' (role '" +
                       sig.role + "') is none of target_in, source, cache "
                       "and decode_init's outputs");
  }
  for (const EntryInfo *entry : {&encode_, &step_})
    if (const TensorSig *sig = constantBatchInput(*entry))
      throw ModelError("input '" + sig->name + "' of entry '" + entry->name +
                       "' has a constant batch of " +
                       std::to_string(sig->padTo(0)) +
                       " rows, and decoding with decode_step keeps a row per "
                       "hypothesis: write the batch as a dim (`dim B <= " +
                       std::to_string(sig->padTo(0)) +
                       "`) or give the model a decode "
                       "entry, which decodes over padded rows");
}

int64_t CachedDecoder::vocabSize() const {
  const DimRef &vocab = step_.outputs[0].shape[2];
  if (vocab.isSymbolic())
    throw ModelError("the vocabulary dim of decode_step's logits must be "
                     "static");
  return vocab.size;
}

namespace {

/// The source rows padded for `encode`: on a device to a multiple of 8
/// positions (within the source dim's bound), so that batches of nearby
/// lengths share one shape and a decoding step's graph captured for one
/// replays for the others (docs/cuda.md "CUDA graphs"). The pads are masked
/// keys, as every batch's shorter rows are: the same translations.
Tensor paddedSources(ModelRunner &runner, const EntryInfo &encode,
                     const std::vector<TokenIds> &sources, int32_t pad) {
  int64_t longest = 0;
  for (const TokenIds &source : sources)
    longest = std::max(longest, int64_t(source.size()));
  int64_t length = longest;
  const TensorSig *src = encode.findInputByRole("source");
  if (!src && !encode.inputs.empty())
    src = &encode.inputs.front();
  if (src)
    length = std::max(length, src->padTo(1)); // a constant length
  if (runner.device() && src && src->shape.size() == 2 &&
      src->shape[1].isSymbolic()) {
    const int64_t bound =
        runner.model().dims[size_t(src->shape[1].dim)].bound;
    length = std::max(longest, std::min(bound, (longest + 7) / 8 * 8));
  }
  return padSequences(sources, pad, length);
}

} // namespace

void CachedDecoder::start(const std::vector<TokenIds> &sources) {
  sources_ = sources;
  src_ = paddedSources(runner_, encode_, sources, pad_);
  // Every resident tensor keeps its storage from batch to batch (a step's
  // graph replays at the same addresses).
  runner_.callKeeping(encode_, {&src_}, memory_);
  srcHere_.assign(runner_.device(), src_.dtype, src_.shape, "the source ids");
  srcHere_.write(src_);
  if (init_)
    runner_.callKeeping(*init_, {&memory_[0]}, cross_);
  cached_.clear();
}

void CachedDecoder::step(const std::vector<TokenIds> &prefixes,
                         size_t length) {
  const int64_t rows = int64_t(prefixes.size());
  Tensor tgt(DType::I32, {rows, 1});
  for (int64_t row = 0; row < rows; ++row)
    tgt.as<int32_t>()[row] = prefixes[size_t(row)][length - 1];
  std::vector<EntryInput> inputs;
  for (size_t i = 0; i < step_.inputs.size(); ++i) {
    const std::string &name = step_.inputs[i].name;
    const std::string &role = step_.inputs[i].role;
    if (role == "target_in")
      inputs.push_back(&tgt);
    else if (role == "source")
      inputs.push_back(&srcHere_);
    else if (isCacheInput(i))
      inputs.push_back(&caches_[i]);
    else
      inputs.push_back(&cross_[size_t(
          std::find(crossNames_.begin(), crossNames_.end(), name) -
          crossNames_.begin())]);
  }
  // The logits stay where the step wrote them (in the same block from
  // token to token, for a step's graph to replay).
  runner_.callKeeping(step_, inputs, logits_);
}

void CachedDecoder::advance(const std::vector<TokenIds> &prefixes) {
  const size_t rows = prefixes.size(), length = prefixes.front().size();
  if (int64_t(rows) != src_.shape[0])
    throw ModelError("incremental decoding got " + std::to_string(rows) +
                     " prefixes for " + std::to_string(src_.shape[0]) +
                     " sources");
  // Which cached row each prefix extends by one token: the row itself when
  // it does (greedy), else another row (beam search reorders hypotheses).
  // The caches hold keys and values computed through the cross-attention of
  // a row's own source, so only a row of the same source may be taken: the
  // same target prefix under another source has other caches.
  std::vector<size_t> from(rows);
  bool extends = !cached_.empty() && cached_.front().size() + 1 == length;
  auto holds = [&](size_t cachedRow, size_t row) {
    const TokenIds &held = cached_[cachedRow];
    return sources_[cachedRow] == sources_[row] &&
           std::equal(held.begin(), held.end(), prefixes[row].begin());
  };
  for (size_t row = 0; extends && row < rows; ++row) {
    if (row < cached_.size() && holds(row, row)) {
      from[row] = row;
      continue;
    }
    size_t found = 0;
    while (found < cached_.size() && !holds(found, row))
      ++found;
    extends = found < cached_.size();
    from[row] = found;
  }
  if (extends) {
    regrowCaches(from);
    step(prefixes, length);
  } else {
    // Replay every prefix from empty caches, one token at a time.
    caches_.resize(step_.inputs.size());
    std::vector<size_t> identity(rows);
    for (size_t row = 0; row < rows; ++row)
      identity[row] = row;
    for (size_t i = 0; i < step_.inputs.size(); ++i)
      if (isCacheInput(i)) {
        const DimRef &width = step_.inputs[i].shape.back();
        caches_[i].assign(runner_.device(), DType::F32,
                          {int64_t(rows), 0, width.size},
                          "cache '" + step_.inputs[i].name + "' of entry '" +
                              step_.name + "'");
      }
    for (size_t t = 1; t <= length; ++t) {
      regrowCaches(identity);
      step(prefixes, t);
    }
  }
  cached_ = prefixes;
}

std::vector<float> CachedDecoder::next(const std::vector<TokenIds> &prefixes) {
  advance(prefixes);
  Tensor logits = logits_[0].read();
  return std::vector<float>(logits.as<float>(),
                            logits.as<float>() + logits.numElements());
}

TokenIds CachedDecoder::nextGreedy(const std::vector<TokenIds> &prefixes,
                                   const AllowedIds &allowed) {
  advance(prefixes);
  const ResidentTensor &logits = logits_[0];
  const int64_t rows = logits.shape()[0], vocab = logits.shape()[2];
  return chooseWhereTheyAre(logits, 0, rows, vocab, vocab, allowed);
}

Tensor teacherForcedLogits(ModelRunner &runner, const Tensor &src,
                           const Tensor &tgtIn) {
  const EntryInfo &encode = entryByRole(runner, "encode", "teacher forcing");
  const EntryInfo &decode = entryByRole(runner, "decode", "teacher forcing");
  std::vector<ResidentTensor> memory = runner.callKeeping(encode, {&src});
  return std::move(
      runner.callWith(decode, decodeInputs(decode, memory[0], src, tgtIn))[0]);
}

std::unique_ptr<NextTokenModel> makeDecoder(ModelRunner &runner, int32_t pad,
                                            bool incremental) {
  if (incremental && CachedDecoder::available(runner.model()))
    return std::make_unique<CachedDecoder>(runner, pad);
  return std::make_unique<RerunDecoder>(runner, pad);
}

//===----------------------------------------------------------------------===//
// Greedy
//===----------------------------------------------------------------------===//

void AllowedIds::apply(float *logits, int64_t rows, int64_t vocab) const {
  const float never = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    float *row = logits + r * vocab;
    if (emittable > 0 && emittable < vocab)
      std::fill(row + emittable, row + vocab, never);
    for (int32_t id : excluded)
      if (id >= 0 && id < vocab)
        row[id] = never;
  }
}

int32_t AllowedIds::choose(const float *row, int64_t vocab) const {
  return chooseRows(row, 1, vocab, vocab)[0];
}

TokenIds AllowedIds::chooseRows(const float *logits, int64_t rows,
                                int64_t vocab, int64_t rowStride) const {
  // torch.argmax's rule over apply()'s row: the first NaN wins (and the
  // caller refuses it as a non-finite choice), else the first largest (a
  // later id replaces the best only when strictly larger). Greedy decoding
  // chose past a NaN that was not the largest, where torch's argmax picks
  // it and sampling and beam search refuse the row. An id apply() sets to
  // -infinity never replaces the best, so the scan skips those ids (past
  // `emittable`, the excluded ones) instead of reading them as -infinity.
  const int64_t limit = emittable > 0 && emittable < vocab ? emittable : vocab;
  std::vector<int64_t> skipped;
  for (int32_t id : excluded)
    if (id >= 0 && id < limit)
      skipped.push_back(id);
  std::sort(skipped.begin(), skipped.end());
  const bool firstMasked =
      limit == 0 || (!skipped.empty() && skipped.front() == 0);
  skipped.push_back(limit); // the end of the last run
  TokenIds ids(size_t(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = logits + r * rowStride;
    int64_t best = 0, begin = 1;
    float bestValue =
        firstMasked ? -std::numeric_limits<float>::infinity() : row[0];
    for (int64_t end : skipped) {
      if (std::isnan(bestValue))
        break;
      for (int64_t id = begin; id < end; ++id)
        if (!(row[id] <= bestValue)) { // larger, or NaN
          best = id;
          bestValue = row[id];
          if (std::isnan(bestValue))
            break;
        }
      begin = std::max(begin, end + 1);
    }
    ids[size_t(r)] = int32_t(best);
  }
  return ids;
}

namespace {

NonFiniteLogitsError nonFiniteLogits(int64_t row, int64_t id, float value) {
  return NonFiniteLogitsError(row, "id " + std::to_string(id) + " at " +
                                       (std::isnan(value) ? "nan"
                                        : value > 0       ? "inf"
                                                          : "-inf"));
}

} // namespace

TokenIds chooseDecoded(const float *logits, int64_t rows, int64_t vocab,
                       int64_t rowStride, const AllowedIds &allowed) {
  TokenIds ids = allowed.chooseRows(logits, rows, vocab, rowStride);
  for (size_t r = 0; r < ids.size(); ++r) {
    float value = logits[int64_t(r) * rowStride + ids[r]];
    if (!std::isfinite(value))
      throw nonFiniteLogits(int64_t(r), ids[r], value);
  }
  return ids;
}

void requireFiniteLogits(const float *row, int64_t vocab, int64_t rowIndex) {
  bool anyAbove = false;
  for (int64_t id = 0; id < vocab; ++id) {
    float value = row[id];
    if (std::isnan(value) || value == std::numeric_limits<float>::infinity())
      throw nonFiniteLogits(rowIndex, id, value);
    anyAbove = anyAbove || value > -std::numeric_limits<float>::infinity();
  }
  if (vocab > 0 && !anyAbove)
    throw nonFiniteLogits(rowIndex, 0, row[0]);
}

TokenIds chooseWhereTheyAre(const ResidentTensor &logits, int64_t offset,
                            int64_t rows, int64_t vocab, int64_t rowStride,
                            const AllowedIds &allowed) {
  const float *data = static_cast<const float *>(logits.data()) + offset;
  Tensor host;
  if (Device *device = logits.device()) {
    TokenIds ids(size_t(rows), 0);
    // A choice from non-finite logits comes back negative: the rows are
    // read and searched here, which refuses them with the host's message.
    if (device->argmaxRows(data, rows, vocab, rowStride, allowed.emittable,
                           allowed.excluded, ids.data()) &&
        std::none_of(ids.begin(), ids.end(), [](int32_t id) { return id < 0; }))
      return ids;
    host = logits.read();
    data = host.as<float>() + offset;
  }
  return chooseDecoded(data, rows, vocab, rowStride, allowed);
}

TokenIds NextTokenModel::nextGreedy(const std::vector<TokenIds> &prefixes,
                                    const AllowedIds &allowed) {
  std::vector<float> logits = next(prefixes);
  const int64_t vocab = vocabSize();
  return chooseDecoded(logits.data(), int64_t(prefixes.size()), vocab, vocab,
                       allowed);
}

std::vector<TokenIds> greedyDecode(NextTokenModel &model,
                                   const std::vector<TokenIds> &sources,
                                   const DecodeOptions &options) {
  const size_t rows = sources.size();
  std::vector<TokenIds> prefixes(rows, TokenIds{options.sos});
  std::vector<bool> done(rows, false);
  if (rows == 0)
    return {};
  model.start(sources);
  for (int64_t step = 0; step < options.maxLength; ++step) {
    const TokenIds choices = model.nextGreedy(prefixes, options.allowed);
    bool allDone = true;
    for (size_t row = 0; row < rows; ++row) {
      if (done[row]) {
        prefixes[row].push_back(options.pad);
        continue;
      }
      const int32_t best = choices[row];
      prefixes[row].push_back(best);
      done[row] = best == options.eos;
      allDone = allDone && done[row];
    }
    if (allDone)
      break;
  }
  std::vector<TokenIds> outputs;
  for (const TokenIds &prefix : prefixes) {
    TokenIds words;
    for (size_t i = 1; i < prefix.size() && prefix[i] != options.eos; ++i)
      words.push_back(prefix[i]);
    outputs.push_back(std::move(words));
  }
  return outputs;
}

//===----------------------------------------------------------------------===//
// Beam search
//===----------------------------------------------------------------------===//

double lengthPenalty(int64_t length, double alpha) {
  return std::pow((5.0 + double(length)) / 6.0, alpha);
}

namespace {

struct Hypothesis {
  TokenIds tokens; ///< [SOS] first
  double logProb = 0;
};

/// log-softmax of one row, in double.
std::vector<double> logSoftmax(const float *scores, int64_t vocab) {
  double top = *std::max_element(scores, scores + vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(double(scores[i]) - top);
  double logSum = top + std::log(sum);
  std::vector<double> out(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i)
    out[size_t(i)] = double(scores[i]) - logSum;
  return out;
}

/// One sentence's beam search: `beam` hypotheses (rows), each extended by
/// its best `beam` + 1 tokens, the best `beam` unfinished ones kept.
class BeamSearch {
public:
  BeamSearch(const DecodeOptions &options, size_t beam)
      : options_(options), beam_(beam), alive_{Hypothesis{{options.sos}, 0}} {}

  /// Whether the search has ended: no hypothesis is left to extend, or
  /// `beam` have finished and none alive would beat the worst of them were
  /// it to end at the next step (its log-probability can only fall). A
  /// beam as wide as the vocabulary takes improbable [EOS] continuations
  /// at the first steps; they must not end the search on their own.
  bool done() const {
    if (alive_.empty())
      return true;
    if (finished_.size() < beam_)
      return false;
    double bestAlive = -std::numeric_limits<double>::infinity();
    for (const Hypothesis &h : alive_)
      bestAlive = std::max(bestAlive,
                           normalized(h, int64_t(h.tokens.size())));
    return bestAlive <= finished_.back().first;
  }

  /// The prefix of row `row` < beam (rows past the alive hypotheses repeat
  /// the first).
  const TokenIds &prefix(size_t row) const {
    return alive_[row < alive_.size() ? row : 0].tokens;
  }

  /// Extends the hypotheses by the logits of the search's rows ([beam *
  /// vocab], the disallowed ids already -infinity).
  void advance(const float *logits, int64_t vocab) {
    struct Candidate {
      double logProb;
      size_t parent;
      int32_t token;
    };
    std::vector<Candidate> candidates;
    for (size_t h = 0; h < alive_.size(); ++h) {
      requireFiniteLogits(logits + int64_t(h) * vocab, vocab, int64_t(h));
      std::vector<double> logProbs = logSoftmax(logits + int64_t(h) * vocab, vocab);
      std::vector<int32_t> order(static_cast<size_t>(vocab));
      std::iota(order.begin(), order.end(), 0);
      // Its best beam + 1 tokens: its best `beam` unfinished continuations
      // whether or not [EOS] is among them. With `beam` tokens, an [EOS]
      // among them crowded out an unfinished continuation of the best
      // `beam`, and --beam 2 answered what greedy did where a beam of two
      // finds a better translation (fairseq takes 2 x beam candidates of
      // the whole beam for the same reason).
      size_t keep = std::min(beam_ + 1, order.size());
      std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(keep),
                        order.end(), [&](int32_t a, int32_t b) {
                          return logProbs[size_t(a)] != logProbs[size_t(b)]
                                     ? logProbs[size_t(a)] > logProbs[size_t(b)]
                                     : a < b;
                        });
      for (size_t k = 0; k < keep; ++k)
        if (!std::isinf(logProbs[size_t(order[k])])) // a disallowed id
          candidates.push_back(
              {alive_[h].logProb + logProbs[size_t(order[k])], h, order[k]});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate &a, const Candidate &b) {
                       return a.logProb > b.logProb;
                     });
    std::vector<Hypothesis> next;
    for (const Candidate &candidate : candidates) {
      if (next.size() == beam_)
        break;
      Hypothesis extended = alive_[candidate.parent];
      extended.tokens.push_back(candidate.token);
      extended.logProb = candidate.logProb;
      if (candidate.token == options_.eos) {
        int64_t length = int64_t(extended.tokens.size()) - 1;
        // The best `beam` finished hypotheses, best first (an equal score
        // goes after the earlier ones, so the first of them stays).
        const double score = normalized(extended, length);
        finished_.insert(std::upper_bound(finished_.begin(), finished_.end(),
                                          score,
                                          [](double value, const auto &kept) {
                                            return value > kept.first;
                                          }),
                         {score, extended.tokens});
        if (finished_.size() > beam_)
          finished_.pop_back();
      } else {
        next.push_back(std::move(extended));
      }
    }
    alive_ = std::move(next);
  }

  /// The best hypothesis without [SOS] and [EOS]: the best finished one,
  /// or an alive one that scores higher. At the length bound the alive
  /// hypotheses end there and compete with the finished ones (as fairseq
  /// and Marian finish them): the first step's improbable [EOS] was
  /// chosen over every unfinished translation, however likely (an empty
  /// line at --beam 3 where --beam 2 and greedy gave a translation of
  /// log-probability -0.001 against -11.2). A search that ended before
  /// the bound has no alive hypothesis above its worst finished one
  /// (done()), so the finished ones win there as before; a tie keeps
  /// the finished one.
  TokenIds best() const {
    const TokenIds *top = nullptr;
    double topScore = -std::numeric_limits<double>::infinity();
    if (!finished_.empty()) {
      top = &finished_.front().second;
      topScore = finished_.front().first;
    }
    for (const Hypothesis &h : alive_) {
      const double score = normalized(h, int64_t(h.tokens.size()) - 1);
      if (!top || score > topScore) {
        top = &h.tokens;
        topScore = score;
      }
    }
    if (!top)
      return {};
    TokenIds words;
    for (size_t i = 1; i < top->size() && (*top)[i] != options_.eos; ++i)
      words.push_back((*top)[i]);
    return words;
  }

private:
  double normalized(const Hypothesis &h, int64_t length) const {
    return h.logProb / lengthPenalty(length, options_.lengthPenaltyAlpha);
  }

  const DecodeOptions &options_;
  size_t beam_;
  std::vector<Hypothesis> alive_;
  /// The best `beam` finished hypotheses (score, tokens), best first.
  std::vector<std::pair<double, TokenIds>> finished_;
};

} // namespace

std::vector<TokenIds> beamDecodeBatch(NextTokenModel &model,
                                      const std::vector<TokenIds> &sources,
                                      const DecodeOptions &options) {
  if (sources.empty())
    return {};
  const size_t beam = size_t(std::max<int32_t>(options.beamSize, 1));
  // Sentence s owns rows s * beam .. s * beam + beam - 1 of the batch.
  std::vector<TokenIds> rowSources;
  for (const TokenIds &source : sources)
    rowSources.insert(rowSources.end(), beam, source);
  model.start(rowSources);
  const int64_t vocab = model.vocabSize();
  std::vector<BeamSearch> searches(sources.size(), BeamSearch(options, beam));
  std::vector<TokenIds> prefixes(rowSources.size());
  std::vector<bool> searching(searches.size());
  for (int64_t step = 0; step < options.maxLength; ++step) {
    for (size_t s = 0; s < searches.size(); ++s)
      searching[s] = !searches[s].done();
    if (std::find(searching.begin(), searching.end(), true) == searching.end())
      break;
    // An ended search's rows grow by [PAD] (ignored), so every row keeps
    // the others' length and extends its own cache.
    for (size_t s = 0; s < searches.size(); ++s)
      for (size_t i = 0; i < beam; ++i) {
        TokenIds &prefix = prefixes[s * beam + i];
        if (searching[s])
          prefix = searches[s].prefix(i);
        else
          prefix.push_back(options.pad);
      }
    std::vector<float> logits = model.next(prefixes);
    options.allowed.apply(logits.data(), int64_t(logits.size()) / vocab,
                          vocab);
    for (size_t s = 0; s < searches.size(); ++s)
      if (searching[s]) {
        try {
          searches[s].advance(logits.data() + int64_t(s * beam) * vocab, vocab);
        } catch (const NonFiniteLogitsError &error) {
          throw error.atRow(int64_t(s)); // the sentence, not its hypothesis
        }
      }
  }
  std::vector<TokenIds> outputs;
  for (const BeamSearch &search : searches)
    outputs.push_back(search.best());
  return outputs;
}

TokenIds beamDecode(NextTokenModel &model, const TokenIds &source,
                    const DecodeOptions &options) {
  return beamDecodeBatch(model, {source}, options).front();
}

} // namespace txrt::driver

