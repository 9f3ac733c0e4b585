//===- Bf16Round.h - f32 <-> bf16 conversion of one value -------*- C++ -*-===//
//
// The rounding every bf16 kernel shares (casts, the Adam step's bf16 copy,
// the driver's refresh of the copies, the norms' bf16 outputs): round to
// nearest, ties to even; a NaN stays a quiet NaN. Written without branches on the value so that
// loops over it vectorise.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_BF16ROUND_H
#define TXRT_LIB_BF16ROUND_H

#include "txrt/txrt.h"

#include <cstdint>
#include <cstring>

namespace txrt {

/// f32 -> bf16, round to nearest, ties to even; NaN stays a (quiet) NaN.
inline txrt_bf16 roundToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  const uint32_t quietNan = bits | 0x400000u;
  const bool isNan = (bits & 0x7fffffffu) > 0x7f800000u;
  return txrt_bf16((isNan ? quietNan : rounded) >> 16);
}

/// bf16 -> f32 (exact).
inline float widenBf16(txrt_bf16 value) {
  uint32_t bits = uint32_t(value) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}

/// dst[0, n) = src[0, n) rounded, one row from L1: the norms write the bf16
/// copy of their output with it in the pass that wrote the f32 row.
inline void roundRowToBf16(int64_t n, const float *src, txrt_bf16 *dst) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    dst[i] = roundToBf16(src[i]);
}

} // namespace txrt

#endif // TXRT_LIB_BF16ROUND_H
