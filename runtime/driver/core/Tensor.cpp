//===- Tensor.cpp - dtypes, shapes and aligned buffers of the driver ------===//
//
// Element type names and sizes, shape formatting with overflow-checked
// element counts, and the zero-filled 64-byte aligned buffer.
//
//===----------------------------------------------------------------------===//
#include "core/Tensor.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

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

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0)
    return;
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes)
    throw std::bad_alloc();
  // calloc: large blocks come as fresh zero pages from the kernel, so memory
  // nobody writes (e.g. the gradient region of a parameter arena while
  // `train` runs the fused step) is never made resident.
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
      size_(std::exchange(other.size_, 0)) {}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  std::swap(data_, other.data_);
  std::swap(raw_, other.raw_);
  std::swap(size_, other.size_);
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(raw_); }

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
