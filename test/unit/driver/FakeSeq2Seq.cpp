//===- FakeSeq2Seq.cpp - a trainable stand-in for a txc seq2seq model -----===//
//
// Metadata version 2 and four entries with the names and shapes txc gives
// examples/translate, for a bag-of-words model small enough to write by
// hand (D = 8, vocabularies of 20):
//
//   h[b,t]      = tgt_embed[tgt[b,t]] + mean over non-pad s of memory[b,s]
//   memory[b,s] = src_embed[src[b,s]]
//   logits[b,t] = out.weight h[b,t] + out.bias
//
//   train       (train_step) src, tgt_in, tgt_out -> loss: mean
//               cross-entropy over non-pad tgt_out, backward, then
//               txrt_adam_update over the whole arena (params, grads and
//               moments are each one contiguous block) at the step
//               txrt_context_set_train_state gave; fails when it was not set
//   train_grad  (train_grad) the same without the update
//   encode      src -> memory f32[B, S, 8]
//   decode      tgt, memory, src -> logits f32[B, T, 20]
//
// Plain loops in a fixed order, so results are bit-identical run to run.
// Built twice: into TxrtDriverTests with the symbols fake_seq2seq_json /
// fake_seq2seq_entry_table, and with TXRT_FAKE_SEQ2SEQ_EXECUTABLE into the
// `fake-seq2seq` executable under txc's names.
//
//===----------------------------------------------------------------------===//
#include "core/ModelAbi.h"

#include "txrt/txrt.h"

#include <cmath>
#include <cstring>
#include <vector>

#ifdef TXRT_FAKE_SEQ2SEQ_EXECUTABLE
#define FAKE_SEQ2SEQ_JSON txc_model_json
#define FAKE_SEQ2SEQ_TABLE txc_entry_table
#else
#define FAKE_SEQ2SEQ_JSON fake_seq2seq_json
#define FAKE_SEQ2SEQ_TABLE fake_seq2seq_entry_table
#endif

extern "C" const char FAKE_SEQ2SEQ_JSON[] = R"json({
  "version": 2, "model": "fake_seq2seq", "kind": "seq2seq",
  "source": "test/unit/driver/FakeSeq2Seq.cpp", "compile_flags": "",
  "config": {"d_model": 8, "src_vocab": 20, "tgt_vocab": 20, "max_len": 7,
             "batch": 8, "pad": 0, "label_smoothing": 0.0},
  "dims": [{"name": "B", "bound": 8}, {"name": "S", "bound": 7},
           {"name": "T", "bound": 7}],
  "param_arena_bytes": 8000,
  "params": [
    {"name": "src_embed.weight", "dtype": "f32", "shape": [20, 8],
     "init": "xavier_uniform", "offset": 0, "grad_offset": 2000,
     "exp_avg_offset": 4000, "exp_avg_sq_offset": 6000},
    {"name": "tgt_embed.weight", "dtype": "f32", "shape": [20, 8],
     "init": "xavier_uniform", "offset": 640, "grad_offset": 2640,
     "exp_avg_offset": 4640, "exp_avg_sq_offset": 6640},
    {"name": "out.weight", "dtype": "f32", "shape": [20, 8],
     "init": "xavier_uniform", "offset": 1280, "grad_offset": 3280,
     "exp_avg_offset": 5280, "exp_avg_sq_offset": 7280},
    {"name": "out.bias", "dtype": "f32", "shape": [20], "init": "zeros",
     "offset": 1920, "grad_offset": 3920, "exp_avg_offset": 5920,
     "exp_avg_sq_offset": 7920}],
  "optimizer": {"name": "adam", "beta1": 0.9, "beta2": 0.98, "eps": 1e-9,
                "weight_decay": 0, "clip": 0,
                "lr": {"schedule": "constant", "value": 0.05}},
  "entries": [
    {"name": "train", "kind": "train_step", "arena_bytes": 0, "role": "train",
     "inputs": [{"name": "src", "role": "source", "dtype": "i32", "shape": ["B", "S"]},
                {"name": "tgt_in", "role": "target_in", "dtype": "i32", "shape": ["B", "T"]},
                {"name": "tgt_out", "role": "target_out", "dtype": "i32", "shape": ["B", "T"]}],
     "outputs": [{"name": "loss", "dtype": "f32", "shape": []}]},
    {"name": "train_grad", "kind": "train_grad", "arena_bytes": 0, "role": "train_grad",
     "inputs": [{"name": "src", "role": "source", "dtype": "i32", "shape": ["B", "S"]},
                {"name": "tgt_in", "role": "target_in", "dtype": "i32", "shape": ["B", "T"]},
                {"name": "tgt_out", "role": "target_out", "dtype": "i32", "shape": ["B", "T"]}],
     "outputs": [{"name": "loss", "dtype": "f32", "shape": []}]},
    {"name": "encode", "kind": "forward", "arena_bytes": 0, "role": "encode",
     "inputs": [{"name": "src", "role": "source", "dtype": "i32", "shape": ["B", "S"]}],
     "outputs": [{"name": "memory", "dtype": "f32", "shape": ["B", "S", 8]}]},
    {"name": "decode", "kind": "forward", "arena_bytes": 0, "role": "decode",
     "inputs": [{"name": "tgt", "role": "target_in", "dtype": "i32", "shape": ["B", "T"]},
                {"name": "memory", "role": "memory", "dtype": "f32", "shape": ["B", "S", 8]},
                {"name": "src", "role": "source", "dtype": "i32", "shape": ["B", "S"]}],
     "outputs": [{"name": "logits", "dtype": "f32",
                  "shape": ["B", "T", 20]}]}]
})json";

namespace {

constexpr int64_t kD = 8, kV = 20, kParamFloats = 500;
enum { kDimB = 0, kDimS = 1, kDimT = 2 };

struct Weights {
  float *srcEmbed, *tgtEmbed, *outWeight, *outBias;
  explicit Weights(float *base)
      : srcEmbed(base), tgtEmbed(base + kV * kD),
        outWeight(base + 2 * kV * kD), outBias(base + 3 * kV * kD) {}
};

/// The mean source embedding of each row (over non-pad positions).
std::vector<float> sourceMeans(const float *memory, const int32_t *src,
                               int64_t batch, int64_t srcLen) {
  std::vector<float> means(size_t(batch * kD), 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t count = 0;
    for (int64_t s = 0; s < srcLen; ++s) {
      if (src[b * srcLen + s] == 0)
        continue;
      ++count;
      for (int64_t d = 0; d < kD; ++d)
        means[size_t(b * kD + d)] += memory[(b * srcLen + s) * kD + d];
    }
    for (int64_t d = 0; d < kD && count > 0; ++d)
      means[size_t(b * kD + d)] /= float(count);
  }
  return means;
}

void hidden(const Weights &w, const std::vector<float> &means, int32_t token,
            int64_t b, float *h) {
  for (int64_t d = 0; d < kD; ++d)
    h[d] = w.tgtEmbed[token * kD + d] + means[size_t(b * kD + d)];
}

void project(const Weights &w, const float *h, float *logits) {
  for (int64_t v = 0; v < kV; ++v) {
    float sum = w.outBias[v];
    for (int64_t d = 0; d < kD; ++d)
      sum += w.outWeight[v * kD + d] * h[d];
    logits[v] = sum;
  }
}

int32_t encodeEntry(void *, void *params, void *, const int64_t *dims,
                    void *const *inputs, void *const *outputs) {
  Weights w(static_cast<float *>(params));
  const int32_t *src = static_cast<const int32_t *>(inputs[0]);
  float *memory = static_cast<float *>(outputs[0]);
  for (int64_t i = 0; i < dims[kDimB] * dims[kDimS]; ++i)
    std::memcpy(memory + i * kD, w.srcEmbed + src[i] * kD, kD * sizeof(float));
  return TXRT_OK;
}

int32_t decodeEntry(void *, void *params, void *, const int64_t *dims,
                    void *const *inputs, void *const *outputs) {
  Weights w(static_cast<float *>(params));
  const int32_t *tgt = static_cast<const int32_t *>(inputs[0]);
  const float *memory = static_cast<const float *>(inputs[1]);
  const int32_t *src = static_cast<const int32_t *>(inputs[2]);
  float *logits = static_cast<float *>(outputs[0]);
  const int64_t batch = dims[kDimB], tgtLen = dims[kDimT];
  std::vector<float> means = sourceMeans(memory, src, batch, dims[kDimS]);
  float h[kD];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < tgtLen; ++t) {
      hidden(w, means, tgt[b * tgtLen + t], b, h);
      project(w, h, logits + (b * tgtLen + t) * kV);
    }
  return TXRT_OK;
}

/// Forward and backward; gradients into the arena's gradient block.
float lossAndGradients(float *arena, const int64_t *dims,
                       void *const *inputs) {
  Weights w(arena), g(arena + kParamFloats);
  std::memset(arena + kParamFloats, 0, kParamFloats * sizeof(float));
  const int32_t *src = static_cast<const int32_t *>(inputs[0]);
  const int32_t *tgtIn = static_cast<const int32_t *>(inputs[1]);
  const int32_t *tgtOut = static_cast<const int32_t *>(inputs[2]);
  const int64_t batch = dims[kDimB], srcLen = dims[kDimS],
                tgtLen = dims[kDimT];
  std::vector<float> memory(size_t(batch * srcLen * kD));
  for (int64_t i = 0; i < batch * srcLen; ++i)
    std::memcpy(&memory[size_t(i * kD)], w.srcEmbed + src[i] * kD,
                kD * sizeof(float));
  std::vector<float> means = sourceMeans(memory.data(), src, batch, srcLen);
  int64_t tokens = 0;
  for (int64_t i = 0; i < batch * tgtLen; ++i)
    tokens += tgtOut[i] != 0;
  if (tokens == 0)
    return 0.0f;
  double loss = 0;
  float h[kD], logits[kV], dh[kD];
  for (int64_t b = 0; b < batch; ++b) {
    int64_t count = 0;
    for (int64_t s = 0; s < srcLen; ++s)
      count += src[b * srcLen + s] != 0;
    for (int64_t t = 0; t < tgtLen; ++t) {
      int32_t target = tgtOut[b * tgtLen + t];
      if (target == 0)
        continue;
      hidden(w, means, tgtIn[b * tgtLen + t], b, h);
      project(w, h, logits);
      float top = logits[0];
      for (int64_t v = 1; v < kV; ++v)
        top = std::fmax(top, logits[v]);
      float sum = 0;
      for (int64_t v = 0; v < kV; ++v)
        sum += std::exp(logits[v] - top);
      loss += double(top + std::log(sum) - logits[target]);
      std::memset(dh, 0, sizeof(dh));
      for (int64_t v = 0; v < kV; ++v) {
        float dlogit = (std::exp(logits[v] - top) / sum -
                        (v == target ? 1.0f : 0.0f)) /
                       float(tokens);
        g.outBias[v] += dlogit;
        for (int64_t d = 0; d < kD; ++d) {
          g.outWeight[v * kD + d] += dlogit * h[d];
          dh[d] += dlogit * w.outWeight[v * kD + d];
        }
      }
      for (int64_t d = 0; d < kD; ++d)
        g.tgtEmbed[tgtIn[b * tgtLen + t] * kD + d] += dh[d];
      for (int64_t s = 0; s < srcLen && count > 0; ++s) {
        int32_t id = src[b * srcLen + s];
        if (id == 0)
          continue;
        for (int64_t d = 0; d < kD; ++d)
          g.srcEmbed[id * kD + d] += dh[d] / float(count);
      }
    }
  }
  return float(loss / double(tokens));
}

int32_t trainGradEntry(void *, void *params, void *, const int64_t *dims,
                       void *const *inputs, void *const *outputs) {
  *static_cast<float *>(outputs[0]) =
      lossAndGradients(static_cast<float *>(params), dims, inputs);
  return TXRT_OK;
}

int32_t trainEntry(void *ctx, void *params, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  txrt_context *context = static_cast<txrt_context *>(ctx);
  int64_t step = txrt_context_train_step(context);
  float *arena = static_cast<float *>(params);
  *static_cast<float *>(outputs[0]) = lossAndGradients(arena, dims, inputs);
  // step == 0 (never set) makes txrt_adam_update fail: the driver must call
  // txrt_context_set_train_state first.
  return txrt_adam_update(context, 0, kParamFloats, arena,
                          arena + kParamFloats, arena + 2 * kParamFloats,
                          arena + 3 * kParamFloats, 0.05f, 0.9f, 0.98f, 1e-9f,
                          0.0f, step);
}

} // namespace

extern "C" const txc_entry_fn FAKE_SEQ2SEQ_TABLE[] = {
    trainEntry, trainGradEntry, encodeEntry, decodeEntry};
