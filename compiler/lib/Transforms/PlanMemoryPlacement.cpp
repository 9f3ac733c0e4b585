//===- PlanMemoryPlacement.cpp - arena offsets for buffers with lifetimes -===//
//
// The placement half of tx-plan-memory: given buffers (sizes and inclusive
// lifetimes in program positions), an offset for each such that no two
// buffers live at the same time share a byte, in an arena kept small. Two
// placements: an exact best fit, largest buffer first, against every
// buffer already placed (n x placed steps: used up to
// kExactBestFitBuffers buffers), and a sweep over the lifetimes in program
// order with a free list ordered by size (n log n: used above it, so that
// compile time stays linear in the depth of a model). docs/codegen.md,
// "Memory planning", compares their arenas.
//
//===----------------------------------------------------------------------===//
#include "txc/Transforms/MemoryPlan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>

using namespace mlir;
using namespace mlir::tx;

std::optional<int64_t>
mlir::tx::placeBestFit(ArrayRef<ArenaBuffer> buffers,
                       SmallVectorImpl<int64_t> &offsets, size_t &overLimit) {
  offsets.assign(buffers.size(), -1);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].start < buffers[b].start;
  });
  // Placed buffers by offset, so those live with a buffer come in offset
  // order without sorting them for every buffer.
  std::vector<size_t> placed;
  int64_t arena = 0;
  for (size_t i : order) {
    const ArenaBuffer &buffer = buffers[i];
    // Offsets and sizes are at most kMaxArenaBytes (2^48): sums of two of
    // them cannot overflow.
    int64_t cursor = 0, best = -1, bestGap = 0;
    for (size_t j : placed) {
      const ArenaBuffer &other = buffers[j];
      if (other.end < buffer.start || buffer.end < other.start)
        continue;
      int64_t gap = offsets[j] - cursor;
      if (gap >= buffer.bytes && (best < 0 || gap < bestGap)) {
        best = cursor;
        bestGap = gap;
        // A gap of exactly the buffer's size is the best fit, and a later
        // one only ties it: the lowest wins, so the scan can stop here.
        if (gap == buffer.bytes)
          break;
      }
      cursor = std::max(cursor, offsets[j] + other.bytes);
    }
    int64_t offset = best >= 0 ? best : cursor;
    if (buffer.bytes > kMaxArenaBytes - offset) {
      overLimit = i;
      return std::nullopt;
    }
    offsets[i] = offset;
    arena = std::max(arena, offset + buffer.bytes);
    auto at = std::upper_bound(
        placed.begin(), placed.end(), offset,
        [&](int64_t offset, size_t j) { return offset < offsets[j]; });
    placed.insert(at, i);
  }
  return arena;
}

namespace {

/// The free bytes below the sweep's top of the arena, as holes that never
/// touch each other or the top: by offset (to merge a released buffer with
/// its neighbours) and by size, then offset (for the best fit).
class FreeList {
public:
  /// The offset of the smallest hole of at least `bytes` (the lowest of
  /// equal ones), taken out of the list, or past the top, which grows.
  int64_t take(int64_t bytes) {
    auto hole = bySize.lower_bound({bytes, 0});
    if (hole == bySize.end()) {
      int64_t offset = top;
      top += bytes;
      return offset;
    }
    auto [size, offset] = *hole;
    bySize.erase(hole);
    byOffset.erase(offset);
    if (size > bytes)
      insert(offset + bytes, size - bytes);
    return offset;
  }

  /// Returns [offset, offset + bytes) to the list, merged with the holes
  /// beside it, or to the top when it ends there.
  void release(int64_t offset, int64_t bytes) {
    auto next = byOffset.lower_bound(offset);
    if (next != byOffset.end() && next->first == offset + bytes) {
      bytes += next->second;
      bySize.erase({next->second, next->first});
      next = byOffset.erase(next);
    }
    if (next != byOffset.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        bytes += prev->second;
        bySize.erase({prev->second, prev->first});
        byOffset.erase(prev);
      }
    }
    if (offset + bytes == top)
      top = offset;
    else
      insert(offset, bytes);
  }

  /// The end of the highest buffer in use.
  int64_t getTop() const { return top; }

private:
  void insert(int64_t offset, int64_t bytes) {
    byOffset.emplace(offset, bytes);
    bySize.emplace(bytes, offset);
  }

  std::map<int64_t, int64_t> byOffset;
  std::set<std::pair<int64_t, int64_t>> bySize;
  int64_t top = 0;
};

} // namespace

std::optional<int64_t>
mlir::tx::placeBySweep(ArrayRef<ArenaBuffer> buffers,
                       SmallVectorImpl<int64_t> &offsets, size_t &overLimit) {
  offsets.assign(buffers.size(), -1);
  // In program order; of the buffers starting together, the largest first.
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].start != buffers[b].start)
      return buffers[a].start < buffers[b].start;
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    return a < b;
  });
  // Buffers in use by the position of their last use, earliest on top.
  using LastUse = std::pair<int64_t, size_t>;
  std::priority_queue<LastUse, std::vector<LastUse>, std::greater<LastUse>>
      live;
  FreeList free;
  int64_t arena = 0;
  for (size_t i : order) {
    const ArenaBuffer &buffer = buffers[i];
    // A buffer last used before this one starts is free; one last used
    // where this one starts is not (the op reads it while writing this).
    while (!live.empty() && live.top().first < buffer.start) {
      size_t done = live.top().second;
      free.release(offsets[done], buffers[done].bytes);
      live.pop();
    }
    // Offsets and sizes are at most kMaxArenaBytes (2^48): sums of two of
    // them cannot overflow.
    offsets[i] = free.take(buffer.bytes);
    if (buffer.bytes > kMaxArenaBytes - offsets[i]) {
      overLimit = i;
      return std::nullopt;
    }
    arena = std::max(arena, free.getTop());
    live.push({buffer.end, i});
  }
  return arena;
}

std::optional<int64_t>
mlir::tx::placeInArena(ArrayRef<ArenaBuffer> buffers,
                       SmallVectorImpl<int64_t> &offsets, size_t &overLimit) {
  if (buffers.size() <= kExactBestFitBuffers)
    return placeBestFit(buffers, offsets, overLimit);
  return placeBySweep(buffers, offsets, overLimit);
}
