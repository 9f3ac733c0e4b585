//===- GradientExchange.h - accumulated gradients in allreduce buckets -*- C++ -*-===//
//
// What txrt_adam_step does outside TXRT_GRADIENTS_UPDATE mode. Each Adam
// site gets a slot in a bucket, in the order the train step first reaches
// the sites (the order gradients complete during the backward pass); a
// bucket holds sites until it has at least TXRT_BUCKET_MB (default 8) MB.
// ACCUMULATE adds scale * gradient into the slot. APPLY adds it too, and:
// with no communicator, runs Adam on the slot at once and clears it; with
// one, starts the bucket's allreduce as soon as its last site arrived
// (TXRT_ALLREDUCE_OVERLAP=0: only in finish()) and keeps the Adam update,
// which finish() runs after waiting for every bucket. A train step that
// clips its gradients keeps every update for finish() (with or without a
// communicator): the factor needs the norm of the whole summed gradient.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_GRADIENTEXCHANGE_H
#define TXRT_LIB_GRADIENTEXCHANGE_H

#include "txrt/txrt.h"

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace txrt {

/// Where each site's gradient lives: buckets of consecutive sites, filled
/// in arrival order, closed when the next site would pass the byte limit.
class BucketPlan {
public:
  struct Slot {
    int64_t bucket = 0;
    int64_t offset = 0; ///< in floats, within the bucket
    int64_t size = 0;
  };
  explicit BucketPlan(int64_t bucketFloats) : bucketFloats_(bucketFloats) {}
  /// TXRT_BUCKET_MB (default 8) in floats.
  static int64_t floatsFromEnvironment();
  /// The most floats a bucket of several sites holds (one larger site has a
  /// bucket of its own).
  int64_t bucketFloats() const { return bucketFloats_; }

  /// The slot of `site` (n floats), placed on first sight.
  const Slot &place(int64_t site, int64_t n);
  int64_t buckets() const { return int64_t(bucketSizes_.size()); }
  /// Floats in bucket b.
  int64_t bucketSize(int64_t b) const { return bucketSizes_[size_t(b)]; }
  /// Sites placed in bucket b.
  int64_t bucketSites(int64_t b) const { return bucketSiteCounts_[size_t(b)]; }
  /// Whether no later site can join bucket b (a later bucket exists).
  bool closed(int64_t b) const { return b + 1 < buckets(); }

private:
  int64_t bucketFloats_;
  std::map<int64_t, Slot> slots_;
  std::vector<int64_t> bucketSizes_;
  std::vector<int64_t> bucketSiteCounts_;
};

/// Whether buckets start as soon as they are complete (the default), or
/// all at the end of the update (TXRT_ALLREDUCE_OVERLAP=0).
bool allreduceOverlapFromEnvironment();

class GradientExchange {
public:
  GradientExchange();

  int32_t mode = TXRT_GRADIENTS_UPDATE;
  float scale = 1.0f;
  const txrt_communicator *communicator = nullptr;
  /// The bound on the whole update's gradient norm of a train step that
  /// clips (txrt_context_set_gradient_clip); 0: not set.
  float clip = 0.0f;

  /// The Adam update of one site given its summed gradient and the factor
  /// gradient clipping multiplies it by (NULL: none).
  using Update = std::function<void(const float *gradient,
                                    const float *clipScale)>;

  /// ACCUMULATE or APPLY for one site's gradient (n floats); `clips`: the
  /// train step clips its gradients (the update needs the norm of all).
  void add(int64_t site, int64_t n, const float *gradient, bool clips,
           Update update);
  /// Waits for the buckets in flight and runs the waiting updates; with
  /// clipping, first scales them by min(1, clip / (norm + 1e-6)), the norm
  /// of the whole summed gradient (every rank holds the same sums, so every
  /// rank computes the same factor).
  void finish();
  /// The clipping factor finish() last applied (1 when it did not clip).
  float lastClipScale = 1.0f;

  double waitSeconds = 0.0;
  int64_t bytesSent = 0;
  const BucketPlan &plan() const { return plan_; }

private:
  void start(int64_t bucket);
  void poll();

  BucketPlan plan_;
  bool overlap_ = true;
  std::vector<std::vector<float>> storage_;
  std::vector<int64_t> arrived_;
  std::vector<void *> requests_;
  std::vector<char> started_;
  std::vector<std::pair<BucketPlan::Slot, Update>> waiting_;
  bool clipping_ = false;
};

} // namespace txrt

#endif // TXRT_LIB_GRADIENTEXCHANGE_H
