//===- AdamScalars.h - Adam's per-step scalars, CPU and CUDA ----*- C++ -*-===//
//
// The scalars of one Adam step, computed as torch.optim.Adam computes them:
// from the betas the user wrote, in double. The ABI passes betas as f32, and
// 1 - f32(0.999) is 0.00099998713, not 0.001: the second moment came out
// 1.3e-5 relative off PyTorch's. The written decimal is recovered as the
// shortest decimal that rounds to the f32 (what `%g` with enough digits and
// every spec value with up to 9 significant digits give back exactly).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_ADAMSCALARS_H
#define TXRT_LIB_ADAMSCALARS_H

#include <charconv>
#include <cmath>
#include <cstdint>

namespace txrt {

/// The shortest decimal that rounds to `x`, as a double (0.999f -> 0.999).
inline double writtenDecimal(float x) {
  char text[48];
  auto printed = std::to_chars(text, text + sizeof(text), x);
  double value = double(x);
  if (printed.ec == std::errc())
    std::from_chars(text, printed.ptr, value);
  return value;
}

/// Adam's step `step` (>= 1): lr / (1 - beta1^t), sqrt(1 - beta2^t), and
/// the lerp and accumulation weights 1 - beta1, 1 - beta2.
struct AdamScalars {
  float stepSize, sqrtCorrection2, oneMinusBeta1, oneMinusBeta2;
};

inline AdamScalars adamScalars(float lr, float beta1, float beta2,
                               int64_t step) {
  const double b1 = writtenDecimal(beta1), b2 = writtenDecimal(beta2);
  const double correction1 = 1.0 - std::pow(b1, double(step));
  const double correction2 = 1.0 - std::pow(b2, double(step));
  return {float(double(lr) / correction1), float(std::sqrt(correction2)),
          float(1.0 - b1), float(1.0 - b2)};
}

} // namespace txrt

#endif // TXRT_LIB_ADAMSCALARS_H
