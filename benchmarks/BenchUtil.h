//===- BenchUtil.h - shared pieces of the kernel benchmarks -----*- C++ -*-===//
//
// One libtxrt context and one oneDNN engine/stream for the baselines, both
// with the same thread count; random buffers; a check that turns a failing
// status into a benchmark error. Benchmark names are
// "<group>/<case>/<impl>": the script pairs "txrt" with the group's baseline.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_BENCHMARKS_BENCHUTIL_H
#define TXRT_BENCHMARKS_BENCHUTIL_H

#include "txrt/txrt.h"

#include <benchmark/benchmark.h>
#include <dnnl.hpp>

#include <cstdlib>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace txrt_bench {

/// The shared libtxrt context (threads from TXRT_NUM_THREADS or all cores).
txrt_context *context();

/// The oneDNN engine and stream of the baselines.
dnnl::engine &engine();
dnnl::stream &stream();

/// 64-byte aligned storage, as the compiled model's arenas are (the planner
/// aligns every tensor, the driver the arena): a std::vector's 16-byte
/// alignment splits every vector load and store across two cache lines.
template <typename T> struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U> AlignedAllocator(const AlignedAllocator<U> &) {}
  T *allocate(size_t n) {
    size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
    if (!p)
      throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t) { std::free(p); }
  template <typename U> bool operator==(const AlignedAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const AlignedAllocator<U> &) const {
    return false;
  }
};
using Buffer = std::vector<float, AlignedAllocator<float>>;

Buffer randomBuffer(size_t n, unsigned seed, float scale = 1.0f);

/// Stops the benchmark with the runtime's message unless status is ok.
bool ok(benchmark::State &state, txrt_status status);

/// A dense f32 descriptor, and one with explicit strides.
dnnl::memory::desc dense(const dnnl::memory::dims &dims);
dnnl::memory::desc strided(const dnnl::memory::dims &dims,
                           const dnnl::memory::dims &strides);

/// A baseline primitive and its argument map, built once.
struct Baseline {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  void run() { primitive.execute(stream(), args); }
};

/// Registers `body` as a benchmark timed in wall-clock microseconds (the
/// kernels are multi-threaded).
template <typename Body> void add(const std::string &name, Body &&body) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Body>(body))
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

/// Registers every benchmark of a file (called from main).
void registerMatmulBenchmarks();
void registerPackedProjectionBenchmarks();
void registerPackedWeightsBenchmarks();
void registerAttentionBenchmarks();
void registerAddLayerNormBenchmarks();
void registerAddRmsNormBenchmarks();
void registerRopeAttentionBenchmarks();
void registerDenormalsBenchmarks();

} // namespace txrt_bench

#endif // TXRT_BENCHMARKS_BENCHUTIL_H
