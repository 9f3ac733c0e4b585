//===- TokenBatches.cpp - batches by padded token count -------------------===//
#include "data/TokenBatches.h"
#include "core/Error.h"
#include "data/TabbedLines.h"

#include <algorithm>
#include <string>

namespace txrt::driver {

int64_t paddedTokens(int64_t rows, std::pair<int64_t, int64_t> longest) {
  int64_t widest = std::max<int64_t>({longest.first, longest.second, 1});
  int64_t tokens = 0;
  if (__builtin_mul_overflow(rows, widest, &tokens))
    return INT64_MAX;
  return tokens;
}

void cutPoolByTokens(const size_t *first, const size_t *last,
                     const ExampleLengths &lengths, int64_t maxRows,
                     int64_t maxTokens,
                     std::vector<std::vector<size_t>> &batches) {
  std::vector<size_t> batch;
  std::pair<int64_t, int64_t> longest{0, 0};
  for (const size_t *it = first; it != last; ++it) {
    std::pair<int64_t, int64_t> grown{
        std::max(longest.first, lengths[*it].first),
        std::max(longest.second, lengths[*it].second)};
    int64_t rows = int64_t(batch.size()) + 1;
    if (!batch.empty() &&
        (rows > maxRows || paddedTokens(rows, grown) > maxTokens)) {
      batches.push_back(std::move(batch));
      batch.clear();
      grown = lengths[*it];
    }
    batch.push_back(*it);
    longest = grown;
  }
  if (!batch.empty())
    batches.push_back(std::move(batch));
}

void checkFitsMaxTokens(const ExampleLengths &lengths, int64_t maxTokens,
                        const std::function<std::string(size_t)> &name) {
  // Every such example, as the other data checks list theirs (it named
  // the first alone).
  ProblemList problems;
  for (size_t i = 0; i < lengths.size(); ++i)
    if (paddedTokens(1, lengths[i]) > maxTokens)
      problems.add(
          "--max-tokens " + std::to_string(maxTokens) + " is smaller than " +
          (name
               ? name(i)
               : "example " + std::to_string(i + 1) + " of the training data") +
          ", which alone takes " + std::to_string(paddedTokens(1, lengths[i])) +
          " positions" +
          (lengths[i].second == 0
               ? std::string() // one sequence (a classifier's text)
               : " (" + std::to_string(lengths[i].first) + " source, " +
                     std::to_string(lengths[i].second) + " target)") +
          "; raise --max-tokens or remove the example");
  problems.throwIfAny("examples larger than --max-tokens");
}

} // namespace txrt::driver
