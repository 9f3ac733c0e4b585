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
//
// adam_bandwidth/8M/{txrt,copy}: the same Adam step over normal moments
// against a parallel copy of the same bytes (Adam reads param, grad, m, v
// and writes param, m, v: 7 x 4 bytes a parameter; the copy moves 3.5
// floats a parameter each way), for the ratio of Adam's bandwidth to the
// machine's copy bandwidth (target >= 0.8).
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
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

void adamBandwidth() {
  // The same step with grad, m and v starting 1, 2 and 3 KiB past the
  // parameters' offset modulo 4 KiB: aligned alike (as the benchmark's
  // buffers and the parameter arena's regions are), the seven streams
  // alias in the caches and Adam ran 2-3x slower on Zen 4.
  add("adam_bandwidth/8M/skewed", [](benchmark::State &state) {
    const int64_t pad = 1024;
    Buffer param = randomBuffer(kN + pad, 1), grad = randomBuffer(kN + pad, 2),
           m(kN + pad, 1e-3f), v(kN + pad, 1e-6f);
    int64_t step = 100;
    for (auto _ : state)
      if (!ok(state, txrt_adam_update(context(), 1, kN, param.data(),
                                      grad.data() + 256, m.data() + 512,
                                      v.data() + 768, 1e-3f, 0.9f, 0.98f,
                                      1e-9f, 0.0f, step++)))
        break;
    state.SetBytesProcessed(int64_t(state.iterations()) * kN * 7 * 4);
  });
  add("adam_bandwidth/8M/txrt", [](benchmark::State &state) {
    Buffer param = randomBuffer(kN, 1), grad = randomBuffer(kN, 2),
           m(kN, 1e-3f), v(kN, 1e-6f);
    int64_t step = 100;
    for (auto _ : state)
      if (!ok(state, txrt_adam_update(context(), 1, kN, param.data(),
                                      grad.data(), m.data(), v.data(), 1e-3f,
                                      0.9f, 0.98f, 1e-9f, 0.0f, step++)))
        break;
    state.SetBytesProcessed(int64_t(state.iterations()) * kN * 7 * 4);
  });
  add("adam_bandwidth/8M/copy", [](benchmark::State &state) {
    const int64_t n = kN * 7 / 2;
    Buffer from = randomBuffer(n, 3), to(n);
    const int threads = txrt_context_num_threads(context());
    for (auto _ : state) {
#pragma omp parallel num_threads(threads)
      {
        const int64_t chunk = (n + omp_get_num_threads() - 1) /
                              omp_get_num_threads();
        const int64_t begin = std::min(n, chunk * omp_get_thread_num());
        const int64_t end = std::min(n, begin + chunk);
        std::memcpy(to.data() + begin, from.data() + begin,
                    size_t(end - begin) * sizeof(float));
      }
      benchmark::DoNotOptimize(to.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * n * 2 * 4);
  });
}

} // namespace

void registerDenormalsBenchmarks() {
  adamBandwidth();
  adamCase("8M_denormal_moments", 1e-39f, 1e-40f);
  adamCase("8M_normal_moments", 1e-3f, 1e-6f);
}

} // namespace txrt_bench
