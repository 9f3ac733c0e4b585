//===- TokenBatches.h - batches by padded token count -----------*- C++ -*-===//
//
// `train --max-tokens N` cuts an epoch into batches whose padded size stays
// within N on every side: rows * longest row <= N for the source and for
// the target tensors alike (padding counted, what the compiled step really
// computes), and rows <= the bound of dim B. The epoch order is the same
// bucketing as fixed-row batches (Batching.h): shuffle from (seed, epoch),
// cut into pools, sort each pool by length, cut the pool greedily into
// batches here, shuffle the batches. The number of batches differs from
// epoch to epoch; BatchPlan counts them.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TOKENBATCHES_H
#define TXRT_DRIVER_TOKENBATCHES_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace txrt::driver {

/// Per-example tensor widths: (source, target) positions, as padded.
using ExampleLengths = std::vector<std::pair<int64_t, int64_t>>;

/// The padded tokens of the larger side of a batch of `rows` rows whose
/// longest rows are `longest` (a side is at least one position wide).
int64_t paddedTokens(int64_t rows, std::pair<int64_t, int64_t> longest);

/// Appends to `batches` the pool [first, last) (sorted by length) cut
/// greedily: a batch grows while its padded tokens stay within `maxTokens`
/// and its rows within `maxRows`.
void cutPoolByTokens(const size_t *first, const size_t *last,
                     const ExampleLengths &lengths, int64_t maxRows,
                     int64_t maxTokens,
                     std::vector<std::vector<size_t>> &batches);

/// InputError when an example alone exceeds `maxTokens`: names the flag,
/// the example and its size. `name(i)` names example i ("the pair at
/// train.tsv:5"); without it, "example i+1 of the training data".
void checkFitsMaxTokens(
    const ExampleLengths &lengths, int64_t maxTokens,
    const std::function<std::string(size_t)> &name = nullptr);

} // namespace txrt::driver

#endif // TXRT_DRIVER_TOKENBATCHES_H
