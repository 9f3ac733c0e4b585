//===- BenchUtil.cpp - shared pieces of the kernel benchmarks -------------===//
#include "BenchUtil.h"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace txrt_bench {

txrt_context *context() {
  static txrt_context *ctx = [] {
    txrt_context *created = nullptr;
    if (txrt_context_create(&created) != TXRT_OK) {
      std::fprintf(stderr, "txrt-bench: %s\n", txrt_last_error(nullptr));
      std::exit(1);
    }
    return created;
  }();
  return ctx;
}

dnnl::engine &engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream &stream() {
  static dnnl::stream s(engine());
  return s;
}

Buffer randomBuffer(size_t n, unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  Buffer values(n);
  for (float &v : values)
    v = dist(gen);
  return values;
}

bool ok(benchmark::State &state, txrt_status status) {
  if (status == TXRT_OK)
    return true;
  state.SkipWithError(txrt_last_error(context()));
  return false;
}

dnnl::memory::desc dense(const dnnl::memory::dims &dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = int(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strided(dims, strides);
}

dnnl::memory::desc strided(const dnnl::memory::dims &dims,
                           const dnnl::memory::dims &strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

} // namespace txrt_bench
