//===- PairIds.cpp - the token ids of many sentence pairs, packed ---------===//
#include "data/PairIds.h"
#include "data/ParallelText.h"

namespace txrt::driver {

PairIds PairIds::fromPairs(const std::vector<EncodedPair> &pairs) {
  PairIds packed;
  for (const EncodedPair &pair : pairs)
    packed.add(pair.source, pair.target, pair.line);
  return packed;
}

void PairIds::add(const std::vector<int32_t> &source,
                  const std::vector<int32_t> &target, int64_t line) {
  ids_.insert(ids_.end(), source.begin(), source.end());
  offsets_.push_back(ids_.size());
  ids_.insert(ids_.end(), target.begin(), target.end());
  offsets_.push_back(ids_.size());
  lines_.push_back(line);
}

void PairIds::shrinkToFit() {
  ids_.shrink_to_fit();
  offsets_.shrink_to_fit();
  lines_.shrink_to_fit();
}

size_t PairIds::bytes() const {
  return ids_.capacity() * sizeof(int32_t) +
         offsets_.capacity() * sizeof(uint64_t) +
         lines_.capacity() * sizeof(int64_t);
}

} // namespace txrt::driver
