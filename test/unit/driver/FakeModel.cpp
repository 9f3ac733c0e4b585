//===- FakeModel.cpp - a hand-written stand-in for a txc object file ------===//
//
// Defines txc_model_json and txc_entry_table exactly as txc's generated
// object file does (ModelAbi.h), for a tiny model:
//
//   param  proj.weight f32[4, 3]  (xavier_uniform)
//   entry  apply(x: f32[B, 3]) -> (y: f32[B, 4])        y = x W^T, plain loops
//   entry  lengths(ids: i32[B, T]) -> (n: i32[B])       non-pad ids per row
//                                                       (ids declared to
//                                                       index 10 rows)
//   entry  fail(x: f32[B, 3]) -> (y: f32[B, 4])         calls txrt_linear_fwd
//                                                       with w = NULL: the
//                                                       runtime's error path
//
// Linked with txrt_driver (main) into the `fake-model` executable, and into
// TxrtDriverTests for in-process runs of the driver.
//
//===----------------------------------------------------------------------===//
#include "core/ModelAbi.h"

#include "txrt/txrt.h"

extern "C" const char txc_model_json[] = R"json({
  "version": 1, "model": "fake", "source": "test/unit/driver/FakeModel.cpp",
  "compile_flags": "-D vocab=10",
  "config": {"d_in": 3, "d_out": 4, "vocab": 10, "pad": 0, "dropout": 0.1},
  "dims": [{"name": "B", "bound": 8}, {"name": "T", "bound": 5}],
  "param_arena_bytes": 128,
  "params": [{"name": "proj.weight", "dtype": "f32", "shape": [4, 3],
              "init": "xavier_uniform", "offset": 0}],
  "entries": [
    {"name": "apply", "arena_bytes": 64, "tensor_bytes": 160,
     "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 3]}],
     "outputs": [{"name": "y", "dtype": "f32", "shape": ["B", 4]}]},
    {"name": "lengths", "arena_bytes": 0, "tensor_bytes": 0,
     "inputs": [{"name": "ids", "dtype": "i32", "shape": ["B", "T"],
                 "ids": {"begin": 0, "end": 10, "also": [],
                         "what": "the 10 rows of the embedding 'emb'"}}],
     "outputs": [{"name": "n", "dtype": "i32", "shape": ["B"]}]},
    {"name": "fail", "arena_bytes": 64, "tensor_bytes": 160,
     "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 3]}],
     "outputs": [{"name": "y", "dtype": "f32", "shape": ["B", 4]}]}
  ]
})json";

namespace {

enum { kFakeDimB = 0, kFakeDimT = 1 };

int32_t applyEntry(void *, void *params, void *, const int64_t *dims,
                   void *const *inputs, void *const *outputs) {
  const float *w = static_cast<const float *>(params);
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  for (int64_t b = 0; b < dims[kFakeDimB]; ++b)
    for (int64_t o = 0; o < 4; ++o) {
      float sum = 0;
      for (int64_t i = 0; i < 3; ++i)
        sum += x[b * 3 + i] * w[o * 3 + i];
      y[b * 4 + o] = sum;
    }
  return TXRT_OK;
}

int32_t lengthsEntry(void *, void *, void *, const int64_t *dims,
                     void *const *inputs, void *const *outputs) {
  const int32_t *ids = static_cast<const int32_t *>(inputs[0]);
  int32_t *n = static_cast<int32_t *>(outputs[0]);
  for (int64_t b = 0; b < dims[kFakeDimB]; ++b) {
    n[b] = 0;
    for (int64_t t = 0; t < dims[kFakeDimT]; ++t)
      n[b] += ids[b * dims[kFakeDimT] + t] != 0;
  }
  return TXRT_OK;
}

int32_t failEntry(void *ctx, void *, void *, const int64_t *dims,
                  void *const *inputs, void *const *outputs) {
  return txrt_linear_fwd(static_cast<txrt_context *>(ctx), 1, dims[kFakeDimB],
                         4, 3, static_cast<const float *>(inputs[0]), nullptr,
                         nullptr, TXRT_ACTIVATION_NONE, nullptr,
                         static_cast<float *>(outputs[0]));
}

} // namespace

extern "C" const txc_entry_fn txc_entry_table[] = {applyEntry, lengthsEntry,
                                                   failEntry};
