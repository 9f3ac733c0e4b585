//===- Init.h - deterministic parameter initialisation ----------*- C++ -*-===//
//
// `--init SEED` fills every parameter by its initializer from a counter-based
// generator, so the same seed gives the same bits on every machine and the
// values of a parameter depend only on (seed, parameter name, element
// index) — not on the order of parameters or the arena layout:
//
//   mix(z)        = splitmix64's finalizer:  z ^= z >> 30; z *=
//   0xBF58476D1CE4E5B9;
//                   z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31
//   key(seed, p)  = mix(mix(seed) ^ fnv1a64(name of p))
//   bits(key, i)  = mix(key + (i + 1) * 0x9E3779B97F4A7C15)   (splitmix64 draw
//   i)
//
//   xavier_uniform  U(-a, a), a = sqrt(6 / (fan_in + fan_out)) with PyTorch's
//                   fans: fan_in = shape[1] * r, fan_out = shape[0] * r,
//                   r = product of shape[2:]; element i = (2u - 1) a with
//                   u = (bits(key, i) >> 40) / 2^24
//   normal          N(0, std^2) (std 1 unless the metadata's init_std says
//                   otherwise), by Box-Muller from draws 2i and 2i+1:
//                   sqrt(-2 ln u1) cos(2 pi u2), u1 = ((b >> 11) + 1) / 2^53 in
//                   (0, 1], u2 = (b' >> 11) / 2^53
//   zeros, ones     constants
//
// Values are computed in double and rounded to float once; xavier_uniform is
// exact integer/IEEE arithmetic (bit-identical everywhere), normal also uses
// libm's log and cos (identical wherever they are correctly rounded, as
// glibc's are in practice).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_INIT_H
#define TXRT_DRIVER_INIT_H

#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace txrt::driver {

enum class InitKind { XavierUniform, Zeros, Ones, Normal };

/// "xavier_uniform", "zeros", "ones", "normal".
std::optional<InitKind> parseInitKind(std::string_view name);
const char *initKindName(InitKind kind);

/// 64-bit FNV-1a of `text`.
uint64_t fnv1a64(std::string_view text);

/// splitmix64's output finalizer.
uint64_t mix64(uint64_t z);

/// The generator key of the parameter named `name` under `seed`.
uint64_t initStreamKey(uint64_t seed, std::string_view name);

/// Draw `index` of the stream `key`.
uint64_t randomBits(uint64_t key, uint64_t index);

/// PyTorch's (fan_in, fan_out) of a tensor of rank >= 2; nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> xavierFans(const Shape &shape);

/// The bound a of xavier_uniform for `shape` (rank >= 2).
double xavierUniformBound(const Shape &shape);

/// Fills `out` (the parameter's numElements floats). xavier_uniform needs
/// rank >= 2 (the caller validated that); `normalStd` scales normal.
void initializeParameter(InitKind kind, const Shape &shape, uint64_t seed,
                         std::string_view name, float *out,
                         double normalStd = 1.0);

} // namespace txrt::driver

#endif // TXRT_DRIVER_INIT_H
