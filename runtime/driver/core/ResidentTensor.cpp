//===- ResidentTensor.cpp - tensors kept where the entries run ------------===//
#include "core/ResidentTensor.h"
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
                            std::string what, bool zeroed) {
  const uint64_t bytes = tensorByteSize(dtype, shape, what);
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
  bytes_ = bytes;
  if (!current_.data || current_.capacity < bytes_) {
    releaseBlock(current_);
    current_ = allocateBlock(bytes_);
    if (!device_) // host buffers come zeroed
      return;
  }
  if (zeroed)
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

namespace {

/// `copies` on `device`, or with memcpy in host memory (device nullptr).
void runCopies(Device *device, const std::vector<RowCopy> &copies) {
  if (copies.empty())
    return;
  if (device) {
    device->copyRows(copies);
    return;
  }
  for (const RowCopy &copy : copies)
    for (uint64_t row = 0; row < copy.height; ++row)
      std::memcpy(static_cast<char *>(copy.dst) + row * copy.dstPitch,
                  static_cast<const char *>(copy.src) + row * copy.srcPitch,
                  copy.width);
}

} // namespace

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
                           formatShape(host.shape) +
                           " of another shape or "
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
  regrowAll({this}, from, more, zeroNew);
}

void ResidentTensor::regrowAll(const std::vector<ResidentTensor *> &tensors,
                               const std::vector<size_t> &from, int64_t more,
                               bool zeroNew) {
  std::vector<RowCopy> copies;
  std::vector<Regrowth> plans;
  for (ResidentTensor *tensor : tensors) {
    if (tensor->device_ != tensors.front()->device_)
      throw std::logic_error("ResidentTensor::regrowAll: " + tensor->what_ +
                             " is on another device than " +
                             tensors.front()->what_);
    plans.push_back(tensor->planRegrowth(from, more, copies));
  }
  if (!tensors.empty())
    runCopies(tensors.front()->device_, copies);
  for (size_t i = 0; i < tensors.size(); ++i)
    tensors[i]->finishRegrowth(plans[i], zeroNew);
}

ResidentTensor::Regrowth
ResidentTensor::planRegrowth(const std::vector<size_t> &from, int64_t more,
                             std::vector<RowCopy> &copies) {
  if (shape_.size() < 2 || more < 0)
    throw std::logic_error("ResidentTensor::regrowRows: " + what_ + " " +
                           formatShape(shape_) +
                           " is not [rows, positions, "
                           "...] or more is negative");
  const uint64_t rows = uint64_t(shape_[0]);
  for (size_t row : from)
    if (row >= rows)
      throw std::logic_error("ResidentTensor::regrowRows: row " +
                             std::to_string(row) + " of " + what_ + " " +
                             formatShape(shape_) + " is out of range");
  Regrowth plan;
  plan.shape = shape_;
  plan.shape[0] = int64_t(from.size());
  plan.shape[1] += more;
  plan.bytes = tensorByteSize(dtype_, plan.shape, what_);
  // The bytes of one position, and of a row before and after.
  uint64_t position = dtypeSize(dtype_);
  for (size_t axis = 2; axis < shape_.size(); ++axis)
    position *= uint64_t(shape_[axis]);
  plan.oldRow = position * uint64_t(shape_[1]);
  plan.newRow = position * uint64_t(plan.shape[1]);
  if (spare_.capacity < plan.bytes) {
    releaseBlock(spare_);
    spare_ = allocateBlock(std::max(plan.bytes, 2 * current_.capacity));
  }
  char *dst = static_cast<char *>(spare_.data);
  const char *src = static_cast<const char *>(current_.data);
  // Runs of consecutive source rows go in one strided copy (greedy
  // decoding's rows are one run).
  for (size_t first = 0; first < from.size() && plan.oldRow > 0;) {
    size_t end = first + 1;
    while (end < from.size() && from[end] == from[end - 1] + 1)
      ++end;
    copies.push_back({dst + first * plan.newRow,
                      src + from[first] * plan.oldRow, plan.newRow, plan.oldRow,
                      plan.oldRow, end - first});
    first = end;
  }
  return plan;
}

void ResidentTensor::finishRegrowth(Regrowth &plan, bool zeroNew) {
  if (zeroNew)
    zeroRows(static_cast<char *>(spare_.data) + plan.oldRow, plan.newRow,
             plan.newRow - plan.oldRow, uint64_t(plan.shape[0]));
  std::swap(current_, spare_);
  swapped_ = !swapped_;
  shape_ = std::move(plan.shape);
  bytes_ = plan.bytes;
}

} // namespace txrt::driver
