//===- lm_step_harness.cpp - lm_step with a carried KV cache vs logits ----===//
//
// Links a language model compiled with `txc --emit=obj` (model.h) and checks
// that generating with the KV cache computes what the full forward pass
// does: a batch of left-padded sequences goes through `logits` whole, then
// through `lm_step`, first the prompt (T = PROMPT) and then one position at a
// time, with the caches carried from call to call (grown by one row each
// time, as a driver does). Every non-pad position's logits must agree within
// 1e-5 (relative to max(1, |logit|)).
//
// Built by test/E2E/lm-step.test with -DNUM_CACHES, -DCACHE_WIDTH (the width
// of every cache: d, or kv_heads * d_k with GQA) and -DVOCAB.
//
//===----------------------------------------------------------------------===//
#include "model.h"
#include "txrt/txrt.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void *alignedAlloc(size_t bytes) {
  void *memory = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory)
    std::memset(memory, 0, bytes);
  return memory;
}

constexpr int64_t kBatch = 3, kLength = 7, kPrompt = 3;
constexpr int64_t kRealLengths[kBatch] = {7, 4, 2}; // the rest is left pad

} // namespace

int main() {
  txrt_context *ctx = nullptr;
  if (txrt_context_create(&ctx) != TXRT_OK)
    return 1;
  auto *params = static_cast<float *>(alignedAlloc(TXC_PARAM_ARENA_BYTES));
  void *arena = alignedAlloc(
      std::max<size_t>(TXC_LOGITS_ARENA_BYTES, TXC_LM_STEP_ARENA_BYTES));
  uint32_t state = 12345;
  for (size_t i = 0; i < TXC_PARAM_ARENA_BYTES / sizeof(float); ++i) {
    state = state * 1664525u + 1013904223u;
    params[i] = 0.2f * (float(state >> 8) / float(1u << 24)) - 0.1f;
  }
  // Left-padded ids (pad = 0), real ids in 1 .. VOCAB-1.
  std::vector<int32_t> ids(kBatch * kLength, 0);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = kLength - kRealLengths[b]; t < kLength; ++t)
      ids[b * kLength + t] = int32_t(1 + (b * 31 + t * 17) % (VOCAB - 1));
  auto isPad = [&](int64_t b, int64_t t) {
    return t < kLength - kRealLengths[b];
  };

  std::vector<float> full(kBatch * kLength * VOCAB);
  {
    const int64_t dims[] = {kBatch, kLength, 1};
    void *inputs[] = {ids.data()};
    void *outputs[] = {full.data()};
    if (txc_entry_logits(ctx, params, arena, dims, inputs, outputs) != 0) {
      std::fprintf(stderr, "logits: %s\n", txrt_last_error(ctx));
      return 1;
    }
  }

  std::vector<std::vector<float>> caches(NUM_CACHES);
  double worst = 0;
  int64_t compared = 0, steps = 0;
  for (int64_t start = 0; start < kLength;) {
    int64_t count = start == 0 ? kPrompt : 1, cache = start + count;
    // Grow every cache to `cache` rows, keeping the rows so far.
    for (std::vector<float> &old : caches) {
      std::vector<float> grown(kBatch * cache * CACHE_WIDTH, 0.0f);
      for (int64_t b = 0; b < kBatch; ++b)
        std::copy_n(old.data() + b * start * CACHE_WIDTH, start * CACHE_WIDTH,
                    grown.data() + b * cache * CACHE_WIDTH);
      old.swap(grown);
    }
    std::vector<int32_t> tokens(kBatch * count), cacheIds(kBatch * cache);
    for (int64_t b = 0; b < kBatch; ++b) {
      std::copy_n(&ids[b * kLength + start], count, &tokens[b * count]);
      std::copy_n(&ids[b * kLength], cache, &cacheIds[b * cache]);
    }
    std::vector<float> logits(kBatch * count * VOCAB);
    std::vector<void *> inputs = {tokens.data(), cacheIds.data()};
    for (std::vector<float> &c : caches)
      inputs.push_back(c.data());
    void *outputs[] = {logits.data()};
    const int64_t dims[] = {kBatch, count, cache};
    if (txc_entry_lm_step(ctx, params, arena, dims, inputs.data(), outputs) !=
        0) {
      std::fprintf(stderr, "lm_step: %s\n", txrt_last_error(ctx));
      return 1;
    }
    ++steps;
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t i = 0; i < count; ++i) {
        if (isPad(b, start + i))
          continue;
        for (int64_t v = 0; v < VOCAB; ++v) {
          float want = full[(b * kLength + start + i) * VOCAB + v];
          float got = logits[(b * count + i) * VOCAB + v];
          double error = std::fabs(double(got) - double(want)) /
                         std::max(1.0, std::fabs(double(want)));
          if (!(error <= worst))
            worst = std::isnan(error) ? INFINITY : error;
        }
        ++compared;
      }
    start = cache;
  }
  bool ok = worst <= 1e-5;
  std::printf("lm_step: %lld calls, %lld positions compared, max relative "
              "error %.2e: %s\n",
              (long long)steps, (long long)compared, worst,
              ok ? "ok" : "MISMATCH");
  std::free(params);
  std::free(arena);
  txrt_context_destroy(ctx);
  return ok ? 0 : 1;
}
