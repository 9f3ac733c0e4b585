//===- Context.cpp - txrt_context, errors and the context ABI -------------===//
//
// Creation and destruction of contexts, TXRT_NUM_THREADS, the cache key, the
// aligned workspaces, and the conversion of exceptions into statuses.
//
//===----------------------------------------------------------------------===//
#include "Context.h"
#include "EntryChecks.h"
#include "Denormals.h"
#include "Kernel.h"

#include <omp.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <new>
#include <string_view>

using namespace txrt;

//===----------------------------------------------------------------------===//
// Workspace
//===----------------------------------------------------------------------===//

Workspace &Workspace::operator=(Workspace &&other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

Workspace::~Workspace() { std::free(data_); }

void *Workspace::get(size_t bytes) {
  if (bytes <= size_)
    return data_;
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  void *fresh = std::aligned_alloc(64, rounded);
  if (!fresh)
    throw std::bad_alloc();
  std::free(data_);
  data_ = fresh;
  size_ = rounded;
  return data_;
}

//===----------------------------------------------------------------------===//
// CacheKey
//===----------------------------------------------------------------------===//

CacheKey &CacheKey::operator<<(int64_t value) {
  if (count_ == kMaxValues)
    throw Error(TXRT_ERROR_INTERNAL, "cache key has too many values");
  values_[count_++] = value;
  return *this;
}

CacheKey &CacheKey::operator<<(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return *this << int64_t(bits);
}

bool CacheKey::operator==(const CacheKey &other) const {
  if (site_ != other.site_ || kernel_ != other.kernel_ ||
      count_ != other.count_)
    return false;
  for (int i = 0; i < count_; ++i)
    if (values_[i] != other.values_[i])
      return false;
  return true;
}

size_t CacheKey::hash() const {
  // FNV-1a over the 64-bit words.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t word) {
    h ^= word;
    h *= 1099511628211ull;
  };
  mix(uint64_t(site_));
  mix(uint64_t(kernel_));
  for (int i = 0; i < count_; ++i)
    mix(uint64_t(values_[i]));
  return size_t(h);
}

//===----------------------------------------------------------------------===//
// txrt_context
//===----------------------------------------------------------------------===//

txrt_context::txrt_context(int numThreads)
    : numThreads_(numThreads),
      denormalMode_(txrt::denormalModeFromEnvironment()),
      engine_(dnnl::engine::kind::cpu, 0), threadWork_(numThreads),
      threadScratchpad_(numThreads) {
  streams_.reserve(numThreads);
  for (int i = 0; i < numThreads; ++i)
    streams_.emplace_back(engine_);
  if (flushDenormals())
    txrt::setFlushDenormalsOnWorkers(true, numThreads_);
}

void txrt_context::setDenormalMode(int mode) {
  bool wasFlushing = flushDenormals();
  denormalMode_ = mode;
  if (wasFlushing != flushDenormals())
    txrt::setFlushDenormalsOnWorkers(flushDenormals(), numThreads_);
}

int64_t txrt::profileClockNs() noexcept {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

int txrt::denormalModeFromEnvironment() {
  const char *env = std::getenv("TXRT_DENORMALS");
  if (!env || !*env || std::string_view(env) == "moments")
    return TXRT_DENORMALS_FLUSH_MOMENTS;
  if (std::string_view(env) == "keep")
    return TXRT_DENORMALS_KEEP;
  if (std::string_view(env) == "flush")
    return TXRT_DENORMALS_FLUSH_ALL;
  throw Error(TXRT_ERROR_INVALID_ARGUMENT,
              std::string("TXRT_DENORMALS='") + env +
                  "' is not 'keep', 'moments' or 'flush'");
}

void txrt::setFlushDenormalsOnWorkers(bool flush, int threads) {
  // Every thread of a team of either size runs the body once. The calling
  // thread is the teams' master: its own mode is the caller's business
  // (runKernel sets it per call), so it is restored.
  uint32_t callerMode = readFloatControl();
  for (int team : {threads, omp_get_num_procs()}) {
    if (team < 1)
      continue;
#pragma omp parallel num_threads(team)
    setFlushDenormals(flush);
  }
  writeFloatControl(callerMode);
}

namespace {
/// The most threads a context runs (TXRT_NUM_THREADS, --threads,
/// txrt_context_create_with_threads).
constexpr int kMaxThreads = 4096;
} // namespace

int txrt::defaultThreadCount() {
  const char *env = std::getenv("TXRT_NUM_THREADS");
  if (env && *env) {
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(env, &end, 10);
    // Spaces either side, as libgomp takes OMP_NUM_THREADS (strtol skips
    // the leading ones).
    while (end != env && std::isspace(static_cast<unsigned char>(*end)))
      ++end;
    if (errno != 0 || end == env || *end != '\0' || value <= 0 ||
        value > kMaxThreads)
      throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                  std::string("TXRT_NUM_THREADS='") + env +
                      "' is not an integer in [1, " +
                      std::to_string(kMaxThreads) + "]");
    return int(value);
  }
  return omp_get_num_procs();
}

//===----------------------------------------------------------------------===//
// Errors at the boundary
//===----------------------------------------------------------------------===//

namespace {
thread_local std::string threadLastError;
} // namespace

void txrt::setThreadError(const std::string &message) {
  try {
    threadLastError = message;
  } catch (...) {
  }
}

std::string txrt::dimsString(const int64_t *dims, int rank) {
  if (!dims)
    return "NULL";
  std::string text = "[";
  for (int i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

txrt_status txrt::reportFailure(Context *ctx, const char *kernel,
                                const std::string &shapeText) noexcept {
  txrt_status status = TXRT_ERROR_INTERNAL;
  std::string cause;
  try {
    throw;
  } catch (const Error &e) {
    status = e.status();
    cause = e.what();
  } catch (const dnnl::error &e) {
    // oneDNN's out of memory ("could not execute a primitive (dnnl_status
    // 1)" under `ulimit -v`) is said as such.
    status = e.status == dnnl_out_of_memory ? TXRT_ERROR_OUT_OF_MEMORY
                                            : TXRT_ERROR_BACKEND;
    try {
      cause = std::string("oneDNN: ") + e.what() + " (dnnl_status " +
              std::to_string(int(e.status)) +
              (e.status == dnnl_out_of_memory ? ": out of memory" : "") + ")";
    } catch (...) {
    }
  } catch (const std::bad_alloc &) {
    status = TXRT_ERROR_OUT_OF_MEMORY;
    cause = "allocation failed";
  } catch (const std::exception &e) {
    try {
      cause = e.what();
    } catch (...) {
    }
  } catch (...) {
    cause = "unknown exception";
  }
  try {
    std::string message = std::string(kernel) + "(" + shapeText +
                          "): " + txrt_status_string(status) + ": " + cause;
    if (ctx) {
      ctx->lastError = message;
      ctx->lastErrorSite = -1; // a call with a site sets it after this
    } else {
      setThreadError(message);
    }
  } catch (...) {
  }
  return status;
}

int txrt::teamThreadCount(int threads) {
  // OMP_THREAD_LIMIT caps every team; OMP_MAX_ACTIVE_LEVELS=0 makes every
  // parallel region a team of one. oneDNN splits a product for the team
  // it asks for without checking that it got it, so a smaller team left
  // part of the output unwritten (half of each linear at --threads 2 under
  // OMP_THREAD_LIMIT=1): the context's count is what a team can have.
  const int limit = omp_get_thread_limit();
  if (limit >= 1 && threads > limit)
    threads = limit;
  if (omp_get_max_active_levels() < 1)
    threads = 1;
  return threads;
}

ThreadCountScope::ThreadCountScope(int threads)
    : previous_(omp_get_max_threads()), changed_(previous_ != threads),
      dynamic_(omp_get_dynamic() != 0) {
  if (changed_)
    omp_set_num_threads(threads);
  // OMP_DYNAMIC=true lets the OpenMP runtime start fewer threads than a
  // region asks for (libgomp: by the load average), and oneDNN's split of
  // a product assumes the team it asked for (see teamThreadCount): off for
  // the call, as the host had it after.
  if (dynamic_)
    omp_set_dynamic(0);
}

ThreadCountScope::~ThreadCountScope() {
  if (changed_)
    omp_set_num_threads(previous_);
  if (dynamic_)
    omp_set_dynamic(1);
}

//===----------------------------------------------------------------------===//
// The context ABI
//===----------------------------------------------------------------------===//

extern "C" {

txrt_status txrt_context_create_with_threads(int32_t num_threads,
                                             txrt_context **out_ctx) {
  if (!out_ctx) {
    setThreadError("txrt_context_create: invalid argument: out_ctx is NULL");
    return TXRT_ERROR_INVALID_ARGUMENT;
  }
  *out_ctx = nullptr;
  // As TXRT_NUM_THREADS and --threads: 100000 was accepted, and the first
  // entry call ended the process in libgomp ("Thread creation failed").
  if (num_threads > kMaxThreads) {
    setThreadError("txrt_context_create: invalid argument: num_threads " +
                   std::to_string(num_threads) + " is not in [1, " +
                   std::to_string(kMaxThreads) + "] (<= 0: the default)");
    return TXRT_ERROR_INVALID_ARGUMENT;
  }
  try {
    int threads = num_threads > 0 ? num_threads : defaultThreadCount();
    *out_ctx = new txrt_context(teamThreadCount(threads));
    return TXRT_OK;
  } catch (...) {
    return reportFailure(nullptr, "txrt_context_create",
                         "num_threads=" + std::to_string(num_threads));
  }
}

txrt_status txrt_context_create(txrt_context **out_ctx) {
  return txrt_context_create_with_threads(0, out_ctx);
}

void txrt_context_destroy(txrt_context *ctx) {
  EntryClaims::forget(ctx);
  delete ctx;
}

const char *txrt_last_error(const txrt_context *ctx) {
  return ctx ? ctx->lastError.c_str() : threadLastError.c_str();
}

int64_t txrt_last_error_site(const txrt_context *ctx) {
  return ctx ? ctx->lastErrorSite : -1;
}

const char *txrt_status_string(txrt_status status) {
  switch (status) {
  case TXRT_OK:
    return "ok";
  case TXRT_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case TXRT_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case TXRT_ERROR_BACKEND:
    return "backend error";
  case TXRT_ERROR_INTERNAL:
    return "internal error";
  default:
    return "unknown status";
  }
}

void txrt_context_set_profiling(txrt_context *ctx, int32_t enable) {
  if (!ctx)
    return;
  if (enable && !ctx->profiling) {
    ctx->profileEvents.clear();
    ctx->droppedProfileEvents = 0;
  }
  ctx->profiling = enable != 0;
}

int64_t txrt_profile_event_count(const txrt_context *ctx) {
  return ctx ? int64_t(ctx->profileEvents.size()) : 0;
}

const txrt_profile_event *txrt_profile_events(const txrt_context *ctx) {
  return ctx && !ctx->profileEvents.empty() ? ctx->profileEvents.data()
                                            : nullptr;
}

void txrt_profile_clear(txrt_context *ctx) {
  if (ctx)
    ctx->profileEvents.clear();
}

int64_t txrt_profile_clock_ns(void) { return txrt::profileClockNs(); }

int32_t txrt_context_denormal_mode(const txrt_context *ctx) {
  return ctx ? ctx->denormalMode() : TXRT_DENORMALS_KEEP;
}

uint32_t txrt_denormals_enter(const txrt_context *ctx) {
  return txrt::setFlushDenormals(ctx && ctx->flushDenormals());
}

void txrt_denormals_leave(uint32_t saved) {
  if (txrt::readFloatControl() != saved)
    txrt::writeFloatControl(saved);
}

int32_t txrt_context_num_threads(const txrt_context *ctx) {
  return ctx ? ctx->numThreads() : 0;
}

int64_t txrt_context_primitive_creations(const txrt_context *ctx) {
  return ctx ? ctx->primitiveCreations() : 0;
}

void txrt_context_clear_cache(txrt_context *ctx) {
  if (ctx)
    ctx->clearCache();
}

void txrt_context_set_frozen_parameters(txrt_context *ctx, const void *base,
                                        size_t bytes) {
  if (ctx)
    ctx->packedWeights.freeze(base, bytes);
}

void txrt_context_packed_weights(const txrt_context *ctx, int64_t *out_count,
                                 int64_t *out_bytes) {
  if (out_count)
    *out_count = ctx ? ctx->packedWeights.count() : 0;
  if (out_bytes)
    *out_bytes = ctx ? int64_t(ctx->packedWeights.bytes()) : 0;
}

void txrt_context_set_train_state(txrt_context *ctx, int64_t step,
                                  uint64_t seed) {
  if (ctx) {
    ctx->trainStep = step;
    ctx->trainSeed = seed;
  }
}

void txrt_context_set_batch_rows(txrt_context *ctx, int64_t first_row,
                                 int64_t rows) {
  if (ctx && first_row >= 0 && rows >= 0) {
    ctx->batchFirstRow = first_row;
    ctx->batchRows = rows;
  }
}

int64_t txrt_context_train_step(const txrt_context *ctx) {
  return ctx ? ctx->trainStep : 0;
}

uint64_t txrt_context_train_seed(const txrt_context *ctx) {
  return ctx ? ctx->trainSeed : 0;
}

txrt_status txrt_train_state(txrt_context *ctx, int64_t *out_step,
                             int64_t *out_seed) {
  return runKernel(
      ctx, "txrt_train_state", [&] { return std::string(); },
      [&](Context &c) {
        require(out_step && out_seed, "out_step and out_seed must not be NULL");
        *out_step = c.trainStep;
        *out_seed = static_cast<int64_t>(c.trainSeed);
      });
}

txrt_status txrt_check_entry(txrt_context *ctx, const int64_t *dims,
                             const int64_t *dim_index,
                             const int64_t *dim_bound, int64_t num_checked,
                             const void *arena, int64_t arena_bytes,
                             const void *const *inputs, int64_t num_inputs,
                             const void *const *outputs, int64_t num_outputs,
                             const void *params, int64_t params_bytes) {
  return runKernel(
      ctx, "txrt_check_entry", [&] { return std::string(); },
      [&](Context &) {
        std::string problem = entryArgumentProblem(
            dims, dim_index, dim_bound, num_checked, arena, arena_bytes,
            inputs, num_inputs, outputs, num_outputs, params, params_bytes);
        require(problem.empty(), problem);
        problem = EntryClaims::claim(ctx, arena_bytes > 0 ? arena : nullptr);
        require(problem.empty(), problem);
      });
}

txrt_status txrt_entry_done(txrt_context *ctx, const void *arena) {
  EntryClaims::release(ctx, arena);
  return TXRT_OK;
}

txrt_status txrt_check_cache_rows(txrt_context *ctx, int64_t input,
                                  int64_t written, int64_t held) {
  return runKernel(
      ctx, "txrt_check_cache_rows", [&] { return std::string(); },
      [&](Context &) {
        std::string problem = cacheRowsProblem(input, written, held);
        require(problem.empty(), problem);
      });
}

txrt_status txrt_check_dim_min(txrt_context *ctx, int64_t dim_index,
                               int64_t value, int64_t minimum) {
  return runKernel(
      ctx, "txrt_check_dim_min", [&] { return std::string(); },
      [&](Context &) {
        std::string problem = dimMinProblem(dim_index, value, minimum);
        require(problem.empty(), problem);
      });
}

txrt_status txrt_context_set_option(txrt_context *ctx, int32_t option,
                                    int64_t value) {
  return runKernel(
      ctx, "txrt_context_set_option",
      [&] { return shapes("option", option, "value", value); },
      [&](Context &c) {
        if (option == TXRT_OPTION_DENORMALS) {
          require(value >= TXRT_DENORMALS_KEEP &&
                      value <= TXRT_DENORMALS_FLUSH_ALL,
                  "TXRT_OPTION_DENORMALS takes a TXRT_DENORMALS_* mode (0, 1 "
                  "or 2)");
          c.setDenormalMode(int(value));
          return;
        }
        require(value > 0, "option values must be positive");
        switch (option) {
        case TXRT_OPTION_ATTENTION_BLOCK_Q:
          c.attentionBlockQ = value;
          break;
        case TXRT_OPTION_ATTENTION_BLOCK_K:
          c.attentionBlockK = value;
          break;
        default:
          throw Error(TXRT_ERROR_INVALID_ARGUMENT, "unknown option");
        }
        c.clearCache();
      });
}

} // extern "C"
