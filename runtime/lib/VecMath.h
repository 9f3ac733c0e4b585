//===- VecMath.h - exp that vectorises, row helpers -------------*- C++ -*-===//
//
// std::exp does not vectorise without -ffast-math (glibc only declares its
// SIMD variants then), so the softmax-like kernels use expApprox: a
// Cody-Waite range reduction and a degree-6 Taylor polynomial, about 2 ulp
// over the float range, branch-free so loops over it vectorise.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_VECMATH_H
#define TXRT_LIB_VECMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "Simd.h"

namespace txrt {

/// e^x for finite x and -inf (-> 0); x below ~-87.3 gives 0, above ~88.7
/// gives +inf.
inline float expApprox(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2Hi = 0.693145751953125f;
  const float ln2Lo = 1.42860682030941723e-6f;
  const float roundMagic = 12582912.0f; // 1.5 * 2^23: adding rounds to int
  float clamped = x < -87.5f ? -87.5f : (x > 88.7f ? 88.7f : x);
  float nf = (clamped * log2e + roundMagic) - roundMagic;
  float r = clamped - nf * ln2Hi;
  r = r - nf * ln2Lo;
  // Horner on 1 + r + r^2/2 + ... + r^6/720 (|r| <= ln2/2).
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // NaN stays NaN (through p); converting it to int is undefined behaviour
  // (UBSan: a NaN logit in a diverged run's cross-entropy).
  int32_t n = int32_t(nf == nf ? nf : 0.0f);
  // 2^n as two factors so n = -126..-149 (subnormal results) stay exact
  // enough and n = 128 does not overflow the exponent field.
  int32_t half = n >> 1;
  uint32_t bits1 = uint32_t(half + 127) << 23;
  uint32_t bits2 = uint32_t(n - half + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &bits1, sizeof(s1));
  std::memcpy(&s2, &bits2, sizeof(s2));
  float result = p * s1 * s2;
  return x < -87.0f ? 0.0f : result;
}

namespace detail {
/// out[j] = e^(in[j] - shift) for j < n, and their sum when Sum.
template <bool Sum>
inline float expShifted(const float *in, float shift, int64_t n, float *out) {
  int64_t j = 0;
  float total = 0.0f;
#if TXRT_HAS_SIMD
  const Simd::Vec by = Simd::broadcast(shift);
  Simd::Vec sum = Simd::zero();
  for (; j + Simd::kLanes <= n; j += Simd::kLanes) {
    const Simd::Vec e = Simd::exp(Simd::sub(Simd::load(in + j), by));
    Simd::store(out + j, e);
    if (Sum)
      sum = Simd::add(sum, e);
  }
  if (j < n) {
    const Simd::Tail tail = Simd::tail(n - j);
    Simd::store(out + j, tail,
                Simd::exp(Simd::sub(Simd::load(in + j, tail), by)));
    if (Sum)
      for (; j < n; ++j)
        total += out[j];
  }
  if (Sum)
    total += Simd::sum(sum);
#else
#pragma omp simd reduction(+ : total)
  for (j = 0; j < n; ++j) {
    out[j] = expApprox(in[j] - shift);
    total += out[j];
  }
#endif
  return total;
}
} // namespace detail

/// out[j] = e^(in[j] - shift) for j < n; in and out may be the same. With
/// AVX-512 or AVX2, Simd::exp on whole vectors (about 12 instructions per
/// vector instead of the ~25 of the compiler's vectorisation of expApprox),
/// the tail through a lane mask.
inline void expShifted(const float *in, float shift, int64_t n, float *out) {
  detail::expShifted<false>(in, shift, n, out);
}

/// expShifted that also returns sum(out[0..n)).
inline float expShiftedSum(const float *in, float shift, int64_t n,
                           float *out) {
  return detail::expShifted<true>(in, shift, n, out);
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Elements a float accumulator sums before blockedSum moves its total to
/// double.
constexpr int64_t kSumBlock = 8192;

/// A sum over n elements computed block by block: `blockSum(begin, count)`
/// sums count <= kSumBlock elements from `begin` in float (vector lanes),
/// and the blocks' sums are added in double. A float accumulator over
/// millions of terms drifts and then stalls (2^31 + 100 rounds back to
/// 2^31); PyTorch sums in a cascade for the same reason. A row of at most
/// one block is summed exactly as `blockSum` sums it.
template <typename BlockSum>
inline double blockedSum(int64_t n, BlockSum blockSum) {
  if (n <= kSumBlock)
    return double(blockSum(int64_t(0), n));
  double total = 0.0;
  for (int64_t begin = 0; begin < n; begin += kSumBlock)
    total +=
        double(blockSum(begin, n - begin < kSumBlock ? n - begin : kSumBlock));
  return total;
}

/// sum(x[0..n)) by blockedSum, each block a float reduction over lanes.
inline double blockedArraySum(const float *x, int64_t n) {
  return blockedSum(n, [x](int64_t begin, int64_t count) {
    float part = 0.0f;
#pragma omp simd reduction(+ : part)
    for (int64_t j = begin; j < begin + count; ++j)
      part += x[j];
    return part;
  });
}

/// Rows a column sum adds in float before moving them into double
/// (ColumnSums; Reduce.cpp's middle-axis sums).
constexpr int64_t kSumRows = 128;

/// Per-column sums over many rows (a norm's dgamma and dbeta): each row adds
/// into a float row (vector lanes, as before), which every kSumRows rows is
/// added into a double row and cleared, so a thread's share of 2^17 rows
/// is not one float accumulator per column (dbeta 7e-6 off float64 over
/// 131072 rows of one sign, 4x the bound the tests now hold). The buffers
/// are the caller's: `total` doubles and `part` floats, `cols` each.
class ColumnSums {
public:
  ColumnSums(double *total, float *part, int64_t cols)
      : total_(total), part_(part), cols_(cols) {
    for (int64_t j = 0; j < cols; ++j) {
      total_[j] = 0.0;
      part_[j] = 0.0f;
    }
  }
  /// The float row the next row adds into.
  float *part() { return part_; }
  /// After each row: moves the float row into the double row when full.
  void rowAdded() {
    if (++rows_ == kSumRows)
      flush();
  }
  /// Moves what the float row holds into the double row.
  void flush() {
#pragma omp simd
    for (int64_t j = 0; j < cols_; ++j) {
      total_[j] += double(part_[j]);
      part_[j] = 0.0f;
    }
    rows_ = 0;
  }

private:
  double *total_;
  float *part_;
  int64_t cols_;
  int64_t rows_ = 0;
};

/// max over n floats (-inf for n == 0).
inline float rowMax(const float *x, int64_t n) {
  float m = kNegInf;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j)
    m = x[j] > m ? x[j] : m;
  return m;
}

/// Whether x[0, n) holds a NaN or +inf: a softmax over it is NaN at every
/// position, as PyTorch computes it (x - max is NaN at the NaN, or at the
/// +inf, and so is the sum). rowMax skips a NaN, and expApprox clamps one
/// to a finite value: the callers check this first.
inline bool anyNanOrPosInf(const float *x, int64_t n) {
  constexpr float kPosInf = std::numeric_limits<float>::infinity();
  bool bad = false;
#pragma omp simd reduction(|| : bad)
  for (int64_t j = 0; j < n; ++j)
    bad = bad || !(x[j] < kPosInf);
  return bad;
}

/// rowMax and anyNanOrPosInf in one pass over x (the max is exact in any
/// order, so it is rowMax's bit for bit).
inline float rowMaxChecked(const float *x, int64_t n, bool &nanOrPosInf) {
  constexpr float kPosInf = std::numeric_limits<float>::infinity();
  float m = kNegInf;
  bool bad = false;
#pragma omp simd reduction(max : m) reduction(|| : bad)
  for (int64_t j = 0; j < n; ++j) {
    m = x[j] > m ? x[j] : m;
    bad = bad || !(x[j] < kPosInf);
  }
  nanOrPosInf = bad;
  return m;
}

} // namespace txrt

#endif // TXRT_LIB_VECMATH_H
