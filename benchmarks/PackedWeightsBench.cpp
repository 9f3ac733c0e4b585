//===- PackedWeightsBench.cpp - linears on frozen (packed) weights --------===//
//
// txrt_linear_fwd on weights the context holds frozen
// (txrt_context_set_frozen_parameters: read from a copy packed once in
// oneDNN's blocked layout) against the same call on plain weights (oneDNN
// packs them inside every call), at the row counts inference runs: a
// decoding step of 1, 8 or 32 sentences and a whole 512-token forward, on
// base.tx's shapes (d_model 512, d_ff 2048):
//
//   linear_frozen/m{1,8,32,512}_n{512,2048}_k512/{txrt,plain}
//
// scripts/bench-kernels.sh prints ratio = plain / frozen (> 1: packing is
// faster). The first iteration packs; Google Benchmark's warm-up absorbs it.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <string>

namespace txrt_bench {
namespace {

// Call sites of their own, so each case keeps its cached primitive.
constexpr int64_t kFrozenSite = 200, kPlainSite = 220;

void registerCase(int64_t m, int64_t n, int64_t k, int64_t index) {
  const std::string prefix = "linear_frozen/m" + std::to_string(m) + "_n" +
                             std::to_string(n) + "_k" + std::to_string(k);
  for (bool frozen : {true, false})
    add(prefix + (frozen ? "/txrt" : "/plain"), [=](benchmark::State &state) {
      Buffer x = randomBuffer(m * k, 1), w = randomBuffer(n * k, 2, 0.05f),
             bias = randomBuffer(n, 3), y(m * n);
      txrt_context_set_frozen_parameters(context(), frozen ? w.data() : nullptr,
                                         frozen ? size_t(n * k) * sizeof(float)
                                                : 0);
      const int64_t site = (frozen ? kFrozenSite : kPlainSite) + index;
      for (auto _ : state)
        if (!ok(state,
                txrt_linear_fwd(context(), site, m, n, k, x.data(), w.data(),
                                bias.data(), TXRT_ACTIVATION_RELU, nullptr,
                                y.data())))
          break;
      txrt_context_set_frozen_parameters(context(), nullptr, 0);
      state.counters["GFLOPS"] =
          benchmark::Counter(2.0 * double(m) * double(n) * double(k) *
                                 double(state.iterations()) * 1e-9,
                             benchmark::Counter::kIsRate);
    });
}

} // namespace

void registerPackedWeightsBenchmarks() {
  int64_t index = 0;
  for (int64_t m : {1, 8, 32, 512})
    for (int64_t n : {512, 2048})
      registerCase(m, n, 512, index++);
}

} // namespace txrt_bench
