//===- Denormals.h - flush-to-zero and denormals-are-zero -------*- C++ -*-===//
//
// Denormal (subnormal) floats make x86 arithmetic take a slow path: Adam's
// moments of rarely seen embedding rows decay geometrically into that range
// and then slow every step that touches them (issue: long runs get slower).
// The modes are txrt.h's TXRT_DENORMALS_*: by default Adam stores moments
// below FLT_MIN as 0 (kernels/Adam.cpp) and all other arithmetic is IEEE,
// as PyTorch's. In TXRT_DENORMALS_FLUSH_ALL the runtime computes with
// MXCSR's flush-to-zero (FTZ) and denormals-are-zero (DAZ) bits set, as
// TensorFlow's executor does:
//  - on the runtime's OpenMP worker threads, set when the mode is chosen
//    (threads the pool makes later are created by a thread inside a txrt
//    call, and a new thread inherits its creator's floating-point
//    environment);
//  - on the calling thread for the duration of every txrt_ call
//    (FlushDenormalsScope in runKernel), restored on return, so a program
//    that embeds the runtime keeps its own mode outside the calls; the
//    driver also wraps each compiled entry, so generated glue code runs
//    flushed too.
// On targets without SSE the scope is a no-op.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_DENORMALS_H
#define TXRT_LIB_DENORMALS_H

#include <cstdint>

#if defined(__SSE__) || defined(__x86_64__)
#include <immintrin.h>
#define TXRT_HAVE_MXCSR 1
#else
#define TXRT_HAVE_MXCSR 0
#endif

namespace txrt {

/// MXCSR's FTZ (bit 15) and DAZ (bit 6).
constexpr uint32_t kFlushDenormalBits = 0x8040u;

/// The calling thread's floating-point control word (0 without SSE).
inline uint32_t readFloatControl() {
#if TXRT_HAVE_MXCSR
  return _mm_getcsr();
#else
  return 0;
#endif
}

inline void writeFloatControl(uint32_t value) {
#if TXRT_HAVE_MXCSR
  _mm_setcsr(value);
#else
  (void)value;
#endif
}

/// Sets or clears FTZ and DAZ on the calling thread; returns the previous
/// control word.
inline uint32_t setFlushDenormals(bool flush) {
  uint32_t previous = readFloatControl();
  uint32_t wanted = flush ? (previous | kFlushDenormalBits)
                          : (previous & ~kFlushDenormalBits);
  if (wanted != previous)
    writeFloatControl(wanted);
  return previous;
}

/// Whether the calling thread flushes (both bits set).
inline bool flushesDenormals() {
  return (readFloatControl() & kFlushDenormalBits) == kFlushDenormalBits;
}

/// Sets the calling thread's mode for a scope and restores it after.
class FlushDenormalsScope {
public:
  explicit FlushDenormalsScope(bool flush)
      : previous_(setFlushDenormals(flush)) {}
  ~FlushDenormalsScope() {
    if (readFloatControl() != previous_)
      writeFloatControl(previous_);
  }
  FlushDenormalsScope(const FlushDenormalsScope &) = delete;
  FlushDenormalsScope &operator=(const FlushDenormalsScope &) = delete;

private:
  uint32_t previous_;
};

/// The TXRT_DENORMALS_* mode TXRT_DENORMALS asks for: unset, "" or
/// "moments" -> FLUSH_MOMENTS, "keep" -> KEEP, "flush" -> FLUSH_ALL; throws
/// Error for anything else.
int denormalModeFromEnvironment();

/// Sets (or clears) FTZ and DAZ on every thread of the OpenMP pool, for
/// teams of up to `threads` threads and of omp_get_num_procs() threads; the
/// calling thread's mode is left as it was.
void setFlushDenormalsOnWorkers(bool flush, int threads);

} // namespace txrt

#endif // TXRT_LIB_DENORMALS_H
