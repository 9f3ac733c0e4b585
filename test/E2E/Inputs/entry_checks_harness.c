/*===- entry_checks_harness.c - what a compiled entry refuses ------------===*
 *
 * Links examples/copy compiled with `txc --emit=obj` (model.h, included
 * as ISO C: the header must compile with -std=c11 -pedantic-errors) and
 * calls its `encode` entry with good arguments, then with each kind of bad
 * one: a dim over its bound (it ran past the arena), a negative dim, NULL
 * dims, arena, inputs, an input pointer and outputs. Each bad call must
 * return a status, not crash, and name the problem; the good call after
 * them must still work. Then `decode_step` with a KV cache shorter than the
 * new positions (cache 1, T 3: each dim in its range), which wrote the new
 * keys before the caller's cache buffers: refused, the guard floats in
 * front of the buffers untouched. Prints one line per call.
 *
 *===----------------------------------------------------------------------===*/
#include "model.h"
#include "txrt/txrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *zeroed(size_t bytes) {
  void *memory = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory)
    memset(memory, 0, bytes);
  return memory;
}

static txrt_context *ctx;
static void *params, *arena;
static int32_t src[16 * 24];
static float memory[16 * 24 * 64];

static void call(const char *what, const int64_t *dims, void *use_arena,
                 void *const *inputs, void *const *outputs) {
  int32_t status = txc_entry_encode(ctx, params, use_arena, dims, inputs,
                                    outputs);
  printf("%s: status %d%s%s\n", what, (int)status, status ? ": " : "",
         status ? txrt_last_error(ctx) : "");
}

int main(void) {
  if (txrt_context_create(&ctx) != TXRT_OK)
    return 1;
  params = zeroed(TXC_PARAM_ARENA_BYTES);
  arena = zeroed(TXC_ENCODE_ARENA_BYTES);
  if (!params || !arena)
    return 1;
  for (int i = 0; i < 16 * 24; ++i)
    src[i] = 4 + i % 5;
  void *inputs[] = {src};
  void *outputs[] = {memory};
  void *null_input[] = {NULL};
  /* B <= 16, S <= 24 (T and cache unused by encode) */
  const int64_t good[] = {2, 5, 1, 1};
  const int64_t over_b[] = {17, 5, 1, 1};
  const int64_t over_s[] = {2, 25, 1, 1};
  const int64_t negative[] = {-1, 5, 1, 1};
  const int64_t two[] = {2, 5}; /* only the dims encode reads */
  call("good", good, arena, inputs, outputs);
  call("B over", over_b, arena, inputs, outputs);
  call("S over", over_s, arena, inputs, outputs);
  call("negative", negative, arena, inputs, outputs);
  call("NULL dims", NULL, arena, inputs, outputs);
  call("NULL arena", good, NULL, inputs, outputs);
  call("NULL inputs", good, arena, NULL, outputs);
  call("NULL input", good, arena, null_input, outputs);
  call("NULL outputs", good, arena, inputs, NULL);
  call("two dims", two, arena, inputs, outputs);
  {
    /* An output in an input's buffer: wrong outputs with status 0. */
    void *aliased[] = {src};
    call("output is input", good, arena, inputs, aliased);
  }
  {
    /* The parameter arena: NULL was a segfault in the first kernel. */
    void *kept = params;
    params = NULL;
    call("NULL params", good, arena, inputs, outputs);
    params = kept;
  }

  /* decode_step: B, S, T, cache; each cache buffer has 512 guard floats
   * before it. */
  enum { kGuard = 512, kCache = 4 * 64 };
  void *step_arena = zeroed(TXC_DECODE_STEP_ARENA_BYTES);
  float *buffers[4];
  static float cross[4][2 * 64];
  static float logits[3 * 16];
  static int32_t tgt[3] = {1, 4, 5}, src2[2] = {4, 5};
  void *step_inputs[10];
  step_inputs[0] = tgt;
  step_inputs[1] = src2;
  int next_cross = 0;
  /* inputs 2, 3 and 6, 7: the layers' self-attention caches; 4, 5 and 8,
   * 9: their cross-attention keys and values. */
  for (int layer = 0; layer < 2; ++layer)
    for (int kv = 0; kv < 2; ++kv) {
      float *buffer = zeroed((kGuard + kCache) * sizeof(float));
      if (!buffer)
        return 1;
      for (int g = 0; g < kGuard; ++g)
        buffer[g] = 12345.0f;
      buffers[layer * 2 + kv] = buffer;
      step_inputs[2 + layer * 4 + kv] = buffer + kGuard;
      step_inputs[4 + layer * 4 + kv] = cross[next_cross++];
    }
  void *step_outputs[] = {logits};
  const int64_t short_cache[] = {1, 2, 3, 1};
  const int64_t fits[] = {1, 2, 3, 3};
  const int64_t *cases[] = {short_cache, fits};
  const char *names[] = {"short cache", "cache fits"};
  for (int c = 0; c < 2; ++c) {
    int32_t status = txc_entry_decode_step(ctx, params, step_arena, cases[c],
                                           step_inputs, step_outputs);
    int touched = 0;
    for (int i = 0; i < 4; ++i)
      for (int g = 0; g < kGuard; ++g)
        touched += buffers[i][g] != 12345.0f;
    printf("%s: status %d%s%s; %d guard floats changed\n", names[c],
           (int)status, status ? ": " : "", status ? txrt_last_error(ctx) : "",
           touched);
  }
  for (int i = 0; i < 4; ++i)
    free(buffers[i]);
  free(step_arena);
  free(params);
  free(arena);
  txrt_context_destroy(ctx);
  return 0;
}
