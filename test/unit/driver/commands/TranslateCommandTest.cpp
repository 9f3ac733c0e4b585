//===- TranslateCommandTest.cpp - translateAll's batches ------------------===//
//
// translateAll batches sentences of similar lengths (stably sorted by
// source length) and gives the translations back in input order, greedy
// and beam alike: each equals the sentence decoded alone. The model here
// echoes its source's ids (then [EOS]) and records every batch it starts.
//
//===----------------------------------------------------------------------===//
#include "commands/TranslateCommand.h"
#include "TestUtil.h"

#include <limits>

using namespace txrt::driver;

namespace {

// Ids: 0 [PAD], 2 [SOS], 3 [EOS], 4.. words.
constexpr int64_t kVocab = 12;

/// Emits its row's source, word by word, then [EOS].
class EchoModel : public NextTokenModel {
public:
  void start(const std::vector<TokenIds> &sources) override {
    sources_ = sources;
    batches.push_back(sources);
  }
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    std::vector<float> logits;
    for (size_t row = 0; row < prefixes.size(); ++row) {
      const size_t at = prefixes[row].size() - 1;
      const TokenIds &source = sources_[row];
      std::vector<float> scores(kVocab, 0.0f);
      scores[size_t(at < source.size() ? source[at] : 3)] = 5.0f;
      if (!source.empty() && source[0] == nanSource)
        scores[7] = std::numeric_limits<float>::quiet_NaN();
      logits.insert(logits.end(), scores.begin(), scores.end());
    }
    return logits;
  }
  int64_t vocabSize() const override { return kVocab; }
  std::vector<std::vector<TokenIds>> batches;
  /// A source starting with this id gets a NaN logit (0: none).
  int32_t nanSource = 0;

private:
  std::vector<TokenIds> sources_;
};

DecodeOptions echoOptions(int32_t beam) {
  DecodeOptions options;
  options.sos = 2;
  options.eos = 3;
  options.maxLength = 10;
  options.beamSize = beam;
  return options;
}

TEST(TranslateCommandTest, BatchesBySourceLengthAndKeepsInputOrder) {
  const std::vector<TokenIds> sources = {
      {4, 5, 6, 7}, {8}, {9, 10}, {4}, {5, 6, 7, 8, 9}, {10, 11}, {6}};
  for (int32_t beam : {1, 2}) {
    EchoModel model;
    // Greedy: 2 sentences a batch; beam 2: 4 rows hold 2 sentences.
    std::vector<TokenIds> outputs =
        translateAll(model, sources, beam == 1 ? 2 : 4, echoOptions(beam));
    EXPECT_EQ(outputs, sources) << "beam " << beam;
    // Stably by length: {8} {4} | {6} {9, 10} | {10, 11} {4, 5, 6, 7} |
    // {5, 6, 7, 8, 9}; beam search repeats each source on its rows.
    std::vector<std::vector<TokenIds>> want = {{{8}, {4}},
                                               {{6}, {9, 10}},
                                               {{10, 11}, {4, 5, 6, 7}},
                                               {{5, 6, 7, 8, 9}}};
    ASSERT_EQ(model.batches.size(), want.size());
    for (size_t b = 0; b < want.size(); ++b) {
      std::vector<TokenIds> rows;
      for (const TokenIds &source : want[b])
        rows.insert(rows.end(), size_t(beam), source);
      EXPECT_EQ(model.batches[b], rows) << "beam " << beam << ", batch " << b;
    }
  }
}

// A non-finite logit names the sentence: by the caller's name for it when
// given, else by its index among the sources. It named the row of the
// length-sorted batch ("row 1" for the third line), or with beam search
// the hypothesis ("row 0").
TEST(TranslateCommandTest, NonFiniteLogitsNameTheSentence) {
  const std::vector<TokenIds> sources = {{4, 5, 6}, {8}, {11, 4}, {9}};
  const std::vector<std::string> where = {"<stdin>:1", "<stdin>:2", "<stdin>:3",
                                          "<stdin>:4"};
  for (int32_t beam : {1, 2}) {
    EchoModel model;
    model.nanSource = 11;
    EXPECT_THROW_MESSAGE(
        translateAll(model, sources, 4, echoOptions(beam), {},
                     [&](size_t k) { return where[k]; }),
        NonFiniteLogitsError,
        "<stdin>:3: the model's logits are not finite (id 7 at nan)");
    EXPECT_THROW_MESSAGE(translateAll(model, sources, 4, echoOptions(beam)),
                         NonFiniteLogitsError,
                         "the model's logits are not finite (row 2, id 7 at "
                         "nan)");
  }
}

} // namespace
