//===- AddLayerNormBench.cpp - fused add + layer norm vs add, then norm ---===//
//
// rows x 512 for rows in {512, 4096}: txrt_add_layer_norm_fwd (training:
// saves mean and variance) against oneDNN binary add followed by oneDNN
// layer_normalization forward-training. The backward case compares the fused
// backward (from the saved sum) with oneDNN's layer-norm backward, the whole
// unfused backward (the add's gradient is the identity).
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <string>

namespace txrt_bench {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;

constexpr int64_t kCols = 512;
constexpr float kEps = 1e-5f;

struct Buffers {
  Buffer x, r, s, y, gamma, beta, mean, var, dy, dx, dgamma, dbeta;
  explicit Buffers(int64_t rows)
      : x(randomBuffer(rows * kCols, 1)), r(randomBuffer(rows * kCols, 2)),
        s(rows * kCols), y(rows * kCols), gamma(randomBuffer(kCols, 3)),
        beta(randomBuffer(kCols, 4)), mean(rows), var(rows),
        dy(randomBuffer(rows * kCols, 5)), dx(rows * kCols), dgamma(kCols),
        dbeta(kCols) {}
};

memory bind(const memory::desc &md, Buffer &buffer) {
  return memory(md, engine(), buffer.data());
}

normalization_flags affine() {
  return normalization_flags::use_scale | normalization_flags::use_shift;
}

dnnl::layer_normalization_forward::primitive_desc forwardPd(int64_t rows) {
  return {dnnl::layer_normalization_forward::desc(
              dnnl::prop_kind::forward_training, dense({rows, kCols}),
              dense({rows}), kEps, affine()),
          engine()};
}

void registerRows(int64_t rows) {
  std::string prefix = "add_layer_norm/" + std::to_string(rows) + "x512";
  add(prefix + "/fwd/txrt", [rows](benchmark::State &state) {
    Buffers b(rows);
    for (auto _ : state)
      if (!ok(state, txrt_add_layer_norm_fwd(
                         context(), 1, rows, kCols, b.x.data(), b.r.data(),
                         b.gamma.data(), b.beta.data(), kEps, b.y.data(),
                         nullptr, b.mean.data(), b.var.data())))
        break;
  });
  add(prefix + "/fwd/unfused", [rows](benchmark::State &state) {
    Buffers b(rows);
    memory::desc data = dense({rows, kCols}), stats = dense({rows}),
                 vec = dense({kCols});
    Baseline sum, norm;
    sum.primitive = dnnl::binary(dnnl::binary::primitive_desc(
        dnnl::binary::desc(dnnl::algorithm::binary_add, data, data, data),
        engine()));
    sum.args = {{DNNL_ARG_SRC_0, bind(data, b.x)},
                {DNNL_ARG_SRC_1, bind(data, b.r)},
                {DNNL_ARG_DST, bind(data, b.s)}};
    norm.primitive = dnnl::layer_normalization_forward(forwardPd(rows));
    norm.args = {{DNNL_ARG_SRC, bind(data, b.s)},
                 {DNNL_ARG_DST, bind(data, b.y)},
                 {DNNL_ARG_SCALE, bind(vec, b.gamma)},
                 {DNNL_ARG_SHIFT, bind(vec, b.beta)},
                 {DNNL_ARG_MEAN, bind(stats, b.mean)},
                 {DNNL_ARG_VARIANCE, bind(stats, b.var)}};
    for (auto _ : state) {
      sum.run();
      norm.run();
      stream().wait();
    }
  });
  add(prefix + "/bwd/txrt", [rows](benchmark::State &state) {
    Buffers b(rows);
    if (!ok(state, txrt_add_layer_norm_fwd(
                       context(), 1, rows, kCols, b.x.data(), b.r.data(),
                       b.gamma.data(), b.beta.data(), kEps, b.y.data(),
                       b.s.data(), b.mean.data(), b.var.data())))
      return;
    for (auto _ : state)
      if (!ok(state, txrt_add_layer_norm_bwd(
                         context(), 2, rows, kCols, nullptr, nullptr,
                         b.s.data(), b.gamma.data(), b.mean.data(),
                         b.var.data(), kEps, b.dy.data(), nullptr, b.dx.data(),
                         b.dgamma.data(), b.dbeta.data(), 0, 0)))
        break;
  });
  add(prefix + "/bwd/unfused", [rows](benchmark::State &state) {
    Buffers b(rows);
    memory::desc data = dense({rows, kCols}), stats = dense({rows}),
                 vec = dense({kCols});
    if (!ok(state, txrt_add_layer_norm_fwd(
                       context(), 1, rows, kCols, b.x.data(), b.r.data(),
                       b.gamma.data(), b.beta.data(), kEps, b.y.data(),
                       b.s.data(), b.mean.data(), b.var.data())))
      return;
    Baseline norm;
    norm.primitive = dnnl::layer_normalization_backward(
        dnnl::layer_normalization_backward::primitive_desc(
            dnnl::layer_normalization_backward::desc(
                dnnl::prop_kind::backward, data, data, stats, kEps, affine()),
            engine(), forwardPd(rows)));
    norm.args = {{DNNL_ARG_SRC, bind(data, b.s)},
                 {DNNL_ARG_MEAN, bind(stats, b.mean)},
                 {DNNL_ARG_VARIANCE, bind(stats, b.var)},
                 {DNNL_ARG_DIFF_DST, bind(data, b.dy)},
                 {DNNL_ARG_DIFF_SRC, bind(data, b.dx)},
                 {DNNL_ARG_SCALE, bind(vec, b.gamma)},
                 {DNNL_ARG_SHIFT, bind(vec, b.beta)},
                 {DNNL_ARG_DIFF_SCALE, bind(vec, b.dgamma)},
                 {DNNL_ARG_DIFF_SHIFT, bind(vec, b.dbeta)}};
    for (auto _ : state) {
      norm.run();
      stream().wait();
    }
  });
}

} // namespace

void registerAddLayerNormBenchmarks() {
  registerRows(512);
  registerRows(4096);
}

} // namespace txrt_bench
