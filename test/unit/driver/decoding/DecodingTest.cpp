//===- DecodingTest.cpp - greedy and beam search on a scripted model ------===//
#include "decoding/Decoding.h"
#include "TestUtil.h"
#include "core/FakeDevice.h"
#include "core/ModelInfo.h"
#include "core/ModelRunner.h"

#include <cmath>
#include <functional>

using namespace txrt::driver;
using txrt_driver_test::fakeDeviceCounts;
using txrt_driver_test::onFakeDevice;

namespace {

// Ids: 0 [PAD], 1 [UNK], 2 [SOS], 3 [EOS], 4 "a", 5 "b".
constexpr int64_t kVocab = 6;

/// Logits = log of the probabilities `script` gives for (source, prefix).
class ScriptedModel : public NextTokenModel {
public:
  using Script = std::function<std::vector<double>(const TokenIds &source,
                                                   const TokenIds &prefix)>;
  explicit ScriptedModel(Script script) : script_(std::move(script)) {}
  void start(const std::vector<TokenIds> &sources) override {
    sources_ = sources;
    ++starts;
  }
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    EXPECT_EQ(prefixes.size(), sources_.size());
    std::vector<float> logits;
    for (size_t row = 0; row < prefixes.size(); ++row) {
      EXPECT_EQ(prefixes[row].size(), prefixes[0].size());
      for (double p : script_(sources_[row], prefixes[row]))
        logits.push_back(float(std::log(p)));
    }
    ++calls;
    return logits;
  }
  int64_t vocabSize() const override { return kVocab; }
  int starts = 0, calls = 0;

private:
  Script script_;
  std::vector<TokenIds> sources_;
};

std::vector<double> oneHot(int32_t token) {
  std::vector<double> p(kVocab, 0.01);
  p[size_t(token)] = 0.95;
  return p;
}

DecodeOptions options(int64_t maxLength, int32_t beam = 1) {
  DecodeOptions o;
  o.sos = 2;
  o.eos = 3;
  o.pad = 0;
  o.maxLength = maxLength;
  o.beamSize = beam;
  return o;
}

TEST(DecodingTest, GreedyDecodesRowsTogetherAndStopsAtEos) {
  // Source {4}: "a b [EOS]"; source {5}: "b [EOS]".
  ScriptedModel model([](const TokenIds &source, const TokenIds &prefix) {
    TokenIds want = source[0] == 4 ? TokenIds{4, 5, 3} : TokenIds{5, 3};
    size_t i = prefix.size() - 1;
    return oneHot(i < want.size() ? want[i] : 3);
  });
  std::vector<TokenIds> out = greedyDecode(model, {{4}, {5}}, options(7));
  EXPECT_EQ(out, (std::vector<TokenIds>{{4, 5}, {5}}));
  EXPECT_EQ(model.starts, 1);
  EXPECT_EQ(model.calls, 3); // stops once every row has [EOS]
}

TEST(DecodingTest, GreedyStopsAtTheLengthBound) {
  ScriptedModel model(
      [](const TokenIds &, const TokenIds &) { return oneHot(4); });
  EXPECT_EQ(greedyDecode(model, {{4}}, options(3)),
            (std::vector<TokenIds>{{4, 4, 4}}));
}

TEST(DecodingTest, BeamFindsTheMoreLikelySequence) {
  // Greedy takes "a" (0.5) then ends with 0.3; "b" (0.4) then [EOS] 0.99
  // is more likely overall.
  ScriptedModel::Script script = [](const TokenIds &, const TokenIds &prefix) {
    std::vector<double> p(kVocab, 1e-6);
    if (prefix.size() == 1) {
      p[4] = 0.5;
      p[5] = 0.4;
      p[3] = 0.1;
    } else if (prefix.back() == 4) {
      p[3] = 0.3;
      p[4] = 0.35;
      p[5] = 0.35;
    } else {
      p[3] = 0.99;
    }
    return p;
  };
  ScriptedModel greedyModel(script), beamModel(script);
  EXPECT_EQ(greedyDecode(greedyModel, {{4}}, options(2))[0], (TokenIds{4, 4}));
  EXPECT_EQ(beamDecode(beamModel, {4}, options(5, 3)), (TokenIds{5}));
}

TEST(DecodingTest, AnEosCandidateDoesNotCrowdOutAnAliveOne) {
  // A beam of N keeps the N best unfinished continuations, [EOS] aside
  // (fairseq, Marian). Each hypothesis offered its N best tokens, [EOS]
  // among them, so at the first step "b" was dropped for "[EOS]": --beam 2
  // answered the empty line (log P -1.0755 at alpha 0.6, as greedy does)
  // where "b [EOS]" scores -1.0261 (after a tester's bigram model).
  ScriptedModel::Script script = [](const TokenIds &, const TokenIds &prefix) {
    std::vector<double> logit(kVocab, -30.0);
    if (prefix.size() == 1) {
      logit[3] = 0.0;   // [EOS]
      logit[4] = -0.02; // "a"
      logit[5] = -0.05; // "b"
    } else if (prefix.back() == 5) {
      logit[3] = 0.0; // "b" ends
    } else {
      logit[3] = logit[4] = logit[5] = -3.0; // after "a": any of three
    }
    std::vector<double> p;
    for (double l : logit)
      p.push_back(std::exp(l));
    return p;
  };
  DecodeOptions o = options(4, 2);
  o.lengthPenaltyAlpha = 0.6;
  ScriptedModel model(script);
  EXPECT_EQ(beamDecode(model, {4}, o), (TokenIds{5}));
}

TEST(DecodingTest, BeamRefusesNonFiniteLogits) {
  // One NaN among the logits made every log-probability of the row NaN;
  // the search ranked them anyway and printed a made-up translation with
  // exit 0. An +infinity did the same (inf - inf).
  for (double bad : {double(NAN), double(INFINITY)}) {
    ScriptedModel model([bad](const TokenIds &, const TokenIds &prefix) {
      std::vector<double> p = oneHot(prefix.size() < 3 ? 4 : 3);
      if (prefix.size() == 2)
        p[5] = std::exp(bad); // log(exp(x)) = x in the logits
      return p;
    });
    EXPECT_THROW_MESSAGE(beamDecode(model, {4}, options(5, 2)), KernelError,
                         "the model's logits are not finite (row 0, id 5 at ");
  }
}

TEST(DecodingTest, GreedyRefusesANaNThatIsNotTheLargest) {
  // Greedy chose the largest logit past a NaN (torch.argmax picks the NaN)
  // and printed a translation where beam search and sampling refuse the
  // row: a NaN anywhere among the emittable ids now wins and is refused.
  ScriptedModel model([](const TokenIds &, const TokenIds &prefix) {
    std::vector<double> p = oneHot(prefix.size() < 3 ? 4 : 3);
    if (prefix.size() == 2)
      p[5] = std::exp(double(NAN)); // id 4 is still the largest
    return p;
  });
  EXPECT_THROW_MESSAGE(greedyDecode(model, {{4}}, options(5)), KernelError,
                       "the model's logits are not finite (row 0, id 5 at "
                       "nan)");
  // A NaN at an id the search never emits ([PAD] excluded) is no choice.
  ScriptedModel masked([](const TokenIds &, const TokenIds &prefix) {
    std::vector<double> p = oneHot(prefix.size() < 3 ? 4 : 3);
    p[0] = std::exp(double(NAN));
    return p;
  });
  DecodeOptions o = options(5);
  o.allowed.excluded = {0};
  EXPECT_EQ(greedyDecode(masked, {{4}}, o)[0], (TokenIds{4, 4}));
}

// Sentences searched together give what each gets alone, also when their
// searches end at different steps (the ended ones' rows grow by [PAD]).
TEST(DecodingTest, BatchedBeamSearchIsEachSentencesOwn) {
  // Source {4}: "a" then [EOS] is likely at once; source {5}: "b b b"
  // before [EOS]; source {4, 5}: mixed, with ties broken by id.
  ScriptedModel::Script script = [](const TokenIds &source,
                                    const TokenIds &prefix) {
    std::vector<double> p(kVocab, 0.02);
    const size_t at = prefix.size();
    if (source == TokenIds{4}) {
      p[at == 1 ? 4 : 3] = 0.8;
    } else if (source == TokenIds{5}) {
      p[at < 4 ? 5 : 3] = 0.7;
      p[4] = 0.2;
    } else {
      p[4] = 0.4;
      p[5] = 0.4;
      p[3] = at > 2 ? 0.5 : 0.05;
    }
    return p;
  };
  const std::vector<TokenIds> sources = {{4}, {5}, {4, 5}, {5}};
  for (int32_t beam : {1, 2, 3}) {
    std::vector<TokenIds> alone;
    for (const TokenIds &source : sources) {
      ScriptedModel model(script);
      alone.push_back(beamDecode(model, source, options(7, beam)));
    }
    ScriptedModel batched(script);
    EXPECT_EQ(beamDecodeBatch(batched, sources, options(7, beam)), alone)
        << "beam " << beam;
    EXPECT_EQ(batched.starts, 1);
    EXPECT_LE(batched.calls, 7);
  }
  ScriptedModel none(script);
  EXPECT_TRUE(beamDecodeBatch(none, {}, options(7, 2)).empty());
  EXPECT_EQ(none.starts, 0);
}

// A beam as wide as the vocabulary takes every continuation at the first
// steps, [EOS] included however improbable, and the improbable prefixes
// end at once: those junk hypotheses finish first. The search must not end
// on them while an alive hypothesis can still beat the worst of them: "a b
// a b" below (each word 0.9, then [EOS] 0.9), against junk of probability
// 0.02 or less.
TEST(DecodingTest, BeamDoesNotStopOnImprobableFinishedHypotheses) {
  const TokenIds best = {2, 4, 5, 4, 5};
  ScriptedModel::Script script = [&](const TokenIds &,
                                     const TokenIds &prefix) {
    std::vector<double> p(kVocab, 0.02);
    const bool onPath =
        std::equal(prefix.begin(), prefix.end(), best.begin(),
                   best.begin() + std::ptrdiff_t(
                                      std::min(prefix.size(), best.size())));
    if (onPath && prefix.size() < best.size()) {
      p[size_t(best[prefix.size()])] = 0.9;
      p[3] = 0.001;
    } else {
      p[3] = 0.9; // the best path's end, and junk ending at once
    }
    return p;
  };
  for (int32_t beam : {2, 3, 4, 5, 6}) {
    ScriptedModel model(script);
    EXPECT_EQ(beamDecode(model, {4}, options(8, beam)),
              (TokenIds{4, 5, 4, 5}))
        << "beam " << beam;
  }
}

TEST(DecodingTest, AtTheLengthBoundUnfinishedHypothesesCompete) {
  // "a a a ..." is near certain and never ends; [EOS] at the first step
  // is improbable (1e-5). At a bound of 3 the search ends with that empty
  // hypothesis finished and "a a a" alive: the empty line was chosen at
  // --beam 3 and up (--beam 2 never kept the [EOS] hypothesis, nothing
  // finished, and the alive one won). The unfinished one competes now.
  ScriptedModel::Script script = [](const TokenIds &, const TokenIds &) {
    std::vector<double> p(kVocab, 1e-6);
    p[3] = 1e-5;
    p[4] = 1.0 - 1e-5 - 4e-6;
    return p;
  };
  for (int32_t beam : {1, 2, 3, 4, 6}) {
    ScriptedModel model(script);
    EXPECT_EQ(beamDecode(model, {4}, options(3, beam)), (TokenIds{4, 4, 4}))
        << "beam " << beam;
  }
  // A likely [EOS] still ends the search before the bound and wins.
  ScriptedModel ends([](const TokenIds &, const TokenIds &prefix) {
    return oneHot(prefix.size() < 3 ? 5 : 3);
  });
  EXPECT_EQ(beamDecode(ends, {4}, options(8, 4)), (TokenIds{5, 5}));
}

TEST(DecodingTest, OnlyIdsTheTokenizerCanWriteAreChosen) {
  // The model's vocab dim (6) is larger than the tokenizer's (5 words: "b"
  // has none), and it likes [SOS] and [PAD] best at times: both searches
  // take the best id that is a word ("a"), then [EOS].
  ScriptedModel::Script script = [](const TokenIds &, const TokenIds &prefix) {
    std::vector<double> p(kVocab, 1e-6);
    if (prefix.size() == 1) {
      p[5] = 0.5; // no word
      p[2] = 0.3; // [SOS]
      p[4] = 0.2;
    } else {
      p[0] = 0.6; // [PAD]
      p[3] = 0.4;
    }
    return p;
  };
  DecodeOptions restricted = options(4, 2);
  restricted.allowed = {5, {0, 2}};
  ScriptedModel unrestricted(script), greedyModel(script), beamModel(script);
  // Without the restriction: "b" (no word), then [PAD] to the bound.
  EXPECT_EQ(greedyDecode(unrestricted, {{4}}, options(4))[0],
            (TokenIds{5, 0, 0, 0}));
  EXPECT_EQ(greedyDecode(greedyModel, {{4}}, restricted)[0], (TokenIds{4}));
  EXPECT_EQ(beamDecode(beamModel, {4}, restricted), (TokenIds{4}));
}

TEST(DecodingTest, LengthPenaltyIsGnmts) {
  EXPECT_DOUBLE_EQ(lengthPenalty(1, 0.6), 1.0);
  EXPECT_NEAR(lengthPenalty(7, 0.6), std::pow(2.0, 0.6), 1e-12);
  EXPECT_DOUBLE_EQ(lengthPenalty(7, 0.0), 1.0);
}

//===----------------------------------------------------------------------===//
// A hand-written translation model with KV-cache entries
//===----------------------------------------------------------------------===//

// encode: memory[b, s] = (id, id != pad). decode_init: the cross-attention
// "keys" cross_k.0[b, s] = 0.1 id (0 for pads). The logits of target
// position p of row b, with token id and previous token prev:
//   w[id, v] + 0.5 w[prev, (v + 1) mod V] (p > 0) + 0.01 p v
//            + 0.05 v sum_s cross_k.0[b, s]
// decode computes them over the whole prefix from memory; decode_step for
// the newest token, reading prev from its self-attention cache self_k.0
// (position p holds the id as a float, written by the step) and the source
// term from decode_init's output: a lost, stale or misplaced cache row
// changes its logits.
const char kFakeTranslatorJson[] = R"json({
  "version": 1, "model": "fake_translator", "kind": "seq2seq",
  "dims": [{"name": "B", "bound": 8}, {"name": "S", "bound": 16},
           {"name": "T", "bound": 16}, {"name": "P", "bound": 16}],
  "param_arena_bytes": 144,
  "params": [{"name": "w", "dtype": "f32", "shape": [6, 6], "init": "normal",
              "std": 1.0, "offset": 0}],
  "entries": [
    {"name": "encode", "role": "encode", "arena_bytes": 0,
     "inputs": [{"name": "src", "role": "source", "dtype": "i32",
                 "shape": ["B", "S"]}],
     "outputs": [{"name": "memory", "dtype": "f32", "shape": ["B", "S", 2]}]},
    {"name": "decode_init", "role": "decode_init", "arena_bytes": 0,
     "inputs": [{"name": "memory", "role": "memory", "dtype": "f32",
                 "shape": ["B", "S", 2]}],
     "outputs": [{"name": "cross_k.0", "dtype": "f32",
                  "shape": ["B", "S", 1]}]},
    {"name": "decode_step", "role": "decode_step", "arena_bytes": 0,
     "inputs": [{"name": "tgt", "role": "target_in", "dtype": "i32",
                 "shape": ["B", 1]},
                {"name": "src", "role": "source", "dtype": "i32",
                 "shape": ["B", "S"]},
                {"name": "cross_k.0", "role": "cache", "dtype": "f32",
                 "shape": ["B", "S", 1]},
                {"name": "self_k.0", "role": "cache", "dtype": "f32",
                 "shape": ["B", "P", 1], "writes_last_rows": 1}],
     "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", 1, 6]}]},
    {"name": "decode", "role": "decode", "arena_bytes": 0,
     "inputs": [{"name": "tgt", "role": "target_in", "dtype": "i32",
                 "shape": ["B", "T"]},
                {"name": "memory", "role": "memory", "dtype": "f32",
                 "shape": ["B", "S", 2]},
                {"name": "src", "role": "source", "dtype": "i32",
                 "shape": ["B", "S"]}],
     "outputs": [{"name": "logits", "dtype": "f32", "shape": ["B", "T", 6]}]}
  ]
})json";

/// cross_k.0's value for a memory position.
float crossKey(const float *memory) { return 0.1f * memory[0] * memory[1]; }

float translatorLogit(const float *w, int32_t id, int32_t previous, int64_t p,
                      float sourceSum, int64_t v) {
  float value = w[id * kVocab + v] + 0.01f * float(p) * float(v);
  if (previous >= 0)
    value += 0.5f * w[previous * kVocab + (v + 1) % kVocab];
  return value + 0.05f * float(v) * sourceSum;
}

int32_t fakeEncode(void *, void *, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  const int32_t *src = static_cast<const int32_t *>(inputs[0]);
  float *memory = static_cast<float *>(outputs[0]);
  for (int64_t i = 0; i < dims[0] * dims[1]; ++i) {
    memory[2 * i] = float(src[i]);
    memory[2 * i + 1] = src[i] != 0 ? 1.0f : 0.0f;
  }
  return 0;
}

int32_t fakeDecodeInit(void *, void *, void *, const int64_t *dims,
                       void *const *inputs, void *const *outputs) {
  const float *memory = static_cast<const float *>(inputs[0]);
  float *cross = static_cast<float *>(outputs[0]);
  for (int64_t i = 0; i < dims[0] * dims[1]; ++i)
    cross[i] = crossKey(memory + 2 * i);
  return 0;
}

int32_t fakeDecodeStep(void *, void *params, void *, const int64_t *dims,
                       void *const *inputs, void *const *outputs) {
  const float *w = static_cast<const float *>(params);
  const int32_t *tgt = static_cast<const int32_t *>(inputs[0]);
  const float *cross = static_cast<const float *>(inputs[2]);
  float *self = static_cast<float *>(inputs[3]);
  float *logits = static_cast<float *>(outputs[0]);
  const int64_t rows = dims[0], sources = dims[1], held = dims[3];
  for (int64_t b = 0; b < rows; ++b) {
    float sourceSum = 0;
    for (int64_t s = 0; s < sources; ++s)
      sourceSum += cross[b * sources + s];
    const int64_t p = held - 1;
    self[b * held + p] = float(tgt[b]);
    const int32_t previous = p > 0 ? int32_t(self[b * held + p - 1]) : -1;
    for (int64_t v = 0; v < kVocab; ++v)
      logits[b * kVocab + v] =
          translatorLogit(w, tgt[b], previous, p, sourceSum, v);
  }
  return 0;
}

int32_t fakeDecode(void *, void *params, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  const float *w = static_cast<const float *>(params);
  const int32_t *tgt = static_cast<const int32_t *>(inputs[0]);
  const float *memory = static_cast<const float *>(inputs[1]);
  float *logits = static_cast<float *>(outputs[0]);
  const int64_t rows = dims[0], sources = dims[1], length = dims[2];
  for (int64_t b = 0; b < rows; ++b) {
    float sourceSum = 0;
    for (int64_t s = 0; s < sources; ++s)
      sourceSum += crossKey(memory + 2 * (b * sources + s));
    for (int64_t p = 0; p < length; ++p)
      for (int64_t v = 0; v < kVocab; ++v)
        logits[(b * length + p) * kVocab + v] = translatorLogit(
            w, tgt[b * length + p], p > 0 ? tgt[b * length + p - 1] : -1, p,
            sourceSum, v);
  }
  return 0;
}

const txc_entry_fn kFakeTranslatorTable[] = {fakeEncode, fakeDecodeInit,
                                             fakeDecodeStep, fakeDecode};

/// Prefixes as beam search moves them: extended, reordered (rows taking
/// other rows' prefixes), then cut back (replayed from empty caches).
std::vector<std::vector<TokenIds>> beamLikePrefixes() {
  return {{{2}, {2}, {2}},
          {{2, 4}, {2, 5}, {2, 4}},
          {{2, 5, 4}, {2, 4, 4}, {2, 4, 5}},
          {{2, 4, 4, 5}, {2, 4, 4, 5}, {2, 5, 4, 4}},
          {{2, 5}, {2, 4}, {2, 4}}};
}

/// Every next() of `decoder` over beamLikePrefixes, for three rows of one
/// source.
std::vector<std::vector<float>> logitsAlong(NextTokenModel &decoder) {
  decoder.start({{4, 5, 4}, {4, 5, 4}, {4, 5, 4}});
  std::vector<std::vector<float>> all;
  for (const std::vector<TokenIds> &prefixes : beamLikePrefixes())
    all.push_back(decoder.next(prefixes));
  return all;
}

TEST(CachedDecoderTest, MatchesTheRerunAsRowsExtendReorderAndRestart) {
  ModelInfo model = ModelInfo::parse(kFakeTranslatorJson);
  ModelRunner runner(model, kFakeTranslatorTable, 1);
  runner.params().write().initialize(5);
  ASSERT_TRUE(CachedDecoder::available(model));
  CachedDecoder cached(runner, 0);
  RerunDecoder rerun(runner, 0);
  EXPECT_EQ(logitsAlong(cached), logitsAlong(rerun));
  // Greedy rows of different sources, and beam search, a sentence at a
  // time and batched (each sentence's rows only take their own caches).
  std::vector<TokenIds> sources = {{4, 5, 4}, {5}, {4, 4}, {5, 5, 5, 4}};
  DecodeOptions greedy = options(9);
  EXPECT_EQ(greedyDecode(cached, sources, greedy),
            greedyDecode(rerun, sources, greedy));
  std::vector<TokenIds> alone;
  for (const TokenIds &source : sources) {
    alone.push_back(beamDecode(rerun, source, options(9, 3)));
    EXPECT_EQ(beamDecode(cached, source, options(9, 3)), alone.back());
  }
  // Two sentences a batch (6 of the 8 rows B allows).
  for (size_t first : {0, 2}) {
    std::vector<TokenIds> pair = {sources[first], sources[first + 1]};
    std::vector<TokenIds> want = {alone[first], alone[first + 1]};
    EXPECT_EQ(beamDecodeBatch(cached, pair, options(9, 3)), want);
    EXPECT_EQ(beamDecodeBatch(rerun, pair, options(9, 3)), want);
  }
}

// On a device (FakeDevice.h) decode_init's outputs, the self-attention
// caches and the source ids stay in device memory: a step moves its tokens
// in, a next() its logits out (the steps a restart replays leave theirs on
// the device), however long the caches, and gives the CPU's logits.
TEST(CachedDecoderTest, OnADeviceTheCachesStayThere) {
  ModelInfo cpuModel = ModelInfo::parse(kFakeTranslatorJson);
  ModelInfo deviceModel = ModelInfo::parse(onFakeDevice(kFakeTranslatorJson));
  ModelRunner cpu(cpuModel, kFakeTranslatorTable, 1);
  ModelRunner device(deviceModel, kFakeTranslatorTable, 1);
  ASSERT_NE(device.device(), nullptr);
  cpu.params().write().initialize(5);
  device.params().write().initialize(5);
  CachedDecoder onCpu(cpu, 0), onDevice(device, 0);
  fakeDeviceCounts() = {};
  EXPECT_EQ(logitsAlong(onDevice), logitsAlong(onCpu));
  // decode_step calls: 1, 1, 1 (extended, reordered), 1, then 2 (the
  // restart replays both tokens) in 5 next() calls; 3 rows, a source of 3
  // ids, padded to 8 positions on a device.
  const int64_t steps = 6, calls = 5, rows = 3, sourceBytes = rows * 8 * 4;
  EXPECT_EQ(fakeDeviceCounts().otherBytesToHost, calls * rows * kVocab * 4);
  // The source in twice a batch (encode's input, the steps' copy).
  EXPECT_EQ(fakeDeviceCounts().otherBytesToDevice,
            2 * sourceBytes + steps * rows * 4);
  EXPECT_GT(fakeDeviceCounts().withinDevice, 0);

  std::vector<TokenIds> sources = {{4, 5, 4}, {5}, {4, 4}, {5, 5, 5, 4}};
  EXPECT_EQ(greedyDecode(onDevice, sources, options(9)),
            greedyDecode(onCpu, sources, options(9)));
  for (const TokenIds &source : sources)
    EXPECT_EQ(beamDecode(onDevice, source, options(9, 3)),
              beamDecode(onCpu, source, options(9, 3)));
}

// Greedy decoding on a device chooses there (Device::argmaxRows, the
// CUDA kernel's device code on the fake device): a token copies B ids back,
// not B x vocab logits, and the tokens are the CPU's, with tokens the
// search may not choose (AllowedIds) and with the device refusing to
// choose (the logits then come back and the host chooses).
TEST(CachedDecoderTest, OnADeviceGreedyChoosesThere) {
  ModelInfo cpuModel = ModelInfo::parse(kFakeTranslatorJson);
  ModelInfo deviceModel = ModelInfo::parse(onFakeDevice(kFakeTranslatorJson));
  ModelRunner cpu(cpuModel, kFakeTranslatorTable, 1);
  ModelRunner device(deviceModel, kFakeTranslatorTable, 1);
  cpu.params().write().initialize(8);
  device.params().write().initialize(8);
  CachedDecoder onCpu(cpu, 0), onDevice(device, 0);
  const std::vector<TokenIds> sources = {{4, 5, 4}, {5}, {4, 4}, {5, 5, 5, 4}};
  DecodeOptions greedy = options(7);
  greedy.eos = -1; // every row runs all 7 steps
  DecodeOptions restricted = greedy;
  restricted.allowed = {5, {0, 2}};
  for (bool onTheDevice : {true, false}) {
    txrt_driver_test::setFakeDeviceArgmax(onTheDevice);
    for (const DecodeOptions &settings : {greedy, restricted}) {
      fakeDeviceCounts() = {};
      const std::vector<TokenIds> got = greedyDecode(onDevice, sources, settings);
      EXPECT_EQ(got, greedyDecode(onCpu, sources, settings));
      const int64_t steps = 7, rows = int64_t(sources.size());
      if (onTheDevice) {
        EXPECT_EQ(fakeDeviceCounts().argmaxCalls, steps);
        EXPECT_EQ(fakeDeviceCounts().otherBytesToHost, steps * rows * 4);
      } else {
        EXPECT_EQ(fakeDeviceCounts().argmaxCalls, 0);
        EXPECT_EQ(fakeDeviceCounts().otherBytesToHost,
                  steps * rows * kVocab * 4);
      }
    }
    for (const TokenIds &ids : greedyDecode(onDevice, sources, restricted))
      for (int32_t id : ids)
        EXPECT_TRUE(id == 1 || id == 3 || id == 4) << id;
  }
  txrt_driver_test::setFakeDeviceArgmax(true);
}

// Greedy decoding on a device refuses a choice from non-finite logits
// as the host's search does (the kernel flags it, the host reads the row):
// it printed tokens chosen from NaN logits with exit 0.
TEST(CachedDecoderTest, OnADeviceGreedyRefusesNonFiniteLogits) {
  ModelInfo deviceModel = ModelInfo::parse(onFakeDevice(kFakeTranslatorJson));
  ModelRunner device(deviceModel, kFakeTranslatorTable, 1);
  ParameterArena &params = device.params().write();
  params.initialize(8);
  for (const ParamInfo &info : deviceModel.params) {
    float *values = params.param(info);
    std::fill(values, values + info.numElements, NAN);
  }
  CachedDecoder onDevice(device, 0);
  DecodeOptions greedy = options(4);
  txrt_driver_test::setFakeDeviceArgmax(true);
  fakeDeviceCounts() = {};
  EXPECT_THROW_MESSAGE(
      greedyDecode(onDevice, {{4, 5}}, greedy), KernelError,
      "the model's logits are not finite (row 0, id 0 at nan)");
  EXPECT_EQ(fakeDeviceCounts().argmaxCalls, 1);
}

// On a device the sources are padded to a multiple of 8 positions, so
// batches of nearby source lengths share their steps' graphs; the pads are
// masked keys: the CPU's tokens, which pads each batch to its longest row.
TEST(CachedDecoderTest, OnADeviceSourcesOfNearbyLengthsShareGraphs) {
  ModelInfo cpuModel = ModelInfo::parse(kFakeTranslatorJson);
  ModelInfo deviceModel = ModelInfo::parse(onFakeDevice(kFakeTranslatorJson));
  ModelRunner cpu(cpuModel, kFakeTranslatorTable, 1);
  ModelRunner device(deviceModel, kFakeTranslatorTable, 1);
  cpu.params().write().initialize(7);
  device.params().write().initialize(7);
  CachedDecoder onCpu(cpu, 0), onDevice(device, 0);
  DecodeOptions greedy = options(6);
  greedy.eos = -1;
  // Longest rows of 3, 5, 6, 8, 2 and 7 ids: all one shape on the device.
  const std::vector<std::vector<TokenIds>> batches = {
      {{4, 5, 4}, {5}},
      {{5, 4, 4, 5, 5}, {4, 4}},
      {{4, 4, 5, 5, 4, 4}, {5, 5, 4}},
      {{5, 5, 5, 5, 4, 4, 4, 4}, {4}},
      {{4, 5}, {5, 4}},
      {{5, 4, 5, 4, 5, 4, 5}, {4, 4, 4}}};
  for (const std::vector<TokenIds> &batch : batches)
    EXPECT_EQ(greedyDecode(onDevice, batch, greedy),
              greedyDecode(onCpu, batch, greedy));
  // A graph a position; from the third batch on, every step replays.
  EXPECT_EQ(device.graphStats().captured, 6);
  EXPECT_GE(device.graphStats().replays, 4 * 6);
  // Past 8 ids the next bucket (16, the bound): other graphs.
  const int64_t captured = device.graphStats().captured;
  EXPECT_EQ(greedyDecode(onDevice, {{4, 5, 4, 5, 4, 5, 4, 5, 4}}, greedy),
            greedyDecode(onCpu, {{4, 5, 4, 5, 4, 5, 4, 5, 4}}, greedy));
  EXPECT_EQ(device.graphStats().captured, captured);
}

// Decoding steps as CUDA graphs (docs/cuda.md "CUDA graphs"): a position's
// step is captured the second time its dims and buffers come, and replayed
// after that, since the caches and the call's buffers keep their
// addresses from batch to batch. Greedy and beam search give the CPU's
// tokens throughout, and the same with every capture refused.
TEST(CachedDecoderTest, OnADeviceStepsReplayAsGraphs) {
  for (txrt_driver_test::FakeGraphs mode :
       {txrt_driver_test::FakeGraphs::Replay,
        txrt_driver_test::FakeGraphs::Refuse}) {
    txrt_driver_test::setFakeDeviceGraphs(mode);
    ModelInfo cpuModel = ModelInfo::parse(kFakeTranslatorJson);
    ModelInfo deviceModel =
        ModelInfo::parse(onFakeDevice(kFakeTranslatorJson));
    ModelRunner cpu(cpuModel, kFakeTranslatorTable, 1);
    ModelRunner device(deviceModel, kFakeTranslatorTable, 1);
    cpu.params().write().initialize(6);
    device.params().write().initialize(6);
    CachedDecoder onCpu(cpu, 0), onDevice(device, 0);
    fakeDeviceCounts() = {};
    // Batches of one shape (3 rows, sources of 3 ids), 8 positions each.
    const std::vector<std::vector<TokenIds>> batches = {
        {{4, 5, 4}, {5, 5, 0}, {4, 4, 4}},
        {{5, 4, 4}, {4, 0, 0}, {5, 5, 5}},
        {{4, 4, 5}, {5, 4, 0}, {4, 5, 5}}};
    DecodeOptions greedy = options(8);
    greedy.eos = -1; // every batch runs all 8 positions
    for (int round = 0; round < 2; ++round)
      for (const std::vector<TokenIds> &batch : batches)
        EXPECT_EQ(greedyDecode(onDevice, batch, greedy),
                  greedyDecode(onCpu, batch, greedy));
    const ModelRunner::GraphStats &stats = device.graphStats();
    if (mode == txrt_driver_test::FakeGraphs::Replay) {
      // A graph a position, captured in the first batches (while the
      // caches' blocks still grow, a position may come at a new address);
      // from the third batch on every step is a replay.
      EXPECT_EQ(stats.captured, 8);
      EXPECT_GE(stats.replays, 4 * 8);
      EXPECT_EQ(stats.refused, 0);
    } else {
      EXPECT_EQ(stats.captured, 0);
      EXPECT_EQ(stats.replays, 0);
      EXPECT_GT(stats.refused, 0);
    }
    // Beam search's rows move between the caches' rows; its graphs replay
    // the same tokens as the CPU's direct calls.
    for (const TokenIds &source :
         {TokenIds{4, 5}, TokenIds{5, 4}, TokenIds{4, 5}})
      EXPECT_EQ(beamDecode(onDevice, source, options(6, 3)),
                beamDecode(onCpu, source, options(6, 3)));
    const std::vector<TokenIds> sentences = {{4, 5}, {5, 4}};
    for (int round = 0; round < 3; ++round)
      EXPECT_EQ(beamDecodeBatch(onDevice, sentences, options(6, 3)),
                beamDecodeBatch(onCpu, sentences, options(6, 3)));
  }
  txrt_driver_test::setFakeDeviceGraphs(txrt_driver_test::FakeGraphs::Replay);
}

} // namespace
