/*===- two_models_harness.c - two compiled models in one program --------===*
 *
 * Links two specs compiled with `txc --emit=obj --symbol-prefix=scale` and
 * `--symbol-prefix=shift` (both with an entry `fwd`, glue kernels and
 * constants: with txc's fixed names they failed to link, multiple
 * definitions). Both headers are included in one ISO C translation unit
 * (their include guards, typedefs, macros and inline functions must not
 * clash), and each entry computes its own model's function.
 *
 *===----------------------------------------------------------------------===*/
#include "scale.h"
#include "shift.h"
#include "txrt/txrt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *zeroed(size_t bytes) {
  void *memory = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory)
    memset(memory, 0, bytes);
  return memory;
}

int main(void) {
  txrt_context *ctx;
  if (txrt_context_create(&ctx) != TXRT_OK)
    return 1;
  /* scale: relu(x @ W^T) * 2.5 + 1 with W all ones (2 x 3). */
  float *params = zeroed(SCALE_PARAM_ARENA_BYTES);
  void *scale_arena = zeroed(SCALE_FWD_ARENA_BYTES + 64);
  void *shift_arena = zeroed(SHIFT_FWD_ARENA_BYTES + 64);
  if (!params || !scale_arena || !shift_arena)
    return 1;
  for (size_t i = 0; i < SCALE_PARAM_ARENA_BYTES / sizeof(float); ++i)
    params[i] = 1.0f;
  scale_refresh_bf16_copies(params);
  shift_refresh_bf16_copies(NULL);
  float x[2 * 3] = {1.0f, -2.0f, 0.5f, 3.0f, 1.0f, 1.0f};
  float y_scale[2 * 2], y_shift[2 * 3];
  const int64_t dims[] = {2};
  void *inputs[] = {x};
  void *scale_out[] = {y_scale};
  void *shift_out[] = {y_shift};
  int32_t status =
      scale_entry_fwd(ctx, params, scale_arena, dims, inputs, scale_out);
  printf("scale: status %d:", (int)status);
  for (int i = 0; i < 4; ++i)
    printf(" %g", y_scale[i]);
  status = shift_entry_table[0](ctx, NULL, shift_arena, dims, inputs,
                                shift_out);
  printf("\nshift: status %d:", (int)status);
  int close = 1;
  for (int i = 0; i < 6; ++i)
    close &= fabsf(y_shift[i] - (tanhf(x[i]) - 0.5f)) < 1e-6f;
  printf(" %s tanh(x) - 0.5\n", close ? "equals" : "DIFFERS FROM");
  printf("json: %.15s | %.15s\n", strstr(scale_model_json, "\"model\""),
         strstr(shift_model_json, "\"model\""));
  txrt_context_destroy(ctx);
  free(params);
  free(scale_arena);
  free(shift_arena);
  return 0;
}
