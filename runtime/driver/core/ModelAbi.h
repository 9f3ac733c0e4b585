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
 *    "float_configs": [KEY, ...] (optional: the config items that are
 *            floats, which JSON writes as integers when integral),
 *    "config_aliases": {KEY: KEY, ...} (optional: config items written as
 *            another's name, `src_vocab = vocab`, which no -D set; the
 *            driver's advice on a vocabulary names the item they follow),
 *    "inference_fingerprint": 16 hex digits (optional: txc's hash of the
 *            entries that do not train, dim bounds and locations left out;
 *            checkpoints record it, and a config that differs with the
 *            same fingerprint changes nothing those entries compute),
 *    "dims": [{"name": "B", "bound": 64, "config": KEY}, ...] ("config",
 *            optional: the config item the bound names, "" for a literal
 *            or an expression; the driver's advice on raising a bound),
 *    "size_configs": [KEY, ...] (optional: config items an entry input's
 *            shape names, `ids: i32[B, T]` with `config B = 8`: sizes,
 *            compared with a checkpoint's config as dim bounds are),
 *    "param_arena_bytes": N,
 *    "params": [{"name", "dtype", "shape": [ints], "init", "offset",
 *                "init_std" (only with init "normal": its standard
 *                deviation, 1 when absent)}, ...],
 *    "entries": [{"name", "arena_bytes", "tensor_bytes",
 *                 "inputs":  [{"name", "dtype", "shape": [int | dim name]}],
 *                 "outputs": [...]}, ...]}
 *   An i32 input may also have "ids": {"begin", "end", "also": [ints],
 *   "what"}: the values the compiled program can read from it, [begin, end)
 *   or one of `also` (found from what reads it: an embedding's rows,
 *   cross-entropy's classes and ignore_index); `run` refuses other ids,
 *   naming `what`. Without it any i32 value is valid (e.g. ids only compared
 *   with a pad id).
 *   An input the entry updates in place as a KV cache (decode_step's and
 *   lm_step's self-attention caches) has "writes_last_rows": a dim name or
 *   int: the entry writes that many rows (the new positions) at the end of
 *   its axis 1, rows N-rows .. N-1, so `run` refuses it when axis 1 has
 *   fewer rows (the write would start before the buffer).
 *
 * Version 2 adds training (present when the spec has a `train` entry and an
 * `optimizer`; a version 1 model, or one compiled without them, cannot
 * train):
 *   - every entry has "kind": "forward" | "train_step" | "train_grad".
 *     "train_step" (named like the spec's train entry, e.g. "train") runs
 *     forward, backward and the optimizer update in one call and outputs the
 *     loss (f32, shape []). "train_grad" (named "<train>_grad") runs forward
 *     and backward only, leaves the gradients in the parameter arena and
 *     outputs the loss; for gradient checks. Both have the train entry's
 *     inputs (src, tgt_in, tgt_out for the examples).
 *   - every parameter has "grad_offset", "exp_avg_offset" and
 *     "exp_avg_sq_offset": where its gradient and Adam's first and second
 *     moments (same dtype and shape) live in the parameter arena, which
 *     param_arena_bytes covers. The driver zero-fills the moments when it
 *     initializes a model; gradients are written by every training call.
 *   - "optimizer": {"name": "adam", "beta1", "beta2", "eps",
 *                   "weight_decay" (0 when absent), "clip" (global gradient
 *                   norm bound, 0 = none),
 *                   "lr": {"schedule": "noam", "d_model", "warmup",
 *                          "factor"} | {"schedule": "constant", "value"}}
 *     as the spec wrote it; the compiled step applies it (the driver only
 *     shows it, e.g. the current lr).
 *   - Before calling a training entry, the driver calls
 *     txrt_context_set_train_state(ctx, step, seed) (txrt.h): step is the
 *     1-based number of the update being taken (Adam's t, the lr
 *     schedule's step; train_grad uses it only for dropout), seed keys the
 *     dropout masks together with step. Same (params, moments, step, seed,
 *     batch) -> bit-identical results, which makes --resume exact.
 *
 *
 * Roles (version 2; absent keys read as kind "none" and empty roles): what
 * kind of model it is and what each entry and input means, so the driver
 * never matches names.
 *   - root "kind": "seq2seq" | "language_model" | "classifier" | "none"
 *     (declared by the spec's `kind` line; "none": only run, info, bench)
 *     and "kind_inferred": true when the spec declared no kind and txc
 *     inferred seq2seq from the legacy names (train(src, tgt_in, tgt_out),
 *     encode(src), decode(tgt, memory, src)).
 *   - every entry "role" (unique among entries, "" = only `run`):
 *       seq2seq:        "train", "train_grad", "encode", "decode",
 *                       "decode_init", "decode_step"
 *       language_model: "train", "train_grad", "logits", "lm_step"
 *       classifier:     "train", "train_grad", "classify"
 *   - every entry input "role" (at most once per entry, except "cache"):
 *       seq2seq:        "source" (ids), "target_in" (decoder input: the
 *                       target shifted right, [SOS] first; the prefix in
 *                       decode), "target_out" (labels), "memory" (encoder
 *                       output), "cache"
 *       language_model: "tokens" (ids), "targets" (the next token at each
 *                       position, pad where there is none), "cache",
 *                       "cache_ids" (lm_step: the ids of every cached
 *                       position, [B, cache], new ones last; the padding
 *                       mask over the cache reads it)
 *       classifier:     "tokens", "segments" (token-type ids), "label"
 *                       (class ids, i32[B])
 *     and every entry output "role": "" (or "cache", reserved for caches
 *     returned as outputs; today's caches are updated in place).
 *   - train entries' "loss" (optional): {"form": "cross_entropy",
 *     "targets": INPUT NAME, "ignore_index": N} when the loss is one
 *     cross-entropy of that input's ids (the mean over its positions whose
 *     id is not N; the driver weights the pieces of a batch by them), else
 *     {"form": "other"}.
 *   - decode_step's and lm_step's "cache" inputs ([B, cache, d], one key and
 *     one value cache per self-attention, in order) are updated in place:
 *     the T new positions' keys and values are written at rows
 *     cache-T .. cache-1; the entries return only the logits.
 *   - lm_step(tokens [B, T], cache_ids [B, cache], caches...) -> logits
 *     [B, T, V]: tokens are the T new positions' ids, cache_ids all ids so
 *     far (the new ones last); batched prompts are left-padded.
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
