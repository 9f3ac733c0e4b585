//===- WaitPolicy.h - how idle OpenMP threads wait by default ---*- C++ -*-===//
//
// libgomp's idle threads spin for about 300,000 iterations before they sleep
// (OMP_WAIT_POLICY unset). On a machine where another process wants a core,
// a spinning thread takes the time the thread it waits for needs, and a
// 2-thread train step or decode ran 10-28x slower. txrt's default is a short
// spin (kDefaultSpinCount iterations, then sleep), chosen by measurement
// (docs/benchmarks.md, scripts/bench-busy.sh). libgomp reads its
// environment once, in its constructor, so the executable sets the default
// and re-executes itself (runtime/driver/main.cpp; a .preinit_array setenv
// is lost when libc's initialisation sets environ afterwards); the user's
// OMP_WAIT_POLICY or GOMP_SPINCOUNT wins. With OMP_PROC_BIND, OMP_PLACES or
// GOMP_CPU_AFFINITY set there is no default and no re-execution: libgomp
// had bound the initial thread to one CPU, which the new process inherited.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_WAITPOLICY_H
#define TXRT_LIB_WAITPOLICY_H

namespace txrt {

/// GOMP_SPINCOUNT txrt sets when the environment sets no wait policy.
inline constexpr const char *kDefaultSpinCount = "1000";

/// Sets GOMP_SPINCOUNT=kDefaultSpinCount unless OMP_WAIT_POLICY,
/// GOMP_SPINCOUNT or a thread binding (OMP_PROC_BIND, OMP_PLACES,
/// GOMP_CPU_AFFINITY) is set. Returns whether it set it.
bool applyDefaultWaitPolicy();

} // namespace txrt

#endif // TXRT_LIB_WAITPOLICY_H
