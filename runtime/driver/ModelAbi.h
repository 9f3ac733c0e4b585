/*===- ModelAbi.h - the contract between txc's object file and the driver -===*
 *
 * A compiled model object exports, with C linkage:
 *
 *   const char txc_model_json[];            NUL-terminated metadata (below)
 *   const txc_entry_fn txc_entry_table[];   one function per entry, in the
 *                                           order of "entries" in the JSON
 *
 * An entry is called as entry(ctx, params, arena, dims, inputs, outputs):
 * ctx is a txrt_context*; params the parameter arena (param_arena_bytes,
 * 64-byte aligned, filled by the driver); arena the entry's activation arena
 * (its arena_bytes, 64-byte aligned, scratch); dims the runtime value of every
 * model dim in the order of "dims" (1 <= value <= bound); inputs / outputs
 * dense row-major buffers with the runtime dims (f32 -> float, i32 ->
 * int32_t, bool -> uint8_t 0/1). It returns a txrt status, 0 = ok; on failure
 * txrt_last_error(ctx) has the message.
 *
 * The metadata (version 1):
 *   {"version": 1, "model": NAME, "source": PATH, "compile_flags": TEXT,
 *    "config": {KEY: NUMBER, ...},
 *    "dims": [{"name": "B", "bound": 64}, ...],
 *    "param_arena_bytes": N,
 *    "params": [{"name", "dtype", "shape": [ints], "init", "offset"}, ...],
 *    "entries": [{"name", "arena_bytes", "tensor_bytes",
 *                 "inputs":  [{"name", "dtype", "shape": [int | dim name]}],
 *                 "outputs": [...]}, ...]}
 *
 *===----------------------------------------------------------------------===*/
#ifndef TXRT_DRIVER_MODELABI_H
#define TXRT_DRIVER_MODELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t (*txc_entry_fn)(void *ctx, void *params, void *arena,
                                const int64_t *dims, void *const *inputs,
                                void *const *outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TXRT_DRIVER_MODELABI_H */
