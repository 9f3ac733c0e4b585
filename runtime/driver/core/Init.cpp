//===- Init.cpp - deterministic parameter initialisation ------------------===//
//
// The generator and the initializers specified in Init.h. Built with
// -ffp-contract=off so no compiler may fuse the arithmetic differently on
// different machines.
//
//===----------------------------------------------------------------------===//
#include "core/Init.h"

#include <cmath>

namespace txrt::driver {

namespace {
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
constexpr double kTwoPi = 6.283185307179586476925286766559;
} // namespace

std::optional<InitKind> parseInitKind(std::string_view name) {
  if (name == "xavier_uniform")
    return InitKind::XavierUniform;
  if (name == "zeros")
    return InitKind::Zeros;
  if (name == "ones")
    return InitKind::Ones;
  if (name == "normal")
    return InitKind::Normal;
  return std::nullopt;
}

const char *initKindName(InitKind kind) {
  switch (kind) {
  case InitKind::XavierUniform:
    return "xavier_uniform";
  case InitKind::Zeros:
    return "zeros";
  case InitKind::Ones:
    return "ones";
  case InitKind::Normal:
    return "normal";
  }
  return "?";
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}

uint64_t mix64(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

uint64_t initStreamKey(uint64_t seed, std::string_view name) {
  return mix64(mix64(seed) ^ fnv1a64(name));
}

uint64_t randomBits(uint64_t key, uint64_t index) {
  return mix64(key + (index + 1) * kGolden);
}

std::optional<std::pair<int64_t, int64_t>> xavierFans(const Shape &shape) {
  if (shape.size() < 2)
    return std::nullopt;
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i)
    receptive *= shape[i];
  return std::make_pair(shape[1] * receptive, shape[0] * receptive);
}

double xavierUniformBound(const Shape &shape) {
  auto fans = xavierFans(shape);
  if (!fans || fans->first + fans->second == 0)
    return 0.0;
  return std::sqrt(6.0 / double(fans->first + fans->second));
}

void initializeParameter(InitKind kind, const Shape &shape, uint64_t seed,
                         std::string_view name, float *out, double normalStd) {
  int64_t count = checkedNumElements(shape).value_or(0);
  uint64_t key = initStreamKey(seed, name);
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    for (int64_t i = 0; i < count; ++i)
      out[i] = kind == InitKind::Ones ? 1.0f : 0.0f;
    return;
  case InitKind::XavierUniform: {
    double bound = xavierUniformBound(shape);
    for (int64_t i = 0; i < count; ++i) {
      double u = double(randomBits(key, uint64_t(i)) >> 40) * 0x1p-24;
      out[i] = float((2.0 * u - 1.0) * bound);
    }
    return;
  }
  case InitKind::Normal:
    for (int64_t i = 0; i < count; ++i) {
      uint64_t first = randomBits(key, 2 * uint64_t(i));
      uint64_t second = randomBits(key, 2 * uint64_t(i) + 1);
      double u1 = double((first >> 11) + 1) * 0x1p-53;
      double u2 = double(second >> 11) * 0x1p-53;
      out[i] = float(normalStd * std::sqrt(-2.0 * std::log(u1)) *
                     std::cos(kTwoPi * u2));
    }
    return;
  }
}

} // namespace txrt::driver
