/* A program that embeds a --precision=bf16 model: it reads the f32
 * parameters (raw, at their offsets), optionally refreshes the bf16 copies
 * through the header's txc_refresh_bf16_copies, runs `logits` on ids
 * 4..7 (B = 1, T = 4) and writes the logits raw to argv[3].
 *   embed_bf16 PARAMS.bin refresh|stale LOGITS.bin */
#include "model.h"
#include "txrt/txrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  txrt_context *ctx;
  if (txrt_context_create(&ctx) != TXRT_OK)
    return 1;
  size_t bytes = (size_t)((TXC_PARAM_ARENA_BYTES + 63) / 64 * 64);
  void *params = aligned_alloc(64, bytes);
  void *arena = aligned_alloc(64, (size_t)((TXC_LOGITS_ARENA_BYTES + 63) / 64 * 64));
  if (!params || !arena)
    return 1;
  memset(params, 0, bytes);
  FILE *in = fopen(argv[1], "rb");
  if (!in || fread(params, 1, (size_t)TXC_PARAM_ARENA_BYTES, in) !=
                 (size_t)TXC_PARAM_ARENA_BYTES)
    return 1;
  fclose(in);
  if (strcmp(argv[2], "refresh") == 0)
    txc_refresh_bf16_copies(params);
  int32_t ids[4] = {4, 5, 6, 7};
  static float logits[4 * 64];
  const int64_t dims[] = {1, 4, 1};
  void *inputs[] = {ids};
  void *outputs[] = {logits};
  int32_t status = txc_entry_logits(ctx, params, arena, dims, inputs, outputs);
  if (status) {
    fprintf(stderr, "status %d: %s\n", (int)status, txrt_last_error(ctx));
    return 1;
  }
  FILE *out = fopen(argv[3], "wb");
  if (!out || fwrite(logits, sizeof logits, 1, out) != 1)
    return 1;
  fclose(out);
  txrt_context_destroy(ctx);
  free(params); /* the sanitizer build's LeakSanitizer counts them */
  free(arena);
  return 0;
}
