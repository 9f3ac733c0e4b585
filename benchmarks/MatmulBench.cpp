//===- MatmulBench.cpp - linear fwd / bwd products vs bare oneDNN sgemm ---===//
//
// The base model's shapes at 512 tokens: x [512, in] . W[out, in]^T for
// in/out in {512/512, 512/2048, 2048/512, 512/8000 (vocab)}; forward (with
// bias, as compiled code calls it), the data gradient dx = dy . W and the
// weight gradient dW = dy^T . x, each against dnnl_sgemm with the same
// transposes on the same buffers.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <string>

namespace txrt_bench {
namespace {

struct LinearShape {
  const char *name;
  int64_t m, n, k; // tokens, out features, in features
};

const LinearShape kShapes[] = {{"512x512x512", 512, 512, 512},
                               {"512x2048x512", 512, 2048, 512},
                               {"512x512x2048", 512, 512, 2048},
                               {"512x8000x512", 512, 8000, 512}};

struct LinearBuffers {
  Buffer x, w, bias, y, dy, dx, dw;
  explicit LinearBuffers(const LinearShape &s)
      : x(randomBuffer(s.m * s.k, 1)), w(randomBuffer(s.n * s.k, 2, 0.05f)),
        bias(randomBuffer(s.n, 3)), y(s.m * s.n),
        dy(randomBuffer(s.m * s.n, 4)), dx(s.m * s.k), dw(s.n * s.k) {}
};

void setFlops(benchmark::State &state, const LinearShape &s) {
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * double(s.m) * s.n * s.k * double(state.iterations()) * 1e-9,
      benchmark::Counter::kIsRate);
}

void registerShape(const LinearShape &s) {
  const std::string prefix = std::string("matmul/") + s.name;
  // Forward: y = x . W^T + b
  add((prefix + "/fwd/txrt"), [s](benchmark::State &state) {
    LinearBuffers b(s);
    for (auto _ : state)
      if (!ok(state,
              txrt_linear_fwd(context(), 1, s.m, s.n, s.k, b.x.data(),
                              b.w.data(), b.bias.data(), TXRT_ACTIVATION_NONE,
                              nullptr, b.y.data())))
        break;
    setFlops(state, s);
  });
  add((prefix + "/fwd/sgemm"), [s](benchmark::State &state) {
    LinearBuffers b(s);
    for (auto _ : state)
      dnnl_sgemm('N', 'T', s.m, s.n, s.k, 1.0f, b.x.data(), s.k, b.w.data(),
                 s.k, 0.0f, b.y.data(), s.n);
    setFlops(state, s);
  });
  // Data gradient: dx = dy . W
  add((prefix + "/bwd_data/txrt"), [s](benchmark::State &state) {
    LinearBuffers b(s);
    for (auto _ : state)
      if (!ok(state, txrt_linear_bwd(context(), 2, s.m, s.n, s.k, b.x.data(),
                                     b.w.data(), b.dy.data(), b.dx.data(),
                                     nullptr, nullptr, 0, 0)))
        break;
    setFlops(state, s);
  });
  add((prefix + "/bwd_data/sgemm"), [s](benchmark::State &state) {
    LinearBuffers b(s);
    for (auto _ : state)
      dnnl_sgemm('N', 'N', s.m, s.k, s.n, 1.0f, b.dy.data(), s.n, b.w.data(),
                 s.k, 0.0f, b.dx.data(), s.k);
    setFlops(state, s);
  });
  // Weight gradient: dW = dy^T . x
  add((prefix + "/bwd_weights/txrt"), [s](benchmark::State &state) {
    LinearBuffers b(s);
    for (auto _ : state)
      if (!ok(state, txrt_linear_bwd(context(), 3, s.m, s.n, s.k, b.x.data(),
                                     b.w.data(), b.dy.data(), nullptr,
                                     b.dw.data(), nullptr, 0, 0)))
        break;
    setFlops(state, s);
  });
  add((prefix + "/bwd_weights/sgemm"), [s](benchmark::State &state) {
    LinearBuffers b(s);
    for (auto _ : state)
      dnnl_sgemm('T', 'N', s.n, s.k, s.m, 1.0f, b.dy.data(), s.n, b.x.data(),
                 s.k, 0.0f, b.dw.data(), s.k);
    setFlops(state, s);
  });
}

} // namespace

void registerMatmulBenchmarks() {
  for (const LinearShape &s : kShapes)
    registerShape(s);
}

} // namespace txrt_bench
