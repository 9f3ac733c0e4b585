//===- Tensor.cpp - dtypes, shapes and aligned buffers of the driver ------===//
//
// Element type names and sizes, shape formatting with overflow-checked
// element counts, and the zero-filled 64-byte aligned buffer.
//
// Large buffers (the parameter and activation arenas, big inputs and
// outputs) are mapped directly, 2 MiB aligned, and offered to the kernel's
// transparent huge pages (MADV_HUGEPAGE; Debian's default THP mode is
// `madvise`, so nothing is huge unless asked for). A train step streams
// hundreds of MB of arena through every op; with 4 KiB pages each op's
// first touch of its operands misses the TLB page by page, which in a
// virtual machine costs a two-level walk. TXRT_HUGE_PAGES=0 keeps 4 KiB
// pages (docs/driver.md). Pages nobody touches are still never made
// resident (e.g. the gradient region of a parameter arena while `train`
// runs the fused step).
//
//===----------------------------------------------------------------------===//
#include "core/Tensor.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace txrt::driver {

namespace {
struct DTypeRow {
  DType dtype;
  const char *name;
  size_t size;
};
constexpr DTypeRow kDTypes[] = {
    {DType::Bool, "bool", 1}, {DType::I8, "i8", 1},   {DType::U8, "u8", 1},
    {DType::I16, "i16", 2},   {DType::U16, "u16", 2}, {DType::I32, "i32", 4},
    {DType::U32, "u32", 4},   {DType::I64, "i64", 8}, {DType::U64, "u64", 8},
    {DType::F16, "f16", 2},   {DType::F32, "f32", 4}, {DType::F64, "f64", 8},
};

const DTypeRow &rowOf(DType dtype) {
  for (const DTypeRow &row : kDTypes)
    if (row.dtype == dtype)
      return row;
  return kDTypes[0]; // unreachable: every enumerator has a row
}
} // namespace

size_t dtypeSize(DType dtype) { return rowOf(dtype).size; }

const char *dtypeName(DType dtype) { return rowOf(dtype).name; }

std::optional<DType> parseDTypeName(std::string_view name) {
  for (const DTypeRow &row : kDTypes)
    if (name == row.name)
      return row.dtype;
  return std::nullopt;
}

std::string formatShape(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::optional<int64_t> checkedByteSize(const Shape &shape,
                                       int64_t elementBytes) {
  int64_t total = elementBytes;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (__builtin_mul_overflow(total, dim, &total))
      return std::nullopt;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// AlignedBuffer
//===----------------------------------------------------------------------===//

namespace {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
/// Whether large buffers ask for transparent huge pages: yes unless
/// TXRT_HUGE_PAGES=0.
bool hugePagesWanted() {
  const char *value = std::getenv("TXRT_HUGE_PAGES");
  return !value || std::strcmp(value, "0") != 0;
}

/// A fresh, zero-filled mapping of at least `bytes`, its start 2 MiB
/// aligned and marked MADV_HUGEPAGE, `mappedBytes` long; nullptr when mmap
/// fails.
void *mapHuge(size_t bytes, size_t &mappedBytes) {
  constexpr size_t kHuge = AlignedBuffer::kHugePageBytes;
  size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  if (rounded < bytes || rounded + kHuge < rounded)
    return nullptr;
  size_t length = rounded + kHuge;
  void *raw = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge;
  // Hand the unaligned head and the tail back at once.
  size_t head = aligned - start, tail = length - head - rounded;
  if (head)
    munmap(raw, head);
  if (tail)
    munmap(reinterpret_cast<void *>(aligned + rounded), tail);
  void *data = reinterpret_cast<void *>(aligned);
  // Only advice: where THP is off ("never") the pages stay 4 KiB.
  (void)madvise(data, rounded, MADV_HUGEPAGE);
  mappedBytes = rounded;
  return data;
}
#endif
} // namespace

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0)
    return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePageBytes && hugePagesWanted()) {
    raw_ = data_ = mapHuge(bytes, mappedBytes_);
    if (data_)
      return;
  }
#endif
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes)
    throw std::bad_alloc();
  // calloc: large blocks come as fresh zero pages from the kernel, so memory
  // nobody writes is never made resident.
  raw_ = std::calloc(1, rounded + kAlignment);
  if (!raw_)
    throw std::bad_alloc();
  uintptr_t address = reinterpret_cast<uintptr_t>(raw_);
  data_ = reinterpret_cast<void *>((address + kAlignment - 1) / kAlignment *
                                   kAlignment);
}

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      raw_(std::exchange(other.raw_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mappedBytes_(std::exchange(other.mappedBytes_, 0)) {}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  std::swap(data_, other.data_);
  std::swap(raw_, other.raw_);
  std::swap(size_, other.size_);
  std::swap(mappedBytes_, other.mappedBytes_);
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (mappedBytes_) {
    munmap(raw_, mappedBytes_);
    return;
  }
#endif
  std::free(raw_);
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor(DType dtype, Shape shape)
    : dtype(dtype), shape(std::move(shape)),
      buffer(size_t(
          checkedByteSize(this->shape, int64_t(dtypeSize(dtype))).value())) {}

int64_t Tensor::numElements() const {
  return int64_t(buffer.size() / dtypeSize(dtype));
}

} // namespace txrt::driver
