//===- DecodingTest.cpp - greedy and beam search on a scripted model ------===//
#include "decoding/Decoding.h"
#include "TestUtil.h"

#include <cmath>
#include <functional>

using namespace txrt::driver;

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

} // namespace
