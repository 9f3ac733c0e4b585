//===- Kernel.h - the ABI boundary: statuses, messages, threads -*- C++ -*-===//
//
// runKernel wraps the body of every extern "C" entry point: it sets the
// OpenMP thread count for the call, runs the body, and converts any exception
// (txrt::Error, dnnl::error, std::bad_alloc, anything) into a status plus a
// message that names the kernel, its shapes and the cause. Nothing thrown
// crosses the C ABI.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_KERNEL_H
#define TXRT_LIB_KERNEL_H

#include "Context.h"
#include "Denormals.h"

#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace txrt {

//===----------------------------------------------------------------------===//
// Shape descriptions for messages
//===----------------------------------------------------------------------===//

inline void appendShape(std::ostringstream &) {}
template <typename T, typename... Rest>
void appendShape(std::ostringstream &os, const char *name, const T &value,
                 const Rest &...rest) {
  if (os.tellp() > 0)
    os << ", ";
  os << name << '=' << value;
  appendShape(os, rest...);
}

/// "name=value, name=value, ..." for the shape part of error messages.
template <typename... Args> std::string shapes(const Args &...args) {
  std::ostringstream os;
  appendShape(os, args...);
  return os.str();
}

/// "[d0, d1, ...]" of a dims array (for messages).
std::string dimsString(const int64_t *dims, int rank);

//===----------------------------------------------------------------------===//
// The boundary
//===----------------------------------------------------------------------===//

/// Records `message` as the thread's context-less last error.
void setThreadError(const std::string &message);

/// Formats the failure of `kernel` (with `shapeText`) from the in-flight
/// exception, stores it in ctx and returns the status.
txrt_status reportFailure(Context *ctx, const char *kernel,
                          const std::string &shapeText) noexcept;

/// `threads`, or fewer where the OpenMP environment caps a team
/// (OMP_THREAD_LIMIT, OMP_MAX_ACTIVE_LEVELS=0): a context's thread count.
int teamThreadCount(int threads);

/// Sets omp_set_num_threads, and turns OpenMP's dynamic adjustment of team
/// sizes off, for the duration of a call; restores both.
class ThreadCountScope {
public:
  explicit ThreadCountScope(int threads);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope &) = delete;
  ThreadCountScope &operator=(const ThreadCountScope &) = delete;

private:
  int previous_;
  bool changed_;
  bool dynamic_;
};

/// Runs body(ctx) as the ABI function `kernel`. `describe` yields the shape
/// text of the message and is only called on failure.
template <typename Describe, typename Body>
txrt_status runKernel(Context *ctx, const char *kernel, Describe &&describe,
                      Body &&body) noexcept {
  if (!ctx) {
    std::string text;
    try {
      text = std::string(kernel) + "(" + describe() +
             "): invalid argument: ctx is NULL";
    } catch (...) {
    }
    setThreadError(text);
    return TXRT_ERROR_INVALID_ARGUMENT;
  }
  try {
    ThreadCountScope threads(ctx->numThreads());
    FlushDenormalsScope denormals(ctx->flushDenormals());
    body(*ctx);
    return TXRT_OK;
  } catch (...) {
    std::string shapeText;
    try {
      shapeText = describe();
    } catch (...) {
    }
    return reportFailure(ctx, kernel, shapeText);
  }
}

/// Runs body(ctx) as the ABI function `kernel` called from call site `site`
/// (-1: none). `describe` yields the shape text of the message and is only
/// called on failure. While the context profiles, the call is timed and
/// recorded (txrt_profile_*); otherwise that costs one branch.
template <typename Describe, typename Body>
txrt_status runKernel(Context *ctx, int64_t site, const char *kernel,
                      Describe &&describe, Body &&body) noexcept {
  txrt_status status;
  if (ctx && ctx->profiling) {
    int64_t start = profileClockNs();
    ctx->noteFlops(0.0);
    status = runKernel(ctx, kernel, std::forward<Describe>(describe),
                       std::forward<Body>(body));
    ctx->recordProfileEvent(kernel, site, start, profileClockNs() - start);
  } else {
    status = runKernel(ctx, kernel, std::forward<Describe>(describe),
                       std::forward<Body>(body));
  }
  if (status != TXRT_OK && ctx)
    ctx->lastErrorSite = site; // txrt_last_error_site
  return status;
}

//===----------------------------------------------------------------------===//
// Exceptions inside OpenMP regions
//===----------------------------------------------------------------------===//

/// Exceptions must not leave an OpenMP region: each thread runs its work
/// through capture(), and rethrow() rethrows the first one after the region.
class ParallelErrors {
public:
  template <typename F> void capture(F &&f) noexcept {
    try {
      f();
    } catch (...) {
#pragma omp critical(txrt_parallel_errors)
      {
        if (!first_)
          first_ = std::current_exception();
      }
    }
  }
  void rethrow() {
    if (first_)
      std::rethrow_exception(first_);
  }

private:
  std::exception_ptr first_;
};

} // namespace txrt

#endif // TXRT_LIB_KERNEL_H
