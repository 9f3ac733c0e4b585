//===- SamplingTest.cpp - temperature, top-k, top-p on fixed logits -------===//
#include "decoding/Sampling.h"
#include "TestUtil.h"

#include <cmath>
#include <map>
#include <set>

using namespace txrt::driver;

namespace {

const std::vector<float> kLogits = {1.0f, 3.0f, 2.0f, 3.0f, 0.0f};

SamplingOptions withTemperature(double temperature) {
  SamplingOptions options;
  options.temperature = temperature;
  return options;
}

TEST(SamplingTest, TemperatureZeroIsArgmaxLowestIdOnTies) {
  auto candidates = samplingDistribution(kLogits.data(), 5, {});
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].first, 1);
  for (uint64_t position = 0; position < 20; ++position)
    EXPECT_EQ(sampleToken(kLogits.data(), 5, {}, 0, position), 1);
}

TEST(SamplingTest, TemperatureScalesTheSoftmax) {
  auto candidates = samplingDistribution(kLogits.data(), 5, withTemperature(2));
  ASSERT_EQ(candidates.size(), 5u);
  double total = 0;
  for (float logit : kLogits)
    total += std::exp(logit / 2.0);
  // Most likely first, ties by the lower id: 1, 3, 2, 0, 4.
  std::vector<int32_t> order;
  for (const auto &[id, probability] : candidates) {
    order.push_back(id);
    EXPECT_NEAR(probability, std::exp(kLogits[size_t(id)] / 2.0) / total,
                1e-12);
  }
  EXPECT_EQ(order, (std::vector<int32_t>{1, 3, 2, 0, 4}));
}

TEST(SamplingTest, ATinyTemperatureIsTheArgmax) {
  // logit / 1e-308 overflows: every weight was inf - inf = NaN and the draw
  // fell through to the least likely id. Negative logits too.
  const std::vector<float> negative = {-7.0f, -5.0f, -6.0f, -10.0f};
  for (double temperature : {1e-300, 1e-308, 1e-310, 4.9e-324}) {
    for (uint64_t position = 0; position < 20; ++position) {
      int32_t tied = sampleToken(kLogits.data(), 5,
                                 withTemperature(temperature), 0, position);
      EXPECT_TRUE(tied == 1 || tied == 3) << temperature << ": " << tied;
      EXPECT_EQ(sampleToken(negative.data(), 4, withTemperature(temperature),
                            0, position),
                1)
          << temperature;
    }
    auto candidates =
        samplingDistribution(kLogits.data(), 5, withTemperature(temperature));
    // The tie (ids 1 and 3 at 3.0) splits evenly; the rest get nothing.
    EXPECT_DOUBLE_EQ(candidates[0].second, 0.5);
    EXPECT_DOUBLE_EQ(candidates[1].second, 0.5);
    EXPECT_EQ(candidates[2].second, 0.0);
  }
}

TEST(SamplingTest, LogitsOneRoundingApartPickTheSameIds) {
  // The same prompt alone and in a batch: on a CPU whose products round by
  // the number of rows (oneDNN's gemm:jit on AVX2) its logits differ in the
  // last bit, which swapped two near-tied ids in the likelihood order, and
  // the same draw fell on the other id (`generate --batch 1` and `--batch
  // 5` differed in 8 of 300 sampled prompts). The draw walks the ids in
  // id order: the two vectors pick the same id unless a draw falls within
  // a rounding of a boundary.
  const float near = std::nextafter(2.0f, 3.0f);
  const std::vector<float> alone = {0.0f, 2.0f, near, 1.0f, -1.0f};
  const std::vector<float> batched = {0.0f, near, 2.0f, 1.0f, -1.0f};
  for (int64_t topK : {0, 3}) {
    SamplingOptions options = withTemperature(1);
    options.topK = topK;
    int differences = 0;
    for (uint64_t position = 0; position < 2000; ++position)
      differences += sampleToken(alone.data(), 5, options, 7, position) !=
                     sampleToken(batched.data(), 5, options, 7, position);
    EXPECT_EQ(differences, 0) << "top-k " << topK;
  }
}

TEST(SamplingTest, TopKKeepsTheKMostLikely) {
  SamplingOptions options = withTemperature(1);
  options.topK = 2;
  auto candidates = samplingDistribution(kLogits.data(), 5, options);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].first, 1);
  EXPECT_EQ(candidates[1].first, 3);
  EXPECT_NEAR(candidates[0].second, 0.5, 1e-12);
  for (uint64_t position = 0; position < 50; ++position) {
    int32_t id = sampleToken(kLogits.data(), 5, options, 0, position);
    EXPECT_TRUE(id == 1 || id == 3) << id;
  }
}

// Ids tied with the K-th stay, as Hugging Face's top-k keeps every logit
// >= the K-th largest: K of them were kept, the lowest ids, so --top-k 1
// over tied ids always gave the lowest.
TEST(SamplingTest, TopKKeepsEveryIdTiedWithTheKth) {
  const std::vector<float> tied = {0.5f, 2.0f, 1.0f, 2.0f, 1.0f, 2.0f};
  SamplingOptions options = withTemperature(1);
  options.topK = 1;
  auto candidates = samplingDistribution(tied.data(), 6, options);
  ASSERT_EQ(candidates.size(), 3u);
  for (const auto &[id, probability] : candidates) {
    EXPECT_TRUE(id == 1 || id == 3 || id == 5) << id;
    EXPECT_NEAR(probability, 1.0 / 3, 1e-12);
  }
  options.topK = 4; // 2, 2, 2 and the first 1: both 1s stay
  EXPECT_EQ(samplingDistribution(tied.data(), 6, options).size(), 5u);
  std::set<int32_t> drawn;
  options.topK = 1;
  for (uint64_t position = 0; position < 200; ++position)
    drawn.insert(sampleToken(tied.data(), 6, options, 0, position));
  EXPECT_EQ(drawn, (std::set<int32_t>{1, 3, 5}));
}

TEST(SamplingTest, TopPKeepsTheSmallestNucleus) {
  // Probabilities at temperature 1: e^3 / Z = 0.3917 twice, e^2 / Z =
  // 0.1441, e / Z = 0.0530, 1 / Z = 0.0195 (Z = 2 e^3 + e^2 + e + 1).
  SamplingOptions options = withTemperature(1);
  options.topP = 0.8; // 0.3917 + 0.3917 < 0.8: the third id joins
  auto candidates = samplingDistribution(kLogits.data(), 5, options);
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[2].first, 2);
  double z = 2 * std::exp(3.0) + std::exp(2.0);
  EXPECT_NEAR(candidates[2].second, std::exp(2.0) / z, 1e-12);
  options.topP = 0.3; // the most likely alone
  candidates = samplingDistribution(kLogits.data(), 5, options);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].first, 1);
  EXPECT_DOUBLE_EQ(candidates[0].second, 1.0);
}

TEST(SamplingTest, SameSeedSameTokensOtherSeedOtherTokens) {
  SamplingOptions options = withTemperature(1);
  options.seed = 7;
  std::vector<int32_t> first, second, third;
  for (uint64_t position = 0; position < 64; ++position) {
    first.push_back(sampleToken(kLogits.data(), 5, options, 3, position));
    second.push_back(sampleToken(kLogits.data(), 5, options, 3, position));
  }
  options.seed = 8;
  for (uint64_t position = 0; position < 64; ++position)
    third.push_back(sampleToken(kLogits.data(), 5, options, 3, position));
  EXPECT_EQ(first, second);
  EXPECT_NE(first, third);
}

TEST(SamplingTest, DrawsFollowTheDistribution) {
  SamplingOptions options = withTemperature(1);
  options.seed = 1;
  std::map<int32_t, int> counts;
  const int draws = 20000;
  for (int position = 0; position < draws; ++position)
    ++counts[sampleToken(kLogits.data(), 5, options, 0, uint64_t(position))];
  auto candidates = samplingDistribution(kLogits.data(), 5, options);
  for (const auto &[id, probability] : candidates)
    EXPECT_NEAR(double(counts[id]) / draws, probability, 0.015) << id;
}

TEST(SamplingTest, UniformDrawIsInTheUnitInterval) {
  for (uint64_t i = 0; i < 1000; ++i) {
    double u = uniformDraw(i, i * 3, i * 7);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

} // namespace
