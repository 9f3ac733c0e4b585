//===- GenerationTest.cpp - left padding and the generation loop ----------===//
#include "decoding/Generation.h"
#include "TestUtil.h"

using namespace txrt::driver;

namespace {

TEST(GenerationTest, LeftPadsToTheLongestRow) {
  Tensor tensor = leftPad({{5, 6, 7}, {8}, {}}, 0);
  ASSERT_EQ(tensor.shape, (Shape{3, 3}));
  std::vector<int32_t> ids(tensor.as<int32_t>(), tensor.as<int32_t>() + 9);
  EXPECT_EQ(ids, (std::vector<int32_t>{5, 6, 7, 0, 0, 8, 0, 0, 0}));
}

TEST(GenerationTest, WindowKeepsTheLastTokens) {
  Tensor tensor = leftPad({{1, 2, 3, 4, 5}, {6, 7}}, 9, 3);
  ASSERT_EQ(tensor.shape, (Shape{2, 3}));
  std::vector<int32_t> ids(tensor.as<int32_t>(), tensor.as<int32_t>() + 6);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 4, 5, 9, 6, 7}));
}

/// Next token = last token + 1, end-of-text after 4; records what it saw.
class CountingModel : public PrefixModel {
public:
  std::vector<float> next(const std::vector<TokenIds> &prefixes) override {
    seen.push_back(prefixes);
    std::vector<float> logits(prefixes.size() * 8, 0.0f);
    for (size_t row = 0; row < prefixes.size(); ++row) {
      int32_t last = prefixes[row].back();
      logits[row * 8 + size_t(last >= 4 ? 0 : last + 1)] = 10.0f;
    }
    return logits;
  }
  int64_t vocabSize() const override { return 8; }
  std::vector<std::vector<TokenIds>> seen;
};

TEST(GenerationTest, RowsStopAtEndOfTextAndKeepTheirPadding) {
  CountingModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 6;
  std::vector<TokenIds> out = generateTokens(model, {{1}, {3}}, settings);
  EXPECT_EQ(out[0], (TokenIds{2, 3, 4}));
  EXPECT_EQ(out[1], (TokenIds{4}));
  // The finished row stays in the batch, so both rows grow together.
  for (const std::vector<TokenIds> &step : model.seen)
    EXPECT_EQ(step[0].size(), step[1].size());
  EXPECT_EQ(model.seen.size(), 4u); // stops once every row has ended
}

TEST(GenerationTest, MaxNewTokensBoundsTheOutput) {
  CountingModel model;
  GenerateSettings settings;
  settings.eos = 0;
  settings.maxNewTokens = 2;
  EXPECT_EQ(generateTokens(model, {{1}}, settings)[0], (TokenIds{2, 3}));
}

} // namespace
