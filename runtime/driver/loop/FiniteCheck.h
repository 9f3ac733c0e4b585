//===- FiniteCheck.h - find NaN and infinity in float tensors ---*- C++ -*-===//
//
// Loading a checkpoint and every training step scan float tensors for
// non-finite values, so the scan must cost little next to the work that
// produced them: it reads the exponent bits of blocks of floats with a
// max-reduction the compiler vectorizes (one pass over memory, no
// branches per element) and only looks for the exact element in a block
// that has one.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_FINITECHECK_H
#define TXRT_DRIVER_FINITECHECK_H

#include "core/Tensor.h"

#include <cstdint>
#include <string>

namespace txrt::driver {

/// The index of the first NaN or infinity among `count` floats, or -1.
int64_t firstNonFinite(const float *data, int64_t count);

/// "nan at [1, 2]" / "inf at [0]" / "-inf at [3, 0]": element `index` of a
/// tensor of `shape`.
std::string describeNonFinite(const float *data, int64_t index,
                              const Shape &shape);

/// Throws InputError "<what> holds a non-finite value (nan at [1, 2])"
/// when one of `count` floats (a tensor of `shape`) is NaN or infinite.
void checkFinite(const float *data, int64_t count, const Shape &shape,
                 const std::string &what);

/// Throws InputError "<what> holds a negative value (-0.5 at [1, 2])"
/// when one of `count` floats is below 0 (-0 is not).
void checkNonNegative(const float *data, int64_t count, const Shape &shape,
                      const std::string &what);

} // namespace txrt::driver

#endif // TXRT_DRIVER_FINITECHECK_H
