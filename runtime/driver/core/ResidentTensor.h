//===- ResidentTensor.h - tensors kept where the entries run ----*- C++ -*-===//
//
// A tensor that stays where a ModelRunner's entries run between calls: in
// device memory when they run on a device (a --target=cuda executable), in
// host memory on the CPU. Decoding keeps its KV caches, the encoder's memory
// and the cross-attention keys and values this way, so a token's step on a
// GPU moves its ids in and its logits out, not every cache both ways
// (docs/cuda.md "Resident tensors"). The host sees the elements only
// through read(). A resident tensor must not outlive its device (the
// ModelRunner that owns it): the decoders that hold them hold the runner.
//
// regrowRows is how a KV cache follows its rows: rows picked by index
// (greedy keeps them, beam search reorders them) and positions appended,
// zero-filled, for the step to write. It copies into a second block kept
// for the purpose and swaps the two, so a cache that grows by a position a
// token allocates only when it outgrows its blocks (then twice the size).
// assign starts it over (the next batch of sentences) in the same blocks,
// the first one current again: once the blocks are large enough, the n-th
// position of every batch lives at the same address, which is what lets a
// decoding step's CUDA graph be replayed (docs/cuda.md "CUDA graphs").
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_RESIDENTTENSOR_H
#define TXRT_DRIVER_RESIDENTTENSOR_H

#include "core/Device.h"
#include "core/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace txrt::driver {

class ResidentTensor {
public:
  ResidentTensor() = default;
  /// A zero-filled tensor on `device` (nullptr: host memory); a
  /// ResourceError names `what` ("output 'k.0' of entry 'decode_init'")
  /// when it cannot be allocated.
  ResidentTensor(Device *device, DType dtype, Shape shape, std::string what);
  /// Makes it what the constructor would, zero-filled, but keeps its
  /// blocks when they are on `device` and large enough (the first block
  /// current). `zeroed` false: a kept block is left as it is, for a tensor
  /// its writer fills whole (an entry's output: on a device, no memset
  /// launch a decoded token for the logits).
  void assign(Device *device, DType dtype, Shape shape, std::string what,
              bool zeroed = true);
  ResidentTensor(ResidentTensor &&other) noexcept;
  ResidentTensor &operator=(ResidentTensor &&other) noexcept;
  ResidentTensor(const ResidentTensor &) = delete;
  ResidentTensor &operator=(const ResidentTensor &) = delete;
  ~ResidentTensor();

  /// The device it lives on; nullptr: host memory.
  Device *device() const { return device_; }
  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  uint64_t byteSize() const { return bytes_; }
  /// Its elements where they are (device memory on a device).
  void *data() { return current_.data; }
  const void *data() const { return current_.data; }

  /// A host copy (on a device: waits for the queued work that writes it).
  Tensor read() const;
  /// Copies `host` (its dtype and shape) in. std::logic_error when they
  /// differ.
  void write(const Tensor &host);

  /// Makes a [rows, positions, ...] tensor [from.size(), positions + more,
  /// ...]: row r is the old row from[r] (indices may repeat or reorder),
  /// followed by `more` zero positions (`zeroNew` false: positions left as
  /// they are, for an entry that writes them before it reads them: a
  /// cache's `writes_last_rows`). std::logic_error for a rank below 2 or an
  /// index out of range.
  void regrowRows(const std::vector<size_t> &from, int64_t more,
                  bool zeroNew = true);
  /// regrowRows of several tensors of one device with the same rows: their
  /// copies in one Device::copyRows call (a model's caches in one launch).
  static void regrowAll(const std::vector<ResidentTensor *> &tensors,
                        const std::vector<size_t> &from, int64_t more,
                        bool zeroNew = true);

private:
  /// A block of device or host memory.
  struct Block {
    void *data = nullptr;
    uint64_t capacity = 0;
    AlignedBuffer host; ///< the storage when there is no device
  };
  Block allocateBlock(uint64_t bytes) const;
  void releaseBlock(Block &block);
  void zeroRows(void *dst, uint64_t pitch, uint64_t width, uint64_t height);
  /// A regrowth in two halves: plan (checks, the spare block, the copies
  /// into it appended to `copies`), then, once the copies ran, finish (the
  /// new positions zeroed, the blocks swapped).
  struct Regrowth {
    Shape shape;
    uint64_t bytes = 0, oldRow = 0, newRow = 0;
  };
  Regrowth planRegrowth(const std::vector<size_t> &from, int64_t more,
                        std::vector<RowCopy> &copies);
  void finishRegrowth(Regrowth &plan, bool zeroNew);

  Device *device_ = nullptr;
  DType dtype_ = DType::F32;
  Shape shape_;
  uint64_t bytes_ = 0;
  std::string what_;
  Block current_, spare_;
  bool swapped_ = false; ///< current_ is the block allocated second
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_RESIDENTTENSOR_H
