//===- PairIds.h - the token ids of many sentence pairs, packed -*- C++ -*-===//
//
// The training corpus as train keeps it: every pair's source ids and then
// its target ids in one contiguous int32 array, two offsets a pair, and
// the pair's line in the file (for errors). No text, no per-pair vectors:
// 4 bytes a token + 24 bytes a pair + 8 (the batch plan adds its 16 bytes of
// lengths a pair, data/Batching.h). Filled once (add), then read-only.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_PAIRIDS_H
#define TXRT_DRIVER_PAIRIDS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace txrt::driver {

struct EncodedPair;

/// A read-only run of ids inside a PairIds.
class IdSpan {
public:
  IdSpan(const int32_t *begin, const int32_t *end) : begin_(begin), end_(end) {}
  const int32_t *begin() const { return begin_; }
  const int32_t *end() const { return end_; }
  size_t size() const { return size_t(end_ - begin_); }
  bool empty() const { return begin_ == end_; }
  int32_t operator[](size_t i) const { return begin_[i]; }
  std::vector<int32_t> toVector() const { return {begin_, end_}; }

private:
  const int32_t *begin_, *end_;
};

class PairIds {
public:
  PairIds() : offsets_{0} {}
  static PairIds fromPairs(const std::vector<EncodedPair> &pairs);

  void add(const std::vector<int32_t> &source,
           const std::vector<int32_t> &target, int64_t line);
  /// Gives back the slack of the growing arrays (call once filled).
  void shrinkToFit();

  size_t size() const { return lines_.size(); }
  bool empty() const { return lines_.empty(); }
  IdSpan source(size_t pair) const { return range(2 * pair); }
  IdSpan target(size_t pair) const { return range(2 * pair + 1); }
  int64_t line(size_t pair) const { return lines_[pair]; }
  /// Token ids held, both sides.
  size_t tokens() const { return ids_.size(); }
  /// Heap bytes of the three arrays (their capacity).
  size_t bytes() const;

private:
  IdSpan range(size_t run) const {
    return {ids_.data() + offsets_[run], ids_.data() + offsets_[run + 1]};
  }

  std::vector<int32_t> ids_;
  std::vector<uint64_t> offsets_; ///< 2 * size() + 1 run boundaries
  std::vector<int64_t> lines_;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_PAIRIDS_H
