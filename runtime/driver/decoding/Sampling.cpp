//===- Sampling.cpp - next-token choice: greedy, temperature, top-k, top-p ===//
//
// See Sampling.h. The generator is SplitMix64's finalizer over a key mixed
// from (seed, row, position): counter-based, so no state is carried.
//
//===----------------------------------------------------------------------===//
#include "decoding/Sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace txrt::driver {

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int32_t argmax(const float *logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t id = 1; id < vocab; ++id)
    if (logits[id] > logits[best])
      best = id;
  return int32_t(best);
}

} // namespace

double uniformDraw(uint64_t seed, uint64_t row, uint64_t position) {
  uint64_t bits = mix(mix(mix(seed) ^ row) ^ position);
  return double(bits >> 11) * 0x1.0p-53;
}

std::vector<std::pair<int32_t, double>>
samplingDistribution(const float *logits, int64_t vocab,
                     const SamplingOptions &options) {
  if (options.temperature <= 0.0 || vocab == 1)
    return {{argmax(logits, vocab), 1.0}};
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  size_t keep = size_t(vocab);
  if (options.topK > 0 && options.topK < vocab)
    keep = size_t(options.topK);
  auto moreLikely = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                    moreLikely);
  // Every id tied with the K-th stays, as Hugging Face's top-k keeps each
  // logit >= the K-th largest (K of them were kept, the lowest ids, and
  // --top-k 1 over tied ids always gave the lowest).
  if (keep < size_t(vocab)) {
    const float kth = logits[order[keep - 1]];
    size_t tied = keep;
    for (size_t i = keep; i < order.size(); ++i)
      if (logits[order[i]] == kth)
        std::swap(order[tied++], order[i]);
    std::sort(order.begin() + keep, order.begin() + tied);
    keep = tied;
  }
  order.resize(keep);
  // Ids at -infinity (never to be picked) have no probability; the most
  // likely id stays.
  while (order.size() > 1 && std::isinf(logits[order.back()]) &&
         logits[order.back()] < 0)
    order.pop_back();
  std::vector<std::pair<int32_t, double>> out;
  out.reserve(keep);
  // Differences first, then the temperature: logit / T overflows for a
  // tiny T (1e-308 made every weight inf - inf = NaN, and the draw fell
  // through to the least likely id); (logit - top) / T only goes to -inf.
  const double top = double(logits[order[0]]);
  double total = 0.0;
  for (int32_t id : order) {
    double difference = double(logits[id]) - top;
    // An id tied with an infinite top: as likely as the top.
    if (std::isnan(difference))
      difference = 0.0;
    double weight = std::exp(difference / options.temperature);
    out.emplace_back(id, weight);
    total += weight;
  }
  for (auto &entry : out)
    entry.second /= total;
  if (options.topP < 1.0) {
    double cumulative = 0.0;
    size_t nucleus = 0;
    while (nucleus < out.size()) {
      cumulative += out[nucleus++].second;
      if (cumulative >= options.topP)
        break;
    }
    out.resize(nucleus);
    for (auto &entry : out)
      entry.second /= cumulative;
  }
  return out;
}

int32_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingOptions &options, uint64_t row,
                    uint64_t position) {
  if (options.temperature <= 0.0)
    return argmax(logits, vocab);
  std::vector<std::pair<int32_t, double>> candidates =
      samplingDistribution(logits, vocab, options);
  std::sort(candidates.begin(), candidates.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  double draw = uniformDraw(options.seed, row, position), cumulative = 0.0;
  for (const auto &[id, probability] : candidates) {
    cumulative += probability;
    if (draw < cumulative)
      return id;
  }
  return candidates.back().first;
}

} // namespace txrt::driver
