//===- Memory.cpp - allocations that say what they are for ----------------===//
#include "core/Memory.h"
#include "core/Error.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <new>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

/// "MemAvailable:   123456 kB" -> bytes, from /proc/meminfo.
std::optional<uint64_t> meminfoBytes(const std::string &meminfo,
                                     const std::string &key) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, key.size() + 1, key + ":") != 0)
      continue;
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str() + key.size() + 1, "%llu", &kib) != 1)
      return std::nullopt;
    return uint64_t(kib) * 1024;
  }
  return std::nullopt;
}

std::string readSmallFile(const char *path) {
  std::ifstream in(path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

/// memory.max - memory.current of this process's cgroup (v2), if limited.
std::optional<uint64_t> cgroupHeadroom() {
  std::string cgroup = readSmallFile("/proc/self/cgroup");
  // "0::/some/path" on a cgroup v2 system.
  size_t start = cgroup.find("0::");
  if (start == std::string::npos)
    return std::nullopt;
  std::string path = cgroup.substr(start + 3);
  path = path.substr(0, path.find('\n'));
  std::string dir = "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
  std::string max = readSmallFile((dir + "/memory.max").c_str());
  std::string current = readSmallFile((dir + "/memory.current").c_str());
  unsigned long long limit = 0, used = 0;
  if (std::sscanf(max.c_str(), "%llu", &limit) != 1 ||
      std::sscanf(current.c_str(), "%llu", &used) != 1)
    return std::nullopt; // "max" (no limit) or unreadable
  return limit > used ? uint64_t(limit - used) : 0;
}

/// What the process's address-space limit (RLIMIT_AS, `ulimit -v`) leaves
/// of what it maps now (/proc/self/statm), if limited.
std::optional<uint64_t> addressSpaceHeadroom() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::nullopt;
  std::string statm = readSmallFile("/proc/self/statm");
  unsigned long long pages = 0;
  const long pageBytes = ::sysconf(_SC_PAGESIZE);
  if (std::sscanf(statm.c_str(), "%llu", &pages) != 1 || pageBytes <= 0)
    return std::nullopt;
  const uint64_t mapped = uint64_t(pages) * uint64_t(pageBytes);
  return limit.rlim_cur > mapped ? uint64_t(limit.rlim_cur) - mapped : 0;
}

/// What the kernels map after a large buffer under an address-space limit:
/// oneDNN's generated code and scratchpads, the OpenMP threads' stacks.
/// Without it a run whose arenas just fit crashed inside oneDNN (a
/// segfault, or an abort on a worker thread), where one that did not fit
/// said so.
constexpr uint64_t kAddressSpaceReserve = uint64_t(64) << 20;

std::string describeSize(uint64_t bytes) {
  return formatBytes(int64_t(std::min<uint64_t>(bytes, INT64_MAX))) + " (" +
         std::to_string(bytes) + " bytes)";
}

} // namespace

std::string formatBytes(int64_t bytes) {
  static const char *kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double value = double(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

std::optional<uint64_t> availableMemoryBytes() {
  std::string meminfo = readSmallFile("/proc/meminfo");
  std::optional<uint64_t> available = meminfoBytes(meminfo, "MemAvailable");
  if (available)
    *available += meminfoBytes(meminfo, "SwapFree").value_or(0);
  if (std::optional<uint64_t> headroom = cgroupHeadroom())
    available = available ? std::min(*available, *headroom) : *headroom;
  return available;
}

namespace {

/// Under an address-space limit: `bytes` and the kernels' reserve must fit
/// what it leaves; ResourceError naming `what` otherwise.
void checkAddressSpace(uint64_t bytes, const std::string &what) {
  std::optional<uint64_t> headroom = addressSpaceHeadroom();
  if (headroom &&
      (bytes > *headroom || *headroom - bytes < kAddressSpaceReserve))
    throw ResourceError(
        "cannot allocate " + what + ": it needs " + describeSize(bytes) +
        ", and the kernels about " +
        formatBytes(int64_t(kAddressSpaceReserve)) +
        " more, but the process's address-space limit (`ulimit -v`) leaves " +
        formatBytes(int64_t(*headroom)) + "; raise the limit");
}

} // namespace

void checkAvailableMemory(uint64_t bytes, const std::string &what) {
  std::optional<uint64_t> available = availableMemoryBytes();
  if (available && bytes > *available)
    throw ResourceError(
        "cannot allocate " + what + ": it needs " + describeSize(bytes) +
        " but " + formatBytes(int64_t(*available)) + " of memory is available");
  checkAddressSpace(bytes, what);
}

AlignedBuffer allocateBuffer(uint64_t bytes, const std::string &what) {
  bytes = std::max<uint64_t>(bytes, 64); // never NULL, even when empty
  // The arenas (a few calls, no per-token buffers): under `ulimit -v` the
  // kernels' reserve is checked for small ones too (a small model's 7 MiB
  // arenas fit, and oneDNN segfaulted in its first product).
  if (bytes >= kCheckedAllocationBytes)
    checkAvailableMemory(bytes, what);
  else
    checkAddressSpace(bytes, what);
  try {
    return AlignedBuffer(size_t(bytes));
  } catch (const std::bad_alloc &) {
    throw ResourceError("cannot allocate " + what + ": out of memory for " +
                        describeSize(bytes));
  }
}

uint64_t tensorByteSize(DType dtype, const Shape &shape,
                        const std::string &what) {
  std::optional<int64_t> bytes =
      checkedByteSize(shape, int64_t(dtypeSize(dtype)));
  if (!bytes)
    throw ResourceError("cannot allocate " + what + " " + formatShape(shape) +
                        ": its size overflows 64 bits");
  return uint64_t(*bytes);
}

Tensor allocateTensor(DType dtype, const Shape &shape,
                      const std::string &what) {
  const uint64_t bytes = tensorByteSize(dtype, shape, what);
  Tensor tensor;
  tensor.dtype = dtype;
  tensor.shape = shape;
  if (bytes >= kCheckedAllocationBytes)
    checkAvailableMemory(bytes, what);
  try {
    tensor.buffer = AlignedBuffer(size_t(bytes));
  } catch (const std::bad_alloc &) {
    throw ResourceError("cannot allocate " + what + ": out of memory for " +
                        describeSize(bytes));
  }
  return tensor;
}

} // namespace txrt::driver
