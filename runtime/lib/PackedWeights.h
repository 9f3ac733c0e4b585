//===- PackedWeights.h - frozen weights kept in a product's layout -*- C++
//-*-===//
//
// oneDNN's brgemm matmul reads its weights (B) in a blocked layout. Given a
// plain one, as the parameter arena holds them, it packs B again inside
// every call, each thread the blocks it needs: at a decoding step's few
// rows that costs as much as the product (m = 8: half of the call on Zen 4),
// at m = 512 a few percent. When the host promises that a range of memory
// does not change (txrt_context_set_frozen_parameters: the executable's
// driver does it for the parameter arena around forward entries), the
// linear kernels read weights in that range from a copy packed once, in the
// layout their primitive asks for.
//
// Copies are keyed by address and layout and are all dropped whenever the
// frozen range is set again or thawed, so a copy is only read while the
// host's promise holds. Their total size is about that of the weights the
// products read and never over twice the frozen range's; past that (or when
// a copy cannot be allocated) the product reads the plain weights as
// before. TXRT_PACK_WEIGHTS=0 turns packing off.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_PACKEDWEIGHTS_H
#define TXRT_LIB_PACKEDWEIGHTS_H

#include <dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace txrt {

class PackedWeights {
public:
  /// Reads TXRT_PACK_WEIGHTS (unset, empty or "1": on; "0": off); any
  /// other value throws Error (txrt_context_create fails).
  PackedWeights();

  /// Declares [base, base + bytes) constant until the next call and drops
  /// every copy; a null base or 0 bytes declares nothing constant.
  void freeze(const void *base, size_t bytes);
  /// A kernel writes [p, p + bytes): drops the frozen range and the copies
  /// when the two overlap.
  void noteWrite(const void *p, size_t bytes);
  /// Whether [w, w + bytes) lies in the frozen range (and packing is on).
  bool covers(const void *w, size_t bytes) const;
  /// The copy of `w` (laid out as `plain`) in layout `packed`, packed on
  /// first use; nullptr when it would take the copies past their budget or
  /// cannot be made (the caller reads `w` instead).
  const void *get(const dnnl::engine &engine, dnnl::stream &stream,
                  const void *w, const dnnl::memory::desc &plain,
                  const dnnl::memory::desc &packed);

  /// The copies held now: their count and bytes.
  int64_t count() const { return count_; }
  size_t bytes() const { return bytes_; }

private:
  struct Copy {
    dnnl::memory::desc layout;
    dnnl::memory data;
  };
  bool enabled_ = true;
  uintptr_t begin_ = 0, end_ = 0;
  std::unordered_map<const void *, std::vector<Copy>> copies_;
  int64_t count_ = 0;
  size_t bytes_ = 0;
};

} // namespace txrt

#endif // TXRT_LIB_PACKEDWEIGHTS_H
