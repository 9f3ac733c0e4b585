//===- DenormalsBench.cpp - Adam over moments in the denormal range -------===//
//
// Reproduces in seconds the slowdown of long runs: Adam's moments of rows
// that get no gradient (rare embedding rows) decay into the denormal range,
// where x86 arithmetic takes a slow path. Adam steps over 8M parameters (a
// 16k x 512 embedding) with no gradient, from moments that are all denormal
// (m = 1e-39, v = 1e-40) or all normal, in the default mode (Adam stores
// moments below FLT_MIN as 0: "txrt"), in TXRT_DENORMALS_FLUSH_ALL
// ("flush_all") and with IEEE gradual underflow kept ("keep": what the
// runtime did before, and PyTorch does). Kept, denormal moments stay
// denormal for the ~100 steps one benchmark repetition takes (0.9 per step
// from 1e-39 to 1.4e-45); flushed, they are 0 after the first step.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <algorithm>
#include <string>

namespace txrt_bench {
namespace {

constexpr int64_t kN = 16384 * 512;

void adamCase(const std::string &moments, float m0, float v0) {
  struct Mode {
    const char *name;
    int mode;
  };
  for (Mode mode : {Mode{"txrt", TXRT_DENORMALS_FLUSH_MOMENTS},
                    Mode{"flush_all", TXRT_DENORMALS_FLUSH_ALL},
                    Mode{"keep", TXRT_DENORMALS_KEEP}}) {
    add("adam_denormals/" + moments + "/" + mode.name,
        [=](benchmark::State &state) {
          Buffer param = randomBuffer(kN, 1), grad(kN, 0.0f), m(kN, m0),
                 v(kN, v0);
          if (!ok(state, txrt_context_set_option(
                             context(), TXRT_OPTION_DENORMALS, mode.mode)))
            return;
          int64_t step = 100;
          for (auto _ : state)
            if (!ok(state, txrt_adam_update(context(), 1, kN, param.data(),
                                            grad.data(), m.data(), v.data(),
                                            1e-3f, 0.9f, 0.98f, 1e-9f, 0.0f,
                                            step++)))
              break;
          txrt_context_set_option(context(), TXRT_OPTION_DENORMALS,
                                  TXRT_DENORMALS_FLUSH_MOMENTS);
        });
  }
}

} // namespace

void registerDenormalsBenchmarks() {
  adamCase("8M_denormal_moments", 1e-39f, 1e-40f);
  adamCase("8M_normal_moments", 1e-3f, 1e-6f);
}

} // namespace txrt_bench
