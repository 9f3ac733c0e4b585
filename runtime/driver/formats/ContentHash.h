//===- ContentHash.h - a fast 64-bit hash of a byte range -------*- C++ -*-===//
//
// The checksum safetensors files carry per tensor (Safetensors.h): four
// independent 64-bit lanes over 32-byte blocks (multiply, rotate, multiply,
// so the lanes pipeline), the tail in 8-byte words and bytes, the lanes
// and the length folded together through splitmix64's finalizer
// (core/Init.h). Not cryptographic: it is there to notice a file changed
// or damaged after it was written (a flipped bit, a block of zeros, a
// truncated copy patched up), at ~14 GB/s on one core so that checking a
// 1 GB checkpoint costs a fraction of reading it.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_CONTENTHASH_H
#define TXRT_DRIVER_CONTENTHASH_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace txrt::driver {

/// The hash of `bytes` bytes at `data`.
uint64_t contentHash64(const void *data, size_t bytes);

/// `hash` as 16 lower-case hex digits.
std::string hashHex(uint64_t hash);

} // namespace txrt::driver

#endif // TXRT_DRIVER_CONTENTHASH_H
