//===- Context.h - txrt_context: engine, threads, caches --------*- C++ -*-===//
//
// The context every ABI call receives: the oneDNN engine and per-thread
// streams, the thread count, per-thread workspaces, and the per-call-site
// cache of primitives (site + kernel + concrete shape -> entry, built once).
// Also the error type that kernels throw and runKernel turns into a status.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_CONTEXT_H
#define TXRT_LIB_CONTEXT_H

#include "GradientExchange.h"
#include "PackedWeights.h"
#include "txrt/txrt.h"

#include <dnnl.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace txrt {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// An error a kernel reports; runKernel turns it into a status and message.
class Error : public std::runtime_error {
public:
  Error(txrt_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  txrt_status status() const { return status_; }

private:
  txrt_status status_;
};

/// Throws TXRT_ERROR_INVALID_ARGUMENT with `message` unless `condition`.
inline void require(bool condition, const char *message) {
  if (!condition)
    throw Error(TXRT_ERROR_INVALID_ARGUMENT, message);
}
inline void require(bool condition, const std::string &message) {
  if (!condition)
    throw Error(TXRT_ERROR_INVALID_ARGUMENT, message);
}

//===----------------------------------------------------------------------===//
// Aligned growable buffers
//===----------------------------------------------------------------------===//

/// A 64-byte aligned buffer that only grows; contents are not preserved.
class Workspace {
public:
  Workspace() = default;
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;
  Workspace(Workspace &&other) noexcept { *this = std::move(other); }
  Workspace &operator=(Workspace &&other) noexcept;
  ~Workspace();

  /// A buffer of at least `bytes` bytes (64-byte aligned).
  void *get(size_t bytes);
  template <typename T> T *as(size_t count) {
    return static_cast<T *>(get(count * sizeof(T)));
  }

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};

//===----------------------------------------------------------------------===//
// The primitive cache
//===----------------------------------------------------------------------===//

/// Identifies one cache entry: the call site, the kernel (a small tag) and
/// the values that make the entry's primitives concrete (dims, strides,
/// flags, float attributes by their bits).
class CacheKey {
public:
  static constexpr int kMaxValues = 40;
  CacheKey(int64_t site, int32_t kernel) : site_(site), kernel_(kernel) {}

  CacheKey &operator<<(int64_t value);
  CacheKey &operator<<(float value);
  CacheKey &operator<<(const void *pointerIsSet) {
    return *this << int64_t(pointerIsSet != nullptr);
  }

  bool operator==(const CacheKey &other) const;
  size_t hash() const;

private:
  int64_t site_;
  int32_t kernel_;
  int32_t count_ = 0;
  std::array<int64_t, kMaxValues> values_{};
};

struct CacheKeyHash {
  size_t operator()(const CacheKey &key) const { return key.hash(); }
};

/// Base of everything stored in the cache.
struct CacheEntry {
  virtual ~CacheEntry() = default;
};

/// Kernel tags of cache keys (one per kind of entry).
enum class Kernel : int32_t {
  Matmul = 1,
  LinearBwdData,
  LinearBwdWeights,
  LayerNormFwd,
  SoftmaxFwd,
  SoftmaxBwd,
  EltwiseFwd,
  EltwiseBwd,
  Binary,
  Reduce,
};

} // namespace txrt

//===----------------------------------------------------------------------===//
// txrt_context
//===----------------------------------------------------------------------===//

struct txrt_context {
  explicit txrt_context(int numThreads);
  txrt_context(const txrt_context &) = delete;
  txrt_context &operator=(const txrt_context &) = delete;

  int numThreads() const { return numThreads_; }
  /// The TXRT_DENORMALS_* mode (Denormals.h): whether kernels compute with
  /// FTZ and DAZ set, and whether Adam flushes its moments.
  int denormalMode() const { return denormalMode_; }
  bool flushDenormals() const {
    return denormalMode_ == TXRT_DENORMALS_FLUSH_ALL;
  }
  bool flushMoments() const { return denormalMode_ != TXRT_DENORMALS_KEEP; }
  /// Changes the mode and applies it to the worker threads at once.
  void setDenormalMode(int mode);
  const dnnl::engine &engine() const { return engine_; }
  /// The stream a kernel running on OpenMP thread `thread` executes on.
  dnnl::stream &stream(int thread = 0) { return streams_[thread]; }

  /// Per-thread scratch for kernels' own tiles (index: OpenMP thread number).
  txrt::Workspace &threadWorkspace(int thread) { return threadWork_[thread]; }
  /// Per-thread oneDNN scratchpads (primitives use user-managed scratchpads).
  txrt::Workspace &threadScratchpad(int thread) {
    return threadScratchpad_[thread];
  }
  /// Temporaries of the calling thread outside parallel regions.
  txrt::Workspace &temp(int index) { return temps_[index]; }

  /// The cache entry for `key`, created by `create` on a miss.
  template <typename Entry, typename Create>
  Entry &cached(const txrt::CacheKey &key, Create &&create) {
    auto it = cache_.find(key);
    if (it == cache_.end())
      it = cache_.emplace(key, std::unique_ptr<txrt::CacheEntry>(create()))
               .first;
    return static_cast<Entry &>(*it->second);
  }

  void countPrimitiveCreation() { ++primitiveCreations_; }
  int64_t primitiveCreations() const { return primitiveCreations_; }
  void clearCache() { cache_.clear(); }

  /// Weights of a frozen range kept packed for the linear products
  /// (txrt_context_set_frozen_parameters, PackedWeights.h).
  txrt::PackedWeights packedWeights;

  int64_t attentionBlockQ = 96;
  int64_t attentionBlockK = 256;

  /// Set by the driver before each training call (txrt_context_set_train_state).
  int64_t trainStep = 0;
  /// Statistics backward kernels recompute when none were saved.
  txrt::Workspace statsWork;
  uint64_t trainSeed = 0;
  /// The call's rows within the update's batch (txrt_context_set_batch_rows).
  int64_t batchFirstRow = 0;
  int64_t batchRows = 0;
  /// The index of element 0 of an n-element tensor in the whole batch's
  /// dropout stream: batchFirstRow rows of n / batchRows elements.
  int64_t dropoutOffset(int64_t n) const {
    return batchRows > 0 && n % batchRows == 0 ? batchFirstRow * (n / batchRows)
                                               : 0;
  }
  /// Accumulated gradients and their allreduce (txrt_context_set_gradient_mode).
  txrt::GradientExchange gradients;

  std::string lastError;
  /// The call site (txc's metadata "sites") of the call that set
  /// lastError, or -1 (txrt_last_error_site).
  int64_t lastErrorSite = -1;

  /// Profiling (txrt_context_set_profiling): whether calls are recorded,
  /// the records, and the FLOPs the running kernel reported.
  bool profiling = false;
  std::vector<txrt_profile_event> profileEvents;
  int64_t droppedProfileEvents = 0;
  double currentFlops = 0.0;
  void noteFlops(double flops) { currentFlops = flops; }
  void recordProfileEvent(const char *kernel, int64_t site, int64_t start,
                          int64_t duration) noexcept {
    try {
      profileEvents.push_back({kernel, site, start, duration, currentFlops});
    } catch (...) {
      ++droppedProfileEvents;
    }
  }

private:
  int numThreads_;
  int denormalMode_ = TXRT_DENORMALS_FLUSH_MOMENTS;
  dnnl::engine engine_;
  std::vector<dnnl::stream> streams_;
  std::vector<txrt::Workspace> threadWork_;
  std::vector<txrt::Workspace> threadScratchpad_;
  std::array<txrt::Workspace, 4> temps_;
  std::unordered_map<txrt::CacheKey, std::unique_ptr<txrt::CacheEntry>,
                     txrt::CacheKeyHash>
      cache_;
  int64_t primitiveCreations_ = 0;
};

namespace txrt {

using Context = ::txrt_context;

/// The clock of profile events: CLOCK_MONOTONIC in nanoseconds.
int64_t profileClockNs() noexcept;

/// The number of threads the environment asks for (TXRT_NUM_THREADS), or
/// the number of cores; throws Error for a malformed value.
int defaultThreadCount();

} // namespace txrt

#endif // TXRT_LIB_CONTEXT_H
