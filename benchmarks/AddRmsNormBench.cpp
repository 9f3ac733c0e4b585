//===- AddRmsNormBench.cpp - fused add + RMS norm vs add, then RMS norm ---===//
//
// rows x 512 for rows in {512, 4096}: txrt_rms_norm_fwd with the residual
// (one pass: s = x + r written out, y = rms_norm(s)) against the unfused
// chain, oneDNN's binary add followed by txrt_rms_norm_fwd on the sum
// (oneDNN 2.6 has no RMS norm). The backward case compares the fused
// backward (x + r recomputed, no sum read) with the plain backward on the
// stored sum, the whole unfused backward (the add's gradient is the
// identity).
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <string>

namespace txrt_bench {
namespace {

using dnnl::memory;

constexpr int64_t kCols = 512;
constexpr float kEps = 1e-6f;

struct Buffers {
  Buffer x, r, s, y, gamma, dy, dx, dgamma;
  explicit Buffers(int64_t rows)
      : x(randomBuffer(rows * kCols, 1)), r(randomBuffer(rows * kCols, 2)),
        s(rows * kCols), y(rows * kCols), gamma(randomBuffer(kCols, 3)),
        dy(randomBuffer(rows * kCols, 5)), dx(rows * kCols), dgamma(kCols) {}
};

memory bind(const memory::desc &md, Buffer &buffer) {
  return memory(md, engine(), buffer.data());
}

void registerRows(int64_t rows) {
  std::string prefix = "add_rms_norm/" + std::to_string(rows) + "x512";
  add(prefix + "/fwd/txrt", [rows](benchmark::State &state) {
    Buffers b(rows);
    for (auto _ : state)
      if (!ok(state, txrt_rms_norm_fwd(context(), 1, rows, kCols, b.x.data(),
                                       b.r.data(), b.gamma.data(), kEps,
                                       b.y.data(), b.s.data())))
        break;
  });
  add(prefix + "/fwd/unfused", [rows](benchmark::State &state) {
    Buffers b(rows);
    memory::desc data = dense({rows, kCols});
    Baseline sum;
    sum.primitive = dnnl::binary(dnnl::binary::primitive_desc(
        dnnl::binary::desc(dnnl::algorithm::binary_add, data, data, data),
        engine()));
    sum.args = {{DNNL_ARG_SRC_0, bind(data, b.x)},
                {DNNL_ARG_SRC_1, bind(data, b.r)},
                {DNNL_ARG_DST, bind(data, b.s)}};
    for (auto _ : state) {
      sum.run();
      stream().wait();
      if (!ok(state, txrt_rms_norm_fwd(context(), 1, rows, kCols, b.s.data(),
                                       nullptr, b.gamma.data(), kEps,
                                       b.y.data(), nullptr)))
        break;
    }
  });
  add(prefix + "/bwd/txrt", [rows](benchmark::State &state) {
    Buffers b(rows);
    for (auto _ : state)
      if (!ok(state, txrt_rms_norm_bwd(context(), 2, rows, kCols, b.x.data(),
                                       b.r.data(), b.gamma.data(), kEps,
                                       b.dy.data(), nullptr, b.dx.data(),
                                       b.dgamma.data(), 0, 0)))
        break;
  });
  add(prefix + "/bwd/unfused", [rows](benchmark::State &state) {
    Buffers b(rows);
    for (auto _ : state)
      if (!ok(state, txrt_rms_norm_bwd(context(), 2, rows, kCols, b.s.data(),
                                       nullptr, b.gamma.data(), kEps,
                                       b.dy.data(), nullptr, b.dx.data(),
                                       b.dgamma.data(), 0, 0)))
        break;
  });
}

} // namespace

void registerAddRmsNormBenchmarks() {
  registerRows(512);
  registerRows(4096);
}

} // namespace txrt_bench
