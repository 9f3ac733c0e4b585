//===- WaitPolicy.cpp - how idle OpenMP threads wait by default -----------===//
//
// See WaitPolicy.h. txrt_apply_default_wait_policy is the C entry the
// executable's main calls before it re-executes itself.
//
//===----------------------------------------------------------------------===//
#include "WaitPolicy.h"

#include "txrt/txrt.h"

#include <cstdlib>

bool txrt::applyDefaultWaitPolicy() {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
    return false;
  // With a binding asked for, libgomp bound this (initial) thread to its
  // first place when it was loaded: the process started again inherits
  // that one-CPU mask, and every kernel thread ran on CPU 0. The user's
  // binding is kept, with libgomp's own wait policy.
  if (std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES") ||
      std::getenv("GOMP_CPU_AFFINITY"))
    return false;
  return setenv("GOMP_SPINCOUNT", kDefaultSpinCount, /*overwrite=*/0) == 0;
}

extern "C" int32_t txrt_apply_default_wait_policy(void) {
  return txrt::applyDefaultWaitPolicy() ? 1 : 0;
}
