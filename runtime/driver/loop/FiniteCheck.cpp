//===- FiniteCheck.cpp - find NaN and infinity in float tensors -----------===//
#include "loop/FiniteCheck.h"
#include "core/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace txrt::driver {

namespace {
constexpr uint32_t kExponentBits = 0x7f800000u;
constexpr int64_t kBlock = 4096;
} // namespace

int64_t firstNonFinite(const float *data, int64_t count) {
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const int64_t end = std::min(count, begin + kBlock);
    // A float is NaN or infinite exactly when all its exponent bits are
    // set; compare and OR vectorize even with plain SSE2.
    uint32_t any = 0;
    for (int64_t i = begin; i < end; ++i) {
      uint32_t bits;
      std::memcpy(&bits, data + i, sizeof(bits));
      any |= uint32_t((bits & kExponentBits) == kExponentBits);
    }
    if (!any)
      continue;
    for (int64_t i = begin; i < end; ++i)
      if (!std::isfinite(data[i]))
        return i;
  }
  return -1;
}

namespace {
/// "[1, 2]": the position of element `index` of a tensor of `shape`.
std::string formatPosition(int64_t index, const Shape &shape) {
  Shape position(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;)
    if (shape[d] > 0) {
      position[d] = index % shape[d];
      index /= shape[d];
    }
  return formatShape(position);
}
} // namespace

std::string describeNonFinite(const float *data, int64_t index,
                              const Shape &shape) {
  float value = data[index];
  std::string text = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  return text + " at " + formatPosition(index, shape);
}

void checkNonNegative(const float *data, int64_t count, const Shape &shape,
                      const std::string &what) {
  float lowest = 0.0f;
#pragma omp simd reduction(min : lowest)
  for (int64_t i = 0; i < count; ++i)
    lowest = std::min(lowest, data[i]);
  if (!(lowest < 0.0f))
    return;
  for (int64_t i = 0; i < count; ++i)
    if (data[i] < 0.0f) {
      char value[32];
      std::snprintf(value, sizeof(value), "%g", double(data[i]));
      throw InputError(what + " holds a negative value (" + value + " at " +
                       formatPosition(i, shape) + ")");
    }
}

void checkFinite(const float *data, int64_t count, const Shape &shape,
                 const std::string &what) {
  int64_t bad = firstNonFinite(data, count);
  if (bad >= 0)
    throw InputError(what + " holds a non-finite value (" +
                     describeNonFinite(data, bad, shape) + ")");
}

} // namespace txrt::driver
