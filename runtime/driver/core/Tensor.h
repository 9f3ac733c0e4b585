//===- Tensor.h - host tensors: dtypes, buffers, shapes ---------*- C++ -*-===//
//
// The driver moves dense row-major tensors between files (.npy,
// .safetensors, text) and the buffers a compiled entry reads and writes.
// DType covers every element type those files may hold; the model itself
// only uses F32, I32 and Bool (one byte, 0 or 1). Buffers are 64-byte aligned
// and zero-filled, as the entry ABI asks for its arenas.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TENSOR_H
#define TXRT_DRIVER_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

/// Element types. Bool is one byte holding 0 or 1.
enum class DType { Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64 };

/// Bytes per element.
size_t dtypeSize(DType dtype);

/// The model's spelling: "bool", "i8", ..., "f32".
const char *dtypeName(DType dtype);

/// Parses the model's spelling ("f32", "i32", "bool", ...).
std::optional<DType> parseDTypeName(std::string_view name);

using Shape = std::vector<int64_t>;

/// "[3, 4]"; "[]" for a scalar.
std::string formatShape(const Shape &shape);

/// elementBytes * the product of the dims, or nullopt when a dim is
/// negative or the product overflows int64.
std::optional<int64_t> checkedByteSize(const Shape &shape,
                                       int64_t elementBytes);

/// The number of elements (checkedByteSize with one byte per element).
inline std::optional<int64_t> checkedNumElements(const Shape &shape) {
  return checkedByteSize(shape, 1);
}

/// A zero-filled, 64-byte aligned, move-only block of host memory. Blocks
/// of kHugePageBytes or more are their own mapping, 2 MiB aligned and
/// marked for transparent huge pages (Tensor.cpp; TXRT_HUGE_PAGES=0: not).
class AlignedBuffer {
public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePageBytes = size_t(2) << 20;

  AlignedBuffer() = default;
  /// Throws std::bad_alloc when the allocation fails.
  explicit AlignedBuffer(size_t bytes);
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer();

  void *data() { return data_; }
  const void *data() const { return data_; }
  size_t size() const { return size_; }
  /// Whether the block is a mapping of its own marked for huge pages.
  bool hugePageMapped() const { return mappedBytes_ != 0; }

private:
  void *data_ = nullptr; ///< 64-byte aligned, inside raw_
  void *raw_ = nullptr;  ///< what calloc returned, or the mapping
  size_t size_ = 0;
  size_t mappedBytes_ = 0; ///< the mapping's length (0: calloc'd)
};

/// A dense row-major tensor owning its elements.
struct Tensor {
  DType dtype = DType::F32;
  Shape shape;
  AlignedBuffer buffer;

  Tensor() = default;
  /// Allocates (zeroed) storage for `shape`; the caller has validated that
  /// the size does not overflow.
  Tensor(DType dtype, Shape shape);

  int64_t numElements() const;
  size_t byteSize() const { return buffer.size(); }
  void *data() { return buffer.data(); }
  const void *data() const { return buffer.data(); }
  template <typename T> T *as() { return static_cast<T *>(buffer.data()); }
  template <typename T> const T *as() const {
    return static_cast<const T *>(buffer.data());
  }
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_TENSOR_H
