//===- AttentionBench.cpp - fused attention vs the unfused oneDNN chain ---===//
//
// B=8, h=8, d_k=64, T=S in {64, 256}. The baseline ("unfused") is the chain
// a framework runs: oneDNN matmul (scale and additive mask as attributes) ->
// oneDNN softmax -> oneDNN matmul, keeping the probabilities for backward;
// its backward is four matmuls and the softmax backward. It reads and writes
// the same [B, T, h*d_k] buffers as the fused kernels (strided descriptors,
// no head-split copies). "unfused_split" is the same chain on [B, h, T, d_k]
// buffers, the layout oneDNN likes best, as if the head split were free.
// The fused kernels keep only the log-sum-exp. Padding mask: a [B, 1, 1, S]
// keep mask (all visible, so both do the full work; the kernel takes its
// key-length path); "causal" adds the causal mask to both; "leftpad" masks
// the first key of every row (left padding: the kernel reads the mask key by
// key, with the same work otherwise). "bf16" is the fused kernel with bf16
// block products (txrt_attention_fwd_bf16 / _bwd_bf16); scripts/
// bench-kernels.sh prints it against the f32 kernel ("txrt").
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <cmath>
#include <limits>
#include <string>

namespace txrt_bench {
namespace {

using dnnl::memory;

constexpr int64_t B = 8, H = 8, D = 64;
/// Masked keys drop out (no masked_fill value).
const float kNoFill = -std::numeric_limits<float>::infinity();

struct Tensors {
  int64_t t;
  Buffer q, k, v, o, lse, dO, dq, dk, dv, probs, dprobs, dscores, mask;
  std::vector<uint8_t> keep;
  explicit Tensors(int64_t t, bool causal, bool leftPad = false)
      : t(t), q(randomBuffer(B * t * H * D, 1)),
        k(randomBuffer(B * t * H * D, 2)), v(randomBuffer(B * t * H * D, 3)),
        o(B * t * H * D), lse(B * H * t), dO(randomBuffer(B * t * H * D, 4)),
        dq(B * t * H * D), dk(B * t * H * D), dv(B * t * H * D),
        probs(B * H * t * t), dprobs(B * H * t * t), dscores(B * H * t * t),
        keep(B * t, 1) {
    // Additive mask of the baseline: [B, 1, 1, S] padding (all visible), or
    // [B, 1, T, S] causal (oneDNN 2.6 has only a reference matmul for a
    // [1, 1, T, S] post-op operand).
    if (causal) {
      mask.assign(B * t * t, 0.0f);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < t; ++i)
          for (int64_t j = i + 1; j < t; ++j)
            mask[(b * t + i) * t + j] = -1e9f;
    } else {
      mask.assign(B * t, 0.0f);
    }
    if (leftPad)
      for (int64_t b = 0; b < B; ++b) {
        keep[b * t] = 0;
        if (!causal)
          mask[b * t] = -1e9f;
      }
  }
};

memory bind(const memory::desc &md, Buffer &buffer) {
  return memory(md, engine(), buffer.data());
}

/// The unfused chain's primitives. With `headsSplit`, Q, K, V, O and their
/// gradients are [B, h, T, d] buffers (the layout oneDNN likes best, as if
/// the head split had been copied for free); otherwise the chain reads and
/// writes the same [B, T, h*d] buffers as the fused kernels, through strided
/// descriptors.
struct Unfused {
  Baseline scores, softmax, values;                      // forward
  Baseline dvalues, dprobs, softmaxBwd, dqueries, dkeys; // backward

  Unfused(Tensors &x, bool causal, bool headsSplit) {
    const int64_t T = x.t;
    const float scale = 1.0f / std::sqrt(float(D));
    memory::desc qd = headsSplit
                          ? dense({B, H, T, D})
                          : strided({B, H, T, D}, {T * H * D, D, H * D, 1});
    memory::desc kT = headsSplit
                          ? strided({B, H, D, T}, {H * T * D, T * D, 1, D})
                          : strided({B, H, D, T}, {T * H * D, D, 1, H * D});
    memory::desc sd = dense({B, H, T, T});
    memory::desc sT = strided({B, H, T, T}, {H * T * T, T * T, 1, T});
    memory::desc maskd = causal ? dense({B, 1, T, T}) : dense({B, 1, 1, T});

    auto matmul = [&](const memory::desc &a, const memory::desc &b,
                      const memory::desc &c, float alpha, bool withMask) {
      dnnl::primitive_attr attr;
      if (alpha != 1.0f)
        attr.set_output_scales(0, {alpha});
      if (withMask) {
        dnnl::post_ops ops;
        ops.append_binary(dnnl::algorithm::binary_add, maskd);
        attr.set_post_ops(ops);
      }
      return dnnl::matmul(dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(a, b, c), attr, engine()));
    };
    scores.primitive = matmul(qd, kT, sd, scale, true);
    scores.args = {{DNNL_ARG_SRC, bind(qd, x.q)},
                   {DNNL_ARG_WEIGHTS, bind(kT, x.k)},
                   {DNNL_ARG_DST, bind(sd, x.probs)},
                   {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                    bind(maskd, x.mask)}};

    dnnl::softmax_v2_forward::primitive_desc softmaxPd(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_training,
                                       dnnl::algorithm::softmax_accurate, sd,
                                       sd, 3),
        engine());
    softmax.primitive = dnnl::softmax_v2_forward(softmaxPd);
    softmax.args = {{DNNL_ARG_SRC, bind(sd, x.probs)},
                    {DNNL_ARG_DST, bind(sd, x.probs)}};

    values.primitive = matmul(sd, qd, qd, 1.0f, false);
    values.args = {{DNNL_ARG_SRC, bind(sd, x.probs)},
                   {DNNL_ARG_WEIGHTS, bind(qd, x.v)},
                   {DNNL_ARG_DST, bind(qd, x.o)}};

    dvalues.primitive = matmul(sT, qd, qd, 1.0f, false); // dV = P^T dO
    dvalues.args = {{DNNL_ARG_SRC, bind(sT, x.probs)},
                    {DNNL_ARG_WEIGHTS, bind(qd, x.dO)},
                    {DNNL_ARG_DST, bind(qd, x.dv)}};
    dprobs.primitive = matmul(qd, kT, sd, 1.0f, false); // dP = dO V^T
    dprobs.args = {{DNNL_ARG_SRC, bind(qd, x.dO)},
                   {DNNL_ARG_WEIGHTS, bind(kT, x.v)},
                   {DNNL_ARG_DST, bind(sd, x.dprobs)}};
    softmaxBwd.primitive =
        dnnl::softmax_v2_backward(dnnl::softmax_v2_backward::primitive_desc(
            dnnl::softmax_v2_backward::desc(dnnl::algorithm::softmax_accurate,
                                            sd, sd, sd, 3),
            engine(), softmaxPd));
    softmaxBwd.args = {{DNNL_ARG_DST, bind(sd, x.probs)},
                       {DNNL_ARG_DIFF_DST, bind(sd, x.dprobs)},
                       {DNNL_ARG_DIFF_SRC, bind(sd, x.dscores)}};
    dqueries.primitive = matmul(sd, qd, qd, scale, false); // dQ = s dS K
    dqueries.args = {{DNNL_ARG_SRC, bind(sd, x.dscores)},
                     {DNNL_ARG_WEIGHTS, bind(qd, x.k)},
                     {DNNL_ARG_DST, bind(qd, x.dq)}};
    dkeys.primitive = matmul(sT, qd, qd, scale, false); // dK = s dS^T Q
    dkeys.args = {{DNNL_ARG_SRC, bind(sT, x.dscores)},
                  {DNNL_ARG_WEIGHTS, bind(qd, x.q)},
                  {DNNL_ARG_DST, bind(qd, x.dk)}};
  }
  void forward() {
    scores.run();
    softmax.run();
    values.run();
    stream().wait();
  }
  void backward() {
    dvalues.run();
    dprobs.run();
    softmaxBwd.run();
    dqueries.run();
    dkeys.run();
    stream().wait();
  }
};

/// The fused kernel in f32 or with bf16 block products
/// (txrt_attention_fwd_bf16 / _bwd_bf16, "bf16" below).
txrt_status fusedForward(Tensors &x, bool causal, bool bf16 = false) {
  const int64_t T = x.t, ld = H * D;
  return (bf16 ? txrt_attention_fwd_bf16 : txrt_attention_fwd)(
      context(), 10, B, H, H, T, T, D, x.q.data(), ld, x.k.data(), ld,
      x.v.data(), ld, x.o.data(), ld, x.lse.data(), x.keep.data(), T, 0, 0, 1,
      causal, 1.0f / std::sqrt(float(D)), kNoFill, 0.0f, 0, 0);
}

txrt_status fusedBackward(Tensors &x, bool causal, bool bf16 = false) {
  const int64_t T = x.t, ld = H * D;
  return (bf16 ? txrt_attention_bwd_bf16 : txrt_attention_bwd)(
      context(), 11, 10, B, H, H, T, T, D, x.q.data(), ld, x.k.data(), ld,
      x.v.data(), ld, x.o.data(), ld, x.lse.data(), x.dO.data(), ld,
      x.dq.data(), ld, x.dk.data(), ld, x.dv.data(), ld, x.keep.data(), T, 0, 0,
      1, causal, 1.0f / std::sqrt(float(D)), kNoFill, 0.0f, 0, 0);
}

void registerCase(int64_t t, bool causal, bool leftPad = false) {
  std::string prefix =
      "attention/B8h8d64T" + std::to_string(t) + (causal ? "causal" : "") +
      (leftPad ? "leftpad" : "");
  add(prefix + "/fwd/txrt", [t, causal, leftPad](benchmark::State &state) {
    Tensors x(t, causal, leftPad);
    for (auto _ : state)
      if (!ok(state, fusedForward(x, causal)))
        break;
  });
  add(prefix + "/bwd/txrt", [t, causal, leftPad](benchmark::State &state) {
    Tensors x(t, causal, leftPad);
    if (!ok(state, fusedForward(x, causal)))
      return;
    for (auto _ : state)
      if (!ok(state, fusedBackward(x, causal)))
        break;
  });
  add(prefix + "/fwd/bf16", [t, causal, leftPad](benchmark::State &state) {
    Tensors x(t, causal, leftPad);
    for (auto _ : state)
      if (!ok(state, fusedForward(x, causal, true)))
        break;
  });
  add(prefix + "/bwd/bf16", [t, causal, leftPad](benchmark::State &state) {
    Tensors x(t, causal, leftPad);
    if (!ok(state, fusedForward(x, causal, true)))
      return;
    for (auto _ : state)
      if (!ok(state, fusedBackward(x, causal, true)))
        break;
  });
  for (bool split : {false, true}) {
    std::string name = split ? "unfused_split" : "unfused";
    add(prefix + "/fwd/" + name, [t, causal, leftPad, split](benchmark::State &state) {
      Tensors x(t, causal, leftPad);
      Unfused chain(x, causal, split);
      for (auto _ : state)
        chain.forward();
    });
    add(prefix + "/bwd/" + name, [t, causal, leftPad, split](benchmark::State &state) {
      Tensors x(t, causal, leftPad);
      Unfused chain(x, causal, split);
      chain.forward();
      for (auto _ : state)
        chain.backward();
    });
  }
}

/// Rows longer than a key block (256) whose log-sum-exp is large (|lse| >=
/// 16) are normalized by their own sums over the key blocks in the
/// backward, a first pass of S = Q K^T (AttentionTest.BackwardDvCancels-
/// AConstantInLongRows): "txrt" has such rows (Q scaled by 64), "small_
/// scores" none, the same kernel and shapes; the ratio is that pass's cost.
void registerLongRowCase(int64_t t) {
  const std::string group =
      "attention/B8h8d64T" + std::to_string(t) + "longrow/bwd/";
  for (bool large : {true, false})
    add(group + (large ? "txrt" : "small_scores"),
        [t, large](benchmark::State &state) {
          Tensors x(t, false);
          if (large)
            for (float &value : x.q)
              value *= 64.0f;
          if (!ok(state, fusedForward(x, false)))
            return;
          for (auto _ : state)
            if (!ok(state, fusedBackward(x, false)))
              break;
        });
}

} // namespace

void registerAttentionBenchmarks() {
  registerCase(64, false);
  registerCase(256, false);
  registerCase(256, true);
  registerCase(256, false, /*leftPad=*/true);
  registerLongRowCase(512);
}

} // namespace txrt_bench
