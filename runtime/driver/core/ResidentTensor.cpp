//===- ResidentTensor.cpp - tensors kept where the entries run ------------===//
#include "core/ResidentTensor.h"
#include "core/Error.h"
#include "core/Memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace txrt::driver {

ResidentTensor::ResidentTensor(Device *device, DType dtype, Shape shape,
                               std::string what) {
  assign(device, dtype, std::move(shape), std::move(what));
}

void ResidentTensor::assign(Device *device, DType dtype, Shape shape,
                            std::string what) {
  std::optional<int64_t> bytes =
      checkedByteSize(shape, int64_t(dtypeSize(dtype)));
  if (!bytes)
    throw ResourceError("cannot allocate " + what + " " + formatShape(shape) +
                        ": its size overflows 64 bits");
  if (device != device_) {
    releaseBlock(current_);
    releaseBlock(spare_);
    device_ = device;
  }
  if (swapped_) {
    std::swap(current_, spare_);
    swapped_ = false;
  }
  dtype_ = dtype;
  shape_ = std::move(shape);
  what_ = std::move(what);
  bytes_ = uint64_t(*bytes);
  if (!current_.data || current_.capacity < bytes_) {
    releaseBlock(current_);
    current_ = allocateBlock(bytes_);
    if (!device_) // host buffers come zeroed
      return;
  }
  zeroRows(current_.data, bytes_, bytes_, 1);
}

ResidentTensor::ResidentTensor(ResidentTensor &&other) noexcept {
  *this = std::move(other);
}

ResidentTensor &ResidentTensor::operator=(ResidentTensor &&other) noexcept {
  if (this == &other)
    return *this;
  releaseBlock(current_);
  releaseBlock(spare_);
  device_ = other.device_;
  dtype_ = other.dtype_;
  shape_ = std::move(other.shape_);
  bytes_ = std::exchange(other.bytes_, 0);
  what_ = std::move(other.what_);
  current_ = std::exchange(other.current_, Block());
  spare_ = std::exchange(other.spare_, Block());
  swapped_ = std::exchange(other.swapped_, false);
  return *this;
}

ResidentTensor::~ResidentTensor() {
  releaseBlock(current_);
  releaseBlock(spare_);
}

ResidentTensor::Block ResidentTensor::allocateBlock(uint64_t bytes) const {
  // Never NULL, even empty (as the host buffers of Memory.h).
  bytes = std::max<uint64_t>(bytes, AlignedBuffer::kAlignment);
  Block block;
  if (device_) {
    block.data = device_->allocate(bytes, what_);
  } else {
    block.host = allocateBuffer(bytes, what_);
    block.data = block.host.data();
  }
  block.capacity = bytes;
  return block;
}

void ResidentTensor::releaseBlock(Block &block) {
  if (device_ && block.data)
    device_->release(block.data);
  block = Block();
}

void ResidentTensor::copyRows(void *dst, uint64_t dstPitch, const void *src,
                              uint64_t srcPitch, uint64_t width,
                              uint64_t height) {
  if (width == 0 || height == 0)
    return;
  if (device_) {
    device_->copyRows(dst, dstPitch, src, srcPitch, width, height);
    return;
  }
  for (uint64_t row = 0; row < height; ++row)
    std::memcpy(static_cast<char *>(dst) + row * dstPitch,
                static_cast<const char *>(src) + row * srcPitch, width);
}

void ResidentTensor::zeroRows(void *dst, uint64_t pitch, uint64_t width,
                              uint64_t height) {
  if (width == 0 || height == 0)
    return;
  if (device_) {
    device_->zeroRows(dst, pitch, width, height);
    return;
  }
  for (uint64_t row = 0; row < height; ++row)
    std::memset(static_cast<char *>(dst) + row * pitch, 0, width);
}

Tensor ResidentTensor::read() const {
  Tensor copy = allocateTensor(dtype_, shape_, "a host copy of " + what_);
  if (!device_) {
    std::memcpy(copy.data(), current_.data, bytes_);
    return copy;
  }
  device_->toHost(copy.data(), current_.data, bytes_);
  return copy;
}

void ResidentTensor::write(const Tensor &host) {
  if (host.dtype != dtype_ || host.shape != shape_)
    throw std::logic_error("ResidentTensor::write: " + what_ + " " +
                           formatShape(shape_) + " written from a tensor " +
                           formatShape(host.shape) + " of another shape or "
                           "dtype");
  if (bytes_ == 0)
    return;
  if (device_)
    device_->toDevice(current_.data, host.data(), bytes_);
  else
    std::memcpy(current_.data, host.data(), bytes_);
}

void ResidentTensor::regrowRows(const std::vector<size_t> &from, int64_t more,
                                bool zeroNew) {
  if (shape_.size() < 2 || more < 0)
    throw std::logic_error("ResidentTensor::regrowRows: " + what_ + " " +
                           formatShape(shape_) + " is not [rows, positions, "
                           "...] or more is negative");
  const uint64_t rows = uint64_t(shape_[0]);
  for (size_t row : from)
    if (row >= rows)
      throw std::logic_error("ResidentTensor::regrowRows: row " +
                             std::to_string(row) + " of " + what_ + " " +
                             formatShape(shape_) + " is out of range");
  Shape grown = shape_;
  grown[0] = int64_t(from.size());
  grown[1] += more;
  std::optional<int64_t> checked =
      checkedByteSize(grown, int64_t(dtypeSize(dtype_)));
  if (!checked)
    throw ResourceError("cannot allocate " + what_ + " " +
                        formatShape(grown) + ": its size overflows 64 bits");
  const uint64_t bytes = uint64_t(*checked);
  // The bytes of one position, and of a row before and after.
  uint64_t position = dtypeSize(dtype_);
  for (size_t axis = 2; axis < shape_.size(); ++axis)
    position *= uint64_t(shape_[axis]);
  const uint64_t oldRow = position * uint64_t(shape_[1]);
  const uint64_t newRow = position * uint64_t(grown[1]);
  if (spare_.capacity < bytes) {
    releaseBlock(spare_);
    spare_ = allocateBlock(std::max(bytes, 2 * current_.capacity));
  }
  char *dst = static_cast<char *>(spare_.data);
  const char *src = static_cast<const char *>(current_.data);
  // Runs of consecutive source rows go in one strided copy (greedy
  // decoding's rows are one run).
  for (size_t first = 0; first < from.size();) {
    size_t end = first + 1;
    while (end < from.size() && from[end] == from[end - 1] + 1)
      ++end;
    copyRows(dst + first * newRow, newRow, src + from[first] * oldRow, oldRow,
             oldRow, end - first);
    first = end;
  }
  if (zeroNew)
    zeroRows(dst + oldRow, newRow, newRow - oldRow, from.size());
  std::swap(current_, spare_);
  swapped_ = !swapped_;
  shape_ = std::move(grown);
  bytes_ = bytes;
}

} // namespace txrt::driver
