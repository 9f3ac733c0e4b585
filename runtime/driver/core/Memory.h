//===- Memory.h - allocations that say what they are for --------*- C++ -*-===//
//
// A model's arenas and tensors can be far larger than the machine: a model
// compiled with a huge bound, a bench at the bounds, a hand-edited
// metadata string. The driver's large allocations (the parameter arena,
// the activation arenas, entry outputs, bench's synthetic data) go through
// here: the size is compared with the memory the system can still give
// before anything is allocated or built, and a failure is a ResourceError
// (exit 1) naming what and how much:
//
//   cannot allocate the activation arena of entry 'train': it needs
//   1.0 EiB (1152921504606846976 bytes) but 6.1 GiB of memory is available
//
// Available memory: MemAvailable + SwapFree from /proc/meminfo, and at
// most what the cgroup v2 limit (memory.max - memory.current) leaves; when
// neither can be read, only the allocation itself can fail (and says so).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_MEMORY_H
#define TXRT_DRIVER_MEMORY_H

#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>

namespace txrt::driver {

/// "6.0 MiB", "512 B": a byte count for people.
std::string formatBytes(int64_t bytes);

/// Bytes this process can still allocate and use (see the file comment);
/// nullopt when unknown.
std::optional<uint64_t> availableMemoryBytes();

/// ResourceError "cannot allocate <what>: it needs ... but ... is
/// available" when `bytes` is more than availableMemoryBytes().
void checkAvailableMemory(uint64_t bytes, const std::string &what);

/// allocateBuffer and allocateTensor compare sizes from this one up with
/// availableMemoryBytes() first. Reading it costs about 45 us (four files
/// of /proc and /sys), which a decoded token's logits, allocated at every
/// step, should not pay; a smaller allocation cannot starve the machine on
/// its own, and its failure is still a ResourceError naming it.
constexpr uint64_t kCheckedAllocationBytes = uint64_t(16) << 20;

/// A zero-filled, 64-byte aligned buffer of max(bytes, 64) bytes for
/// `what` ("the parameter arena"); ResourceError naming it when memory is
/// short or the allocation fails.
AlignedBuffer allocateBuffer(uint64_t bytes, const std::string &what);

/// The bytes of a `dtype` tensor of `shape`; ResourceError "cannot
/// allocate <what> [shape]: its size overflows 64 bits" when they do.
uint64_t tensorByteSize(DType dtype, const Shape &shape,
                        const std::string &what);

/// A zero-filled tensor of `shape` for `what` ("output 'logits' of entry
/// 'decode'"); ResourceError when its size overflows or memory is short.
Tensor allocateTensor(DType dtype, const Shape &shape, const std::string &what);

} // namespace txrt::driver

#endif // TXRT_DRIVER_MEMORY_H
