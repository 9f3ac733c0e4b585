/*===- empty_batch_harness.c - an entry called with an empty dim ----------===*
 *
 * Links a model compiled with `txc --emit=obj` and calls one entry (argv[1]:
 * its name; ENTRY_NAMES, "a,b,c", gives txc_entry_table's order, which
 * empty_batch_build.py reads from the metadata) with the dims given in
 * argv[3..] (an empty
 * batch, B = 0, or an empty sequence, T = 0), which codegen.md accepts.
 * The parameter arena (values, gradients, moments) and the activation
 * arena start filled with the bytes 0x40 (the float 3.0039215), so a
 * kernel that writes nothing for an empty size leaves them there; the
 * inputs are zeros and the outputs start as 7. Prints the status and the
 * first output's first float, then writes the parameter arena to argv[2]
 * for check-empty-gradients.py.
 *
 *===----------------------------------------------------------------------===*/
#include "model.h"
#include "txrt/txrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *filled(size_t bytes, int byte) {
  size_t rounded = (bytes + 63) / 64 * 64;
  void *memory = aligned_alloc(64, rounded ? rounded : 64);
  if (memory)
    memset(memory, byte, rounded);
  return memory;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s ENTRY PARAMS.bin DIM...\n", argv[0]);
    return 2;
  }
  int entry = -1, index = 0;
  size_t length = strlen(argv[1]);
  for (const char *name = ENTRY_NAMES; *name; ++index) {
    const char *end = strchr(name, ',');
    size_t size = end ? (size_t)(end - name) : strlen(name);
    if (size == length && strncmp(name, argv[1], length) == 0)
      entry = index;
    name += size + (end ? 1 : 0);
  }
  if (entry < 0) {
    fprintf(stderr, "no entry '%s' in %s\n", argv[1], ENTRY_NAMES);
    return 2;
  }
  int64_t dims[16];
  int rank = argc - 3;
  for (int i = 0; i < rank && i < 16; ++i)
    dims[i] = atoll(argv[3 + i]);
  txrt_context *ctx;
  if (txrt_context_create(&ctx) != TXRT_OK)
    return 1;
  txrt_context_set_train_state(ctx, 1, 0);
  void *params = filled(TXC_PARAM_ARENA_BYTES, 0x40);
  /* Larger than any entry's arena of the models the test compiles. */
  void *arena = filled(64u << 20, 0x40);
  void *inputs[8], *outputs[8];
  for (int i = 0; i < 8; ++i) {
    inputs[i] = filled(1u << 16, 0);
    outputs[i] = filled(1u << 16, 0);
    for (int j = 0; j < (1 << 14); ++j)
      ((float *)outputs[i])[j] = 7.0f;
  }
  int32_t status =
      txc_entry_table[entry](ctx, params, arena, dims, inputs, outputs);
  printf("status %d%s%s, output %g\n", (int)status, status ? ": " : "",
         status ? txrt_last_error(ctx) : "", ((float *)outputs[0])[0]);
  FILE *file = fopen(argv[2], "wb");
  if (!file ||
      fwrite(params, 1, TXC_PARAM_ARENA_BYTES, file) != TXC_PARAM_ARENA_BYTES)
    return 1;
  fclose(file);
  txrt_context_destroy(ctx);
  return 0;
}
