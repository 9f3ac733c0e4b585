//===- InitTest.cpp - deterministic init: bits and distributions ----------===//
#include "core/Init.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace txrt::driver;
using txrt_driver_test::bitsOf;

namespace {

std::vector<float> init(InitKind kind, const Shape &shape, uint64_t seed,
                        const std::string &name) {
  std::vector<float> out(size_t(checkedNumElements(shape).value()));
  initializeParameter(kind, shape, seed, name, out.data());
  return out;
}

/// Values pinned from an independent Python implementation of the generator
/// specified in Init.h: the same bits on every machine and every build.
TEST(InitTest, MatchesTheSpecifiedGeneratorBitForBit) {
  EXPECT_EQ(randomBits(initStreamKey(0, "a"), 0), 0x538a21ec5e495b1aull);
  std::vector<float> xavier =
      init(InitKind::XavierUniform, {4, 3}, 0, "proj.weight");
  const uint32_t expectXavier[] = {0x3dce14fe, 0x3f371089, 0xbf3abe47,
                                   0x3eafd19d};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(bitsOf(xavier[i]), expectXavier[i]) << i;
  std::vector<float> normal = init(InitKind::Normal, {4}, 42, "encoder.pe");
  const uint32_t expectNormal[] = {0xbf3b487b, 0x3f71e9b5, 0x3e8255bf,
                                   0xbeecc265};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(bitsOf(normal[i]), expectNormal[i]) << i;
}

TEST(InitTest, SameSeedSameBitsDifferentSeedOrNameDifferentBits) {
  auto a = init(InitKind::XavierUniform, {64, 32}, 7, "w");
  auto b = init(InitKind::XavierUniform, {64, 32}, 7, "w");
  auto c = init(InitKind::XavierUniform, {64, 32}, 8, "w");
  auto d = init(InitKind::XavierUniform, {64, 32}, 7, "v");
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  // Element i does not depend on the tensor size (random access).
  auto big = init(InitKind::Normal, {1000}, 5, "n");
  auto small = init(InitKind::Normal, {10}, 5, "n");
  EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
}

TEST(InitTest, XavierFansFollowPyTorch) {
  EXPECT_EQ(xavierFans({8000, 512}),
            std::make_pair(int64_t(512), int64_t(8000)));
  // Conv-like [out, in, k, k]: the receptive field multiplies both fans.
  EXPECT_EQ(xavierFans({16, 8, 3, 3}),
            std::make_pair(int64_t(72), int64_t(144)));
  EXPECT_FALSE(xavierFans({5}).has_value());
  EXPECT_DOUBLE_EQ(xavierUniformBound({512, 2048}),
                   std::sqrt(6.0 / (512 + 2048)));
}

TEST(InitTest, XavierUniformStaysInBoundWithUniformMoments) {
  const Shape shape = {256, 128};
  auto values = init(InitKind::XavierUniform, shape, 1, "layer.weight");
  double a = xavierUniformBound(shape);
  double sum = 0, sumSq = 0, maxAbs = 0;
  for (float v : values) {
    EXPECT_LE(std::abs(v), a);
    sum += v;
    sumSq += double(v) * v;
    maxAbs = std::max(maxAbs, double(std::abs(v)));
  }
  double n = double(values.size());
  double mean = sum / n, var = sumSq / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 4 * a / std::sqrt(3 * n)); // 4 sigma
  EXPECT_NEAR(var, a * a / 3, 0.02 * a * a);
  EXPECT_GT(maxAbs, 0.999 * a);
}

TEST(InitTest, NormalHasUnitMoments) {
  auto values = init(InitKind::Normal, {200000}, 9, "n");
  double sum = 0, sumSq = 0, sumFourth = 0;
  for (float v : values) {
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sumSq += double(v) * v;
    sumFourth += double(v) * v * v * v;
  }
  double n = double(values.size());
  double mean = sum / n, var = sumSq / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.012); // ~5 standard errors
  EXPECT_NEAR(var, 1.0, 0.02);
  EXPECT_NEAR(sumFourth / n, 3.0, 0.1); // kurtosis of a normal
}

TEST(InitTest, NormalStdScalesTheSameDraws) {
  // init_std = s gives s times the std-1 values (the same draws), so a
  // param(..., init = normal, std = 0.02) is N(0, 0.02^2).
  std::vector<float> unit = init(InitKind::Normal, {1000}, 7, "wpe");
  std::vector<float> scaled(unit.size());
  initializeParameter(InitKind::Normal, {1000}, 7, "wpe", scaled.data(), 0.02);
  for (size_t i = 0; i < unit.size(); ++i)
    EXPECT_FLOAT_EQ(scaled[i], float(double(unit[i]) * 0.02)) << i;
}

TEST(InitTest, ConstantsAndKinds) {
  for (float v : init(InitKind::Zeros, {3, 3}, 1, "z"))
    EXPECT_EQ(v, 0.0f);
  for (float v : init(InitKind::Ones, {7}, 1, "o"))
    EXPECT_EQ(v, 1.0f);
  for (auto kind : {InitKind::XavierUniform, InitKind::Zeros, InitKind::Ones,
                    InitKind::Normal})
    EXPECT_EQ(parseInitKind(initKindName(kind)), kind);
  EXPECT_FALSE(parseInitKind("kaiming").has_value());
}

} // namespace
