//===- RopeAttentionBench.cpp - attention with rotary embeddings ----------===//
//
// What rotary embeddings cost a Llama-style attention: B=8, h=8, d_k=64,
// T=S=256, causal. "txrt" runs what txc generates for
// attention(rope(Q), rope(K), V): txrt_rope on Q and K (into their own
// buffers), then the fused attention; backward, the fused attention's
// backward then the inverse rotation of dQ and dK. The baseline
// ("no_rope") is the same fused attention without the rotations. The
// ratio no_rope / txrt is what attention keeps of its speed with RoPE.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include <cmath>
#include <limits>
#include <string>

namespace txrt_bench {
namespace {

constexpr int64_t B = 8, H = 8, D = 64, T = 256, LD = H * D;
const float kNoFill = -std::numeric_limits<float>::infinity();
constexpr float kBase = 10000.0f;

struct Tensors {
  Buffer q, k, v, qr, kr, o, lse, dO, dq, dk, dv;
  std::vector<uint8_t> keep;
  Tensors()
      : q(randomBuffer(B * T * LD, 1)), k(randomBuffer(B * T * LD, 2)),
        v(randomBuffer(B * T * LD, 3)), qr(B * T * LD), kr(B * T * LD),
        o(B * T * LD), lse(B * H * T), dO(randomBuffer(B * T * LD, 4)),
        dq(B * T * LD), dk(B * T * LD), dv(B * T * LD), keep(B * T, 1) {}
};

txrt_status attentionForward(Tensors &x, const float *q, const float *k) {
  return txrt_attention_fwd(context(), 20, B, H, H, T, T, D, q, LD, k, LD,
                            x.v.data(), LD, x.o.data(), LD, x.lse.data(),
                            x.keep.data(), T, 0, 0, 1, /*causal=*/1,
                            1.0f / std::sqrt(float(D)), kNoFill, 0.0f, 0, 0);
}

txrt_status attentionBackward(Tensors &x, const float *q, const float *k) {
  return txrt_attention_bwd(context(), 21, 20, B, H, H, T, T, D, q, LD, k, LD,
                            x.v.data(), LD, x.o.data(), LD, x.lse.data(),
                            x.dO.data(), LD, x.dq.data(), LD, x.dk.data(), LD,
                            x.dv.data(), LD, x.keep.data(), T, 0, 0, 1,
                            /*causal=*/1, 1.0f / std::sqrt(float(D)), kNoFill,
                            0.0f, 0, 0);
}

txrt_status rope(const float *in, float *out, int32_t inverse, int64_t site) {
  return txrt_rope(context(), site, B, T, H, D, in, out, 0, kBase, inverse);
}

txrt_status ropeForward(Tensors &x) {
  txrt_status status = rope(x.q.data(), x.qr.data(), 0, 22);
  if (status == TXRT_OK)
    status = rope(x.k.data(), x.kr.data(), 0, 23);
  if (status == TXRT_OK)
    status = attentionForward(x, x.qr.data(), x.kr.data());
  return status;
}

txrt_status ropeBackward(Tensors &x) {
  txrt_status status = attentionBackward(x, x.qr.data(), x.kr.data());
  // The VJP of a rotation is the inverse rotation, in place on dQ and dK.
  if (status == TXRT_OK)
    status = rope(x.dq.data(), x.dq.data(), 1, 24);
  if (status == TXRT_OK)
    status = rope(x.dk.data(), x.dk.data(), 1, 25);
  return status;
}

} // namespace

void registerRopeAttentionBenchmarks() {
  const std::string prefix = "rope_attention/B8h8d64T256causal";
  add(prefix + "/fwd/txrt", [](benchmark::State &state) {
    Tensors x;
    for (auto _ : state)
      if (!ok(state, ropeForward(x)))
        break;
  });
  add(prefix + "/fwd/no_rope", [](benchmark::State &state) {
    Tensors x;
    for (auto _ : state)
      if (!ok(state, attentionForward(x, x.q.data(), x.k.data())))
        break;
  });
  add(prefix + "/bwd/txrt", [](benchmark::State &state) {
    Tensors x;
    if (!ok(state, ropeForward(x)))
      return;
    for (auto _ : state)
      if (!ok(state, ropeBackward(x)))
        break;
  });
  add(prefix + "/bwd/no_rope", [](benchmark::State &state) {
    Tensors x;
    if (!ok(state, attentionForward(x, x.q.data(), x.k.data())))
      return;
    for (auto _ : state)
      if (!ok(state, attentionBackward(x, x.q.data(), x.k.data())))
        break;
  });
}

} // namespace txrt_bench
