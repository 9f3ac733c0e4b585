//===- DenormalsBench.cpp - Adam over moments in the denormal range -------===//
//
// Reproduces in seconds the slowdown of long runs: Adam's moments of rows
// that get no gradient (rare embedding rows) decay into the denormal range,
// where x86 arithmetic takes a slow path. One update of 8M parameters (a
// 16k x 512 embedding) whose moments are all denormal (m = 1e-39,
// v = 1e-40, gradient 0) or all normal, computed with the context's
// default, flushing denormals ("txrt"), against the same call with IEEE
// gradual underflow kept ("keep": TXRT_OPTION_FLUSH_DENORMALS = 0, what
// the runtime did before). The moments are reset before every iteration
// (untimed), so each iteration starts from the same state.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <algorithm>
#include <string>

namespace txrt_bench {
namespace {

constexpr int64_t kN = 16384 * 512;

void adamCase(const std::string &moments, float m0, float v0) {
  for (bool flush : {true, false}) {
    add("adam_denormals/" + moments + (flush ? "/txrt" : "/keep"),
        [=](benchmark::State &state) {
          Buffer param = randomBuffer(kN, 1), grad(kN, 0.0f), m(kN), v(kN);
          if (!ok(state, txrt_context_set_option(
                             context(), TXRT_OPTION_FLUSH_DENORMALS, flush)))
            return;
          for (auto _ : state) {
            state.PauseTiming();
            std::fill(m.begin(), m.end(), m0);
            std::fill(v.begin(), v.end(), v0);
            state.ResumeTiming();
            if (!ok(state, txrt_adam_update(context(), 1, kN, param.data(),
                                            grad.data(), m.data(), v.data(),
                                            1e-3f, 0.9f, 0.98f, 1e-9f, 0.0f,
                                            100)))
              break;
          }
          txrt_context_set_option(context(), TXRT_OPTION_FLUSH_DENORMALS, 1);
        });
  }
}

} // namespace

void registerDenormalsBenchmarks() {
  adamCase("8M_denormal_moments", 1e-39f, 1e-40f);
  adamCase("8M_normal_moments", 1e-3f, 1e-6f);
}

} // namespace txrt_bench
