//===- Sampling.h - next-token choice: greedy, temperature, top-k, top-p -*- C++ -*-===//
//
// How `generate` picks the next token from a row of logits:
//
//   temperature 0   the argmax (ties: the lowest id); top-k and top-p unused.
//   temperature t   softmax(logits / t) restricted to the k most likely ids
//                   (--top-k, 0: all), then to the smallest set of the most
//                   likely ids whose probability reaches p (--top-p, 1: all;
//                   the most likely id always stays), renormalized; one draw.
//
// Ids are ranked by logit, ties by the lower id, so the candidate set is a
// pure function of the logits. The draw for (row, position) is a pure
// function of (seed, row, position): the same seed gives the same text,
// however the rows were batched or whether a KV cache was used.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_SAMPLING_H
#define TXRT_DRIVER_SAMPLING_H

#include <cstdint>
#include <utility>
#include <vector>

namespace txrt::driver {

struct SamplingOptions {
  double temperature = 0.0; ///< 0: greedy
  int64_t topK = 0;         ///< 0: no limit
  double topP = 1.0;        ///< in (0, 1]
  uint64_t seed = 0;
};

/// The ids a draw may pick and their probabilities (summing to 1), most
/// likely first; at temperature 0 the argmax alone with probability 1.
std::vector<std::pair<int32_t, double>>
samplingDistribution(const float *logits, int64_t vocab,
                     const SamplingOptions &options);

/// A uniform double in [0, 1) from (seed, row, position).
double uniformDraw(uint64_t seed, uint64_t row, uint64_t position);

/// The id picked for `row` at generated `position` (0-based): the draw
/// walks samplingDistribution's candidates in id order, not most likely
/// first, so logits that differ in their last bits (a sentence alone or
/// in a batch, where a CPU's products round by the number of rows) pick
/// another id only when the draw falls within that difference of a
/// boundary; in likelihood order, two near-tied ids swapped places and
/// the same draw fell on the other one.
int32_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingOptions &options, uint64_t row,
                    uint64_t position);

} // namespace txrt::driver

#endif // TXRT_DRIVER_SAMPLING_H
