//===- GradientExchange.cpp - accumulated gradients in allreduce buckets ---===//
#include "GradientExchange.h"
#include "Context.h"
#include "Kernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

namespace txrt {

// A value that cannot be read is an error when the context is created (it
// was ignored without a word: the default taken), as TXRT_NUM_THREADS's is.
int64_t BucketPlan::floatsFromEnvironment() {
  double megabytes = 8.0;
  // Empty is unset, as for every TXRT_ variable (TXRT_NUM_THREADS= ran on
  // every core, TXRT_BUCKET_MB= was an error).
  if (const char *env = std::getenv("TXRT_BUCKET_MB"); env && *env) {
    char *end = nullptr;
    megabytes = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(megabytes > 0) || megabytes > 65536)
      throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                  std::string("TXRT_BUCKET_MB='") + env +
                      "' is not a size in megabytes in (0, 65536] (the "
                      "gradients' allreduce buckets; default 8)");
  }
  return std::max<int64_t>(1, int64_t(megabytes * (1 << 20) / sizeof(float)));
}

bool allreduceOverlapFromEnvironment() {
  const char *env = std::getenv("TXRT_ALLREDUCE_OVERLAP");
  if (env && !*env)
    env = nullptr; // empty is unset
  if (env && std::string(env) != "0" && std::string(env) != "1")
    throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                std::string("TXRT_ALLREDUCE_OVERLAP='") + env +
                    "' is not 0 or 1 (1, the default, overlaps the "
                    "gradients' allreduce with the backward)");
  return !env || std::string(env) != "0";
}

namespace {

void check(int32_t status, const char *what) {
  if (status != 0)
    throw Error(TXRT_ERROR_BACKEND,
                std::string("the communicator's ") + what + " failed (" +
                    std::to_string(status) + ")");
}

/// sum[i] += factor * gradient[i] with the product rounded before the sum
/// (no FMA contraction): a bucket of one call then holds round(factor * g),
/// and the allreduce of two ranks adds two rounded products, as one process
/// with two micro-batches does, so both give the same bits.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void accumulateScaled(float *sum, const float *gradient, float factor,
                      int64_t n) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  for (int64_t i = 0; i < n; ++i)
    sum[i] += factor * gradient[i];
}

} // namespace

const BucketPlan::Slot &BucketPlan::place(int64_t site, int64_t n) {
  auto it = slots_.find(site);
  if (it != slots_.end()) {
    require(it->second.size == n,
            "an Adam site's gradient changed size between calls");
    return it->second;
  }
  if (bucketSizes_.empty() ||
      (bucketSizes_.back() > 0 && bucketSizes_.back() + n > bucketFloats_)) {
    bucketSizes_.push_back(0);
    bucketSiteCounts_.push_back(0);
  }
  Slot slot{buckets() - 1, bucketSizes_.back(), n};
  bucketSizes_.back() += n;
  ++bucketSiteCounts_.back();
  return slots_.emplace(site, slot).first->second;
}

GradientExchange::GradientExchange()
    : plan_(BucketPlan::floatsFromEnvironment()),
      overlap_(allreduceOverlapFromEnvironment()) {}

void GradientExchange::add(int64_t site, int64_t n, const float *gradient,
                           bool clips, Update update) {
  require(n >= 0 && (gradient || n == 0),
          "the gradient must not be NULL");
  require(!clips || clip > 0.0f,
          "gradient clipping over accumulated or exchanged gradients needs "
          "the bound (txrt_context_set_gradient_clip)");
  int64_t before = plan_.buckets();
  BucketPlan::Slot slot = plan_.place(site, n);
  for (int64_t b = int64_t(storage_.size()); b < plan_.buckets(); ++b) {
    storage_.emplace_back();
    arrived_.push_back(0);
    requests_.push_back(nullptr);
    started_.push_back(0);
  }
  std::vector<float> &bucket = storage_[size_t(slot.bucket)];
  if (int64_t(bucket.size()) < plan_.bucketSize(slot.bucket))
    bucket.resize(size_t(plan_.bucketSize(slot.bucket)), 0.0f);
  float *sum = bucket.data() + slot.offset;
  accumulateScaled(sum, gradient, scale, n);
  if (mode != TXRT_GRADIENTS_APPLY)
    return;
  if (!communicator && !clips) {
    update(sum, nullptr);
    std::fill(sum, sum + n, 0.0f);
    return;
  }
  clipping_ = clipping_ || clips;
  waiting_.emplace_back(slot, std::move(update));
  if (!communicator)
    return;
  ++arrived_[size_t(slot.bucket)];
  if (overlap_) {
    // A new bucket closes the one before it (first update only).
    if (plan_.buckets() > before && slot.bucket > 0 &&
        !started_[size_t(slot.bucket - 1)] &&
        arrived_[size_t(slot.bucket - 1)] ==
            plan_.bucketSites(slot.bucket - 1))
      start(slot.bucket - 1);
    if (plan_.closed(slot.bucket) &&
        arrived_[size_t(slot.bucket)] == plan_.bucketSites(slot.bucket))
      start(slot.bucket);
    poll();
  }
}

void GradientExchange::start(int64_t b) {
  std::vector<float> &bucket = storage_[size_t(b)];
  void *request = nullptr;
  check(communicator->allreduce_start(communicator->state, bucket.data(),
                                      int64_t(bucket.size()), &request),
        "allreduce start");
  requests_[size_t(b)] = request;
  started_[size_t(b)] = 1;
  bytesSent += int64_t(bucket.size() * sizeof(float));
}

void GradientExchange::poll() {
  // MPI progresses nonblocking collectives inside MPI calls: test the
  // buckets in flight so they move while the backward pass runs.
  for (size_t b = 0; b < requests_.size(); ++b) {
    if (!started_[b] || !requests_[b])
      continue;
    int32_t done = 0;
    check(communicator->allreduce_test(communicator->state, requests_[b],
                                       &done),
          "allreduce test");
    if (done)
      requests_[b] = nullptr;
  }
}

void GradientExchange::finish() {
  if (waiting_.empty())
    return;
  if (communicator) {
    for (int64_t b = 0; b < plan_.buckets(); ++b)
      if (!started_[size_t(b)])
        start(b);
    auto begin = std::chrono::steady_clock::now();
    for (size_t b = 0; b < requests_.size(); ++b)
      if (requests_[b]) {
        check(communicator->allreduce_wait(communicator->state, requests_[b]),
              "allreduce wait");
        requests_[b] = nullptr;
      }
    waitSeconds += std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
  }
  const float *clipScale = nullptr;
  lastClipScale = 1.0f;
  if (clipping_) {
    // The norm of the whole gradient, in the sites' order (the same on
    // every rank), as the compiled step computes it for one batch
    // (txrt_sum_squares): each tensor's squares summed in double, the
    // tensors' sums in f32, whose overflow makes the norm inf and the
    // factor 0 as torch's clip_grad_norm_ does (a sum in double kept it
    // finite: --update-freq trained where one batch of the same examples
    // did not). Then min(1, clip / (norm + 1e-6)).
    float squares = 0.0f;
    for (const auto &[slot, update] : waiting_) {
      const float *sum = storage_[size_t(slot.bucket)].data() + slot.offset;
      double tensor = 0.0;
      for (int64_t i = 0; i < slot.size; ++i)
        tensor += double(sum[i]) * double(sum[i]);
      squares += float(tensor);
    }
    lastClipScale = std::min(1.0f, clip / (std::sqrt(squares) + 1e-6f));
    clipScale = &lastClipScale;
  }
  for (auto &[slot, update] : waiting_)
    update(storage_[size_t(slot.bucket)].data() + slot.offset, clipScale);
  waiting_.clear();
  clipping_ = false;
  for (size_t b = 0; b < storage_.size(); ++b) {
    std::fill(storage_[b].begin(), storage_[b].end(), 0.0f);
    arrived_[b] = 0;
    started_[b] = 0;
  }
}

} // namespace txrt

using namespace txrt;

extern "C" {

txrt_status txrt_context_set_gradient_mode(txrt_context *ctx, int32_t mode,
                                           float scale) {
  return runKernel(
      ctx, "txrt_context_set_gradient_mode",
      [&] { return std::string("mode ") + std::to_string(mode); },
      [&](Context &c) {
        require(mode == TXRT_GRADIENTS_UPDATE ||
                    mode == TXRT_GRADIENTS_ACCUMULATE ||
                    mode == TXRT_GRADIENTS_APPLY,
                "mode must be TXRT_GRADIENTS_UPDATE, _ACCUMULATE or _APPLY");
        c.gradients.mode = mode;
        c.gradients.scale = scale;
      });
}

txrt_status txrt_context_set_gradient_clip(txrt_context *ctx, float clip) {
  return runKernel(
      ctx, "txrt_context_set_gradient_clip",
      [&] { return std::string("clip ") + std::to_string(clip); },
      [&](Context &c) {
        require(clip >= 0.0f && std::isfinite(clip),
                "clip must be a finite number >= 0");
        c.gradients.clip = clip;
      });
}

void txrt_context_set_communicator(txrt_context *ctx,
                                   const txrt_communicator *communicator) {
  if (ctx)
    ctx->gradients.communicator = communicator;
}

txrt_status txrt_context_finish_update(txrt_context *ctx) {
  return runKernel(
      ctx, "txrt_context_finish_update", [&] { return std::string(); },
      [&](Context &c) { c.gradients.finish(); });
}

void txrt_context_allreduce_stats(const txrt_context *ctx,
                                  double *out_wait_seconds,
                                  int64_t *out_bytes) {
  if (out_wait_seconds)
    *out_wait_seconds = ctx ? ctx->gradients.waitSeconds : 0.0;
  if (out_bytes)
    *out_bytes = ctx ? ctx->gradients.bytesSent : 0;
}

} // extern "C"
