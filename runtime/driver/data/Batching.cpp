//===- Batching.cpp - deterministic, length-bucketed batches --------------===//
#include "data/Batching.h"
#include "core/Init.h"

#include <algorithm>
#include <numeric>

namespace txrt::driver {

uint64_t uniformBelow(uint64_t key, uint64_t index, uint64_t n) {
  // Lemire's multiply-shift: the high 64 bits of bits * n.
  unsigned __int128 product =
      static_cast<unsigned __int128>(randomBits(key, index)) * n;
  return uint64_t(product >> 64);
}

namespace {

template <typename T>
void shuffle(std::vector<T> &items, uint64_t key) {
  for (size_t i = items.size(); i > 1; --i) {
    size_t j = size_t(uniformBelow(key, i, i));
    std::swap(items[i - 1], items[j]);
  }
}

uint64_t streamKey(uint64_t seed, int64_t epoch, const char *purpose) {
  return initStreamKey(mix64(seed) ^ uint64_t(epoch), purpose);
}

} // namespace

BatchPlan::BatchPlan(std::vector<std::pair<int64_t, int64_t>> lengths,
                     int64_t batchSize, uint64_t seed, LastBatch last)
    : lengths_(std::move(lengths)), batchSize_(std::max<int64_t>(batchSize, 1)),
      fullBatches_(last == LastBatch::Completed), seed_(seed) {
  // Windows are whole multiples of the batch size, so only the last window
  // of an epoch can give a partial batch.
  // n / b rounded up, without n + b - 1 (b may be a huge bound).
  int64_t n = int64_t(lengths_.size());
  batchesPerEpoch_ = n / batchSize_ + (n % batchSize_ != 0);
}

BatchPlan::BatchPlan(std::vector<std::pair<int64_t, int64_t>> lengths,
                     int64_t maxRows, int64_t maxTokens, uint64_t seed)
    : BatchPlan(std::move(lengths), maxRows, seed) {
  checkFitsMaxTokens(lengths_, maxTokens);
  maxTokens_ = maxTokens;
}

int64_t BatchPlan::batchesInEpoch(int64_t epoch) const {
  if (!maxTokens_)
    return batchesPerEpoch_;
  while (int64_t(epochCounts_.size()) <= epoch)
    epochCounts_.push_back(
        int64_t(this->epoch(int64_t(epochCounts_.size())).size()));
  return epochCounts_[size_t(epoch)];
}

bool BatchPlan::stepsOfEpochs(int64_t epochs, int64_t limit,
                              int64_t &steps) const {
  // The updates through the end of epoch `epochs`, less the offset.
  int64_t total = 0;
  if (!maxTokens_) {
    if (__builtin_mul_overflow(epochs, batchesPerEpoch_, &total))
      return false;
  } else {
    for (int64_t epoch = 0; epoch < epochs; ++epoch) {
      total += batchesInEpoch(epoch);
      if (total - stepOffset_ > limit)
        return false;
    }
  }
  steps = std::max<int64_t>(total - stepOffset_, 0);
  return steps <= limit;
}

std::vector<std::vector<size_t>> BatchPlan::epoch(int64_t epoch) const {
  std::vector<size_t> order(lengths_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  shuffle(order, streamKey(seed_, epoch, "examples"));
  const std::vector<size_t> shuffled =
      fullBatches_ ? order : std::vector<size_t>();

  // kBucketWindowBatches batches, at most the whole epoch (and never 0,
  // which a wrapped batch * 16 would give).
  uint64_t window = 0;
  if (__builtin_mul_overflow(uint64_t(batchSize_),
                             uint64_t(kBucketWindowBatches), &window) ||
      window > order.size())
    window = order.size();
  window = std::max<uint64_t>(window, 1);
  // Token batches: windows of kBucketWindowBatches token budgets (the
  // examples' own padded tokens), not of the row bound, which
  // --update-freq K multiplies: `--max-tokens N --update-freq K` sorted in
  // windows K times larger than `--max-tokens K*N` and trained on other
  // batches.
  auto windowEnd = [&](size_t begin) {
    if (!maxTokens_)
      return std::min(order.size(), begin + window);
    int64_t budget = 0, tokens = 0;
    if (__builtin_mul_overflow(maxTokens_, kBucketWindowBatches, &budget))
      return order.size();
    size_t end = begin;
    while (end < order.size() && tokens < budget)
      tokens += paddedTokens(1, lengths_[order[end++]]);
    return end;
  };
  std::vector<std::vector<size_t>> batches;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {
    end = windowEnd(begin);
    auto first = order.begin() + std::ptrdiff_t(begin);
    auto last = order.begin() + std::ptrdiff_t(end);
    std::stable_sort(first, last, [&](size_t a, size_t b) {
      return lengths_[a] < lengths_[b];
    });
    if (maxTokens_) {
      cutPoolByTokens(&*first, &*first + (last - first), lengths_, batchSize_,
                      maxTokens_, batches);
      continue;
    }
    for (auto it = first; it < last; it += std::min<std::ptrdiff_t>(
                                         batchSize_, last - it))
      batches.emplace_back(it, it + std::min<std::ptrdiff_t>(batchSize_,
                                                               last - it));
  }
  if (fullBatches_ && !batches.empty())
    completeBatch(batches.back(), shuffled);
  shuffle(batches, streamKey(seed_, epoch, "batches"));
  return batches;
}

void BatchPlan::completeBatch(std::vector<size_t> &batch,
                              const std::vector<size_t> &shuffled) const {
  if (int64_t(batch.size()) >= batchSize_ || shuffled.empty())
    return;
  // Examples the batch does not hold, in the epoch's shuffled order; with
  // fewer examples than a batch, all of them again.
  const bool repeat = int64_t(shuffled.size()) < batchSize_;
  std::vector<bool> held(lengths_.size(), false);
  for (size_t index : batch)
    held[index] = true;
  for (size_t i = 0; int64_t(batch.size()) < batchSize_;
       i = (i + 1) % shuffled.size())
    if (repeat || !held[shuffled[i]]) {
      held[shuffled[i]] = true;
      batch.push_back(shuffled[i]);
    }
}

std::pair<int64_t, int64_t> BatchPlan::positionOfStep(int64_t step) const {
  int64_t index = std::max<int64_t>(step + stepOffset_, 1) - 1;
  if (!maxTokens_)
    return {index / batchesPerEpoch_, index % batchesPerEpoch_};
  // Token batches: count the epochs before (each one's order is a pure
  // function of (seed, epoch), so a resumed run finds the same position).
  int64_t epoch = 0;
  while (index >= batchesInEpoch(epoch))
    index -= batchesInEpoch(epoch++);
  return {epoch, index};
}

BatchPlan BatchPlan::rebatched(int64_t batchSize, int64_t maxTokens,
                               uint64_t seed) const {
  if (maxTokens > 0)
    return BatchPlan(lengths_, batchSize, maxTokens, seed);
  return BatchPlan(lengths_, batchSize, seed,
                   fullBatches_ ? LastBatch::Completed : LastBatch::MayBeShort);
}

std::vector<char> examplesOfBatches(const BatchPlan &plan, int64_t epoch,
                                    int64_t first, int64_t last) {
  std::vector<char> marks(plan.examples(), 0);
  const std::vector<std::vector<size_t>> batches = plan.epoch(epoch);
  last = std::min<int64_t>(last, int64_t(batches.size()));
  for (int64_t b = std::max<int64_t>(first, 0); b < last; ++b)
    for (size_t example : batches[size_t(b)])
      if (example < marks.size())
        marks[example] = 1;
  return marks;
}

int64_t resumedBatchIndex(const std::vector<char> &seen, int64_t epoch,
                          const BatchPlan &now, const std::string &unit,
                          std::string &change) {
  change.clear();
  const size_t count = now.examples();
  auto wasSeen = [&](size_t example) {
    return example < seen.size() && seen[example];
  };
  int64_t seenCount = 0;
  for (size_t i = 0; i < count; ++i)
    seenCount += wasSeen(i);
  if (seenCount == 0)
    return 0; // the new cut's whole epoch: each example once
  // Going on at batch j of the new cut shows batches j.. of the epoch:
  // examples seen come twice, those of batches before j that were not
  // seen never. Moving j past a batch changes that count by its unseen
  // less its seen.
  const std::vector<std::vector<size_t>> batches = now.epoch(epoch);
  int64_t best = 0, bestCost = seenCount, cost = seenCount;
  int64_t again = seenCount, never = 0, bestAgain = again, bestNever = 0;
  std::vector<char> passed(count, 0);
  for (int64_t j = 0; j < int64_t(batches.size()); ++j) {
    for (size_t example : batches[size_t(j)]) {
      if (example >= count || passed[example])
        continue; // (a completed batch's repeat)
      passed[example] = 1;
      if (wasSeen(example)) {
        --again;
        --cost;
      } else {
        ++never;
        ++cost;
      }
    }
    if (cost < bestCost) {
      best = j + 1;
      bestCost = cost;
      bestAgain = again;
      bestNever = never;
    }
  }
  if (bestCost > 0)
    change = "of epoch " + std::to_string(epoch + 1) + "'s " +
             std::to_string(count) + " " + unit + ", " +
             std::to_string(bestAgain) +
             " the run so far trained on come again before it ends, and " +
             std::to_string(bestNever) + " it had not reached are skipped";
  return best;
}

int64_t BatchPlan::stepOfPosition(int64_t epoch, int64_t index) const {
  int64_t step = index + 1;
  if (!maxTokens_)
    step += epoch * batchesPerEpoch_;
  else
    for (int64_t e = 0; e < epoch; ++e)
      step += batchesInEpoch(e);
  return step - stepOffset_;
}

Tensor padSequences(const std::vector<std::vector<int32_t>> &sequences,
                    int32_t pad, int64_t minLength) {
  int64_t longest = minLength;
  for (const auto &sequence : sequences)
    longest = std::max(longest, int64_t(sequence.size()));
  Tensor tensor(DType::I32, {int64_t(sequences.size()), longest});
  int32_t *ids = tensor.as<int32_t>();
  std::fill(ids, ids + tensor.numElements(), pad);
  for (size_t row = 0; row < sequences.size(); ++row)
    std::copy(sequences[row].begin(), sequences[row].end(),
              ids + int64_t(row) * longest);
  return tensor;
}

Tensor padIdsTo(Tensor ids, int32_t pad, int64_t rows, int64_t length) {
  const int64_t haveRows = ids.shape[0], haveLength = ids.shape[1];
  if (haveRows >= rows && haveLength >= length)
    return ids;
  const int64_t width = std::max(haveLength, length);
  Tensor grown(DType::I32, {std::max(haveRows, rows), width});
  int32_t *to = grown.as<int32_t>();
  std::fill(to, to + grown.numElements(), pad);
  const int32_t *from = ids.as<int32_t>();
  for (int64_t row = 0; row < haveRows; ++row)
    std::copy_n(from + row * haveLength, haveLength, to + row * width);
  return grown;
}

void padBatchRows(Batch &batch, int32_t pad, int64_t rows) {
  batch.src = padIdsTo(std::move(batch.src), pad, rows);
  batch.tgtIn = padIdsTo(std::move(batch.tgtIn), pad, rows);
  batch.tgtOut = padIdsTo(std::move(batch.tgtOut), pad, rows);
}

Batch makeBatch(const PairIds &pairs, const std::vector<size_t> &indices,
                const Vocabulary &target, int32_t pad, int64_t sourceLength,
                int64_t targetLength) {
  std::vector<std::vector<int32_t>> src, tgtIn, tgtOut;
  Batch batch;
  for (size_t index : indices) {
    IdSpan source = pairs.source(index), words = pairs.target(index);
    src.push_back(source.toVector());
    std::vector<int32_t> in = {target.sosId()};
    in.insert(in.end(), words.begin(), words.end());
    std::vector<int32_t> out = words.toVector();
    out.push_back(target.eosId());
    tgtIn.push_back(std::move(in));
    tgtOut.push_back(std::move(out));
    batch.sourceTokens += int64_t(source.size());
    batch.targetTokens += int64_t(words.size()) + 1;
  }
  batch.src = padSequences(src, pad, sourceLength);
  batch.tgtIn = padSequences(tgtIn, pad, targetLength);
  batch.tgtOut = padSequences(tgtOut, pad, targetLength);
  return batch;
}

Batch makeBatch(const std::vector<EncodedPair> &pairs,
                const std::vector<size_t> &indices, const Vocabulary &target,
                int32_t pad, int64_t sourceLength, int64_t targetLength) {
  PairIds chosen;
  for (size_t index : indices)
    chosen.add(pairs[index].source, pairs[index].target, pairs[index].line);
  std::vector<size_t> all(indices.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  return makeBatch(chosen, all, target, pad, sourceLength, targetLength);
}

} // namespace txrt::driver
