/*===- txrt_cuda.h - libtxrt_cuda: the runtime calls on an NVIDIA GPU -*- C -*-===*
 *
 * The CUDA backend of libtxrt (docs/cuda.md). Each kernel mirrors the CPU
 * call of the same name in txrt.h (txrt_linear_fwd -> txrt_cuda_linear_fwd):
 * the same arguments in the same order and the same semantics, except that
 *
 *  - the context is a txrt_cuda_context (device, stream, cuBLASLt handle and
 *    workspace), and every float / int32_t buffer is a DEVICE pointer
 *    (txrt_cuda_malloc); host scalars stay host values;
 *  - kernels are queued on the context's stream and return at once; results
 *    are visible on the host after txrt_cuda_synchronize (or a copy back,
 *    which synchronizes). A failure of an earlier launch may be reported by
 *    a later call or by txrt_cuda_synchronize;
 *  - outputs that the CPU call returns as host values (the loss of
 *    txrt_cuda_cross_entropy_fwd, its row count) are device buffers here too.
 *
 * Arithmetic is strict fp32 (cuBLASLt with CUBLAS_COMPUTE_32F) unless
 * TXRT_CUDA_OPTION_ALLOW_TF32 is set to 1 (PyTorch's allow_tf32). Dropout
 * draws from the CPU kernel's Philox4x32-10 stream: the same (seed, step,
 * site) drops the same elements on both devices.
 *
 * Nothing here links the CUDA driver: libcuda.so.1 is loaded with dlopen on
 * first use, so a program built with this backend starts on a machine
 * without an NVIDIA driver and txrt_cuda_probe says what is missing. The same
 * holds for cuBLASLt (libcublasLt.so.13, found on the library path or at
 * TXRT_CUBLASLT=/path/libcublasLt.so.13).
 *
 *===----------------------------------------------------------------------===*/
#ifndef TXRT_TXRT_CUDA_H
#define TXRT_TXRT_CUDA_H

#include "txrt/txrt.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Devices, context, buffers
 *===----------------------------------------------------------------------===*/

/** Loads the CUDA driver (dlopen libcuda.so.1) and counts the devices. On
 *  failure (no driver library, a driver older than the CUDA runtime this was
 *  built with, no device) returns TXRT_ERROR_BACKEND with one line in
 *  txrt_cuda_last_error(NULL) naming what is missing. out_devices may be
 *  NULL. */
txrt_status txrt_cuda_probe(int32_t *out_devices);

typedef struct txrt_cuda_context txrt_cuda_context;

/** Creates a context on device `device` (0-based): a non-blocking stream,
 *  a cuBLASLt handle and its workspace. On failure *out_ctx is NULL and the
 *  message is available from txrt_cuda_last_error(NULL). */
txrt_status txrt_cuda_context_create(int32_t device,
                                     txrt_cuda_context **out_ctx);

/** Makes ctx the context whose stream runs the kernels that txc generates
 *  (the glue of a --target=cuda executable, launched through the mgpu*
 *  functions of runtime/cuda/GeneratedKernels.cpp) on the calling thread.
 *  txrt_cuda_context_create makes the new context current. */
void txrt_cuda_context_make_current(txrt_cuda_context *ctx);

/** The device copy of one of the spec's constants (`host`, `bytes` long, in
 *  the executable's read-only data), made on `ctx`'s stream at the first
 *  call and returned again after it; freed with the context. The code
 *  `txc --target=cuda` generates calls it wherever an entry takes a
 *  constant's address. NULL on failure, which the next
 *  txrt_cuda_synchronize reports. */
void *txrt_cuda_constant(txrt_cuda_context *ctx, const void *host,
                         int64_t bytes);

/** Waits for the context's work and releases it. NULL is a no-op. */
void txrt_cuda_context_destroy(txrt_cuda_context *ctx);

/** The message of the last failure on ctx (or of probe / create with NULL);
 *  "" when none. Valid until the next call on the same context. */
const char *txrt_cuda_last_error(const txrt_cuda_context *ctx);

/** Options of txrt_cuda_context_set_option. */
enum {
  /** 1: fp32 GEMMs may use TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32);
   *  0 (default): strict fp32. */
  TXRT_CUDA_OPTION_ALLOW_TF32 = 1,
};

txrt_status txrt_cuda_context_set_option(txrt_cuda_context *ctx,
                                         int32_t option, int64_t value);

/** As txrt_context_set_train_state / txrt_train_state: the 1-based
 *  optimizer step and the dropout seed that compiled train steps read (host
 *  values). */
void txrt_cuda_context_set_train_state(txrt_cuda_context *ctx, int64_t step,
                                       uint64_t seed);
txrt_status txrt_cuda_train_state(txrt_cuda_context *ctx, int64_t *out_step,
                                  int64_t *out_seed);
/** As txrt_check_entry (host pointers: dims, the index and bound arrays and
 *  the pointer arrays; arena and the tensors they point to are device
 *  memory, checked for NULL only), claims included. */
txrt_status txrt_cuda_check_entry(
    txrt_cuda_context *ctx, const int64_t *dims, const int64_t *dim_index,
    const int64_t *dim_bound, int64_t num_checked, const void *arena,
    int64_t arena_bytes, const void *const *inputs, int64_t num_inputs,
    const void *const *outputs, int64_t num_outputs, const void *params,
    int64_t params_bytes);
/** As txrt_entry_done. */
txrt_status txrt_cuda_entry_done(txrt_cuda_context *ctx, const void *arena);
/** As txrt_check_cache_rows. */
txrt_status txrt_cuda_check_cache_rows(txrt_cuda_context *ctx, int64_t input,
                                       int64_t written, int64_t held);
/** As txrt_check_dim_min. */
txrt_status txrt_cuda_check_dim_min(txrt_cuda_context *ctx, int64_t dim_index,
                                    int64_t value, int64_t minimum);

/** As txrt_context_set_batch_rows: the next calls train rows
 *  [first_row, first_row + rows) of the update's batch, so dropout (and
 *  the fused attention's) draws the masks of those rows in the whole batch;
 *  rows 0 (the default): the call is the whole batch. */
void txrt_cuda_context_set_batch_rows(txrt_cuda_context *ctx,
                                      int64_t first_row, int64_t rows);

/*===----------------------------------------------------------------------===*
 * Gradient accumulation and data parallelism over NCCL (docs/distributed.md)
 *===----------------------------------------------------------------------===*/

/** As txrt_context_set_gradient_mode (TXRT_GRADIENTS_UPDATE, _ACCUMULATE,
 *  _APPLY from txrt.h): what txrt_cuda_adam_step does with the gradients of
 *  the next training calls. The accumulators are device buffers of the
 *  context, in allreduce buckets laid out as the CPU's. */
txrt_status txrt_cuda_context_set_gradient_mode(txrt_cuda_context *ctx,
                                                int32_t mode, float scale);

/** As txrt_context_set_gradient_clip. */
txrt_status txrt_cuda_context_set_gradient_clip(txrt_cuda_context *ctx,
                                                float clip);

/** Bytes of the id txrt_cuda_nccl_unique_id makes (NCCL_UNIQUE_ID_BYTES). */
#define TXRT_CUDA_NCCL_ID_BYTES 128

/** NCCL's version code (2.28.9: 22809), opening libnccl.so.2 (or the path
 *  in TXRT_NCCL) on first use; fails with the reason when it cannot. */
txrt_status txrt_cuda_nccl_version(int32_t *out_version);

/** A fresh NCCL id into out_id (TXRT_CUDA_NCCL_ID_BYTES): rank 0 makes it,
 *  the launcher's channel (MPI_Bcast) gives it to every rank. */
txrt_status txrt_cuda_nccl_unique_id(void *out_id, size_t bytes);

/** Joins rank `rank` of `ranks` over NCCL on the context's device (one
 *  rank per GPU; blocks until every rank has joined). Every later APPLY
 *  sums the buckets over the ranks (ncclAllReduce on a second stream, each
 *  bucket as soon as the backward pass completed it) and keeps the Adam
 *  updates for txrt_cuda_context_finish_update. */
txrt_status txrt_cuda_context_join_ranks(txrt_cuda_context *ctx, int32_t rank,
                                         int32_t ranks, const void *nccl_id,
                                         size_t id_bytes);

/** As txrt_context_finish_update: waits for every bucket's allreduce and
 *  enqueues the updates that waited for it (the caller synchronizes). */
txrt_status txrt_cuda_context_finish_update(txrt_cuda_context *ctx);

/** As txrt_context_allreduce_stats. */
void txrt_cuda_context_allreduce_stats(const txrt_cuda_context *ctx,
                                       double *out_wait_seconds,
                                       int64_t *out_bytes);

/** The device's name, its memory in bytes and its compute capability. */
txrt_status txrt_cuda_device_info(txrt_cuda_context *ctx, char *out_name,
                                  size_t name_size, uint64_t *out_bytes,
                                  int32_t *out_major, int32_t *out_minor);

/** Device memory: bytes (0 gives NULL); failure names the size and what
 *  the device has free. */
txrt_status txrt_cuda_malloc(txrt_cuda_context *ctx, size_t bytes,
                             void **out_ptr);
txrt_status txrt_cuda_free(txrt_cuda_context *ctx, void *ptr);
/** Copies on the context's stream; the _to_host copy waits for it. */
txrt_status txrt_cuda_copy_to_device(txrt_cuda_context *ctx, void *dst,
                                     const void *src, size_t bytes);
txrt_status txrt_cuda_copy_to_host(txrt_cuda_context *ctx, void *dst,
                                   const void *src, size_t bytes);
/** One strided copy of txrt_cuda_copy_rows: `height` rows of `width`
 *  bytes, row r from src + r * src_pitch to dst + r * dst_pitch. */
typedef struct txrt_cuda_row_copy {
  void *dst;
  const void *src;
  size_t dst_pitch, src_pitch, width, height;
} txrt_cuda_row_copy;
/** Within device memory, queued on ctx's stream: `count` strided copies
 *  (no destination may overlap a source), up to 32 in one launch; and
 *  `height` rows of `width` zero bytes at dst + r * pitch. The driver's
 *  resident KV caches are regrown with them (a model's caches in one
 *  launch; runtime/driver/core/ResidentTensor.h). */
txrt_status txrt_cuda_copy_rows(txrt_cuda_context *ctx,
                                const txrt_cuda_row_copy *copies,
                                int64_t count);
txrt_status txrt_cuda_zero_rows(txrt_cuda_context *ctx, void *dst,
                                size_t pitch, size_t width, size_t height);
/** The most excluded ids txrt_cuda_argmax_rows takes. */
#define TXRT_CUDA_ARGMAX_MAX_EXCLUDED 16
/** Greedy decoding's choice, queued on ctx's stream: ids[r] (device
 *  memory) is the first id of the largest of row r's `vocab` logits (device
 *  memory at logits + r * row_stride) among the allowed ids, exactly as the
 *  driver's host search chooses: ids at or past `emittable` (when 0 <
 *  emittable < vocab) and the `excluded_count` (at most
 *  TXRT_CUDA_ARGMAX_MAX_EXCLUDED) ids of `excluded` (host memory) read as
 *  -infinity; ties go to the lowest id; a NaN never wins except at id 0
 *  (where nothing replaces it); a row with nothing above -infinity gives 0.
 *  A choice whose logit is not finite (NaN, +-infinity as written) is
 *  written as -1 - id, for the caller to refuse.
 *  runtime/cuda/kernels/ArgmaxKernels.cuh. */
txrt_status txrt_cuda_argmax_rows(txrt_cuda_context *ctx, const float *logits,
                                  int64_t rows, int64_t vocab,
                                  int64_t row_stride, int64_t emittable,
                                  const int32_t *excluded,
                                  int64_t excluded_count, int32_t *ids);
/** train --ema's update (the executable's driver calls it after every train
 *  step, runtime/driver/loop/Ema.h), queued on ctx's stream over n floats
 *  of device memory: average[i] = decay * average[i] + (1 - decay) *
 *  params[i], each product rounded before the sum (no FMA), bit for bit as
 *  the driver's host updateAverage. decay in [0, 1]. */
txrt_status txrt_cuda_update_average(txrt_cuda_context *ctx, float *average,
                                     const float *params, int64_t n,
                                     float decay);
/** Waits for every kernel queued on ctx; reports the first failure, and
 *  the first bad input a kernel found on the device (an embedding id or a
 *  cross-entropy target out of range) as TXRT_ERROR_INVALID_ARGUMENT. */
txrt_status txrt_cuda_synchronize(txrt_cuda_context *ctx);

/*===----------------------------------------------------------------------===*
 * CUDA graphs: a step captured once, replayed
 *===----------------------------------------------------------------------===*/

typedef struct txrt_cuda_graph txrt_cuda_graph;

/** Starts capturing the calls queued on ctx's stream into a graph instead of
 *  running them (cudaStreamBeginCapture). Every txrt_cuda_* kernel may be
 *  captured; copies to the host and txrt_cuda_synchronize may not. Inside a
 *  capture, dropout, attention (with dropout) and txrt_cuda_adam_step read
 *  the training step and seed, and Adam's step-dependent scalars, from a
 *  device buffer of the context that txrt_cuda_context_set_train_state
 *  rewrites, so each replay computes the step it was set for; their seed
 *  and step arguments must be the context's training state. Refused
 *  (TXRT_ERROR_BACKEND) with gradient accumulation, data-parallel ranks or
 *  a piece of the batch set (txrt_cuda_context_set_batch_rows); a
 *  txrt_cuda_adam_update inside fails the call. */
txrt_status txrt_cuda_capture_begin(txrt_cuda_context *ctx);

/** Ends the capture and instantiates the graph: *out_graph replays the
 *  captured calls with the same buffers and scalars (the step-dependent
 *  ones above read at replay). Fails when a call inside broke the capture
 *  (nothing of it ran); a host-side failure of a call inside (its status)
 *  leaves a partial graph the caller must destroy. */
txrt_status txrt_cuda_capture_end(txrt_cuda_context *ctx,
                                  txrt_cuda_graph **out_graph);

/** Queues one replay of `graph` on ctx's stream;
 *  TXRT_ERROR_INVALID_ARGUMENT when the context is not replayable now
 *  (txrt_cuda_graph_replayable). */
txrt_status txrt_cuda_graph_launch(txrt_cuda_context *ctx,
                                   txrt_cuda_graph *graph);

/** 1 when a captured step may be replayed on ctx now (no gradient
 *  accumulation, data-parallel ranks or piece of the batch set, not
 *  capturing), else 0. */
int32_t txrt_cuda_graph_replayable(const txrt_cuda_context *ctx);

/** Releases a graph. NULL is a no-op. */
void txrt_cuda_graph_destroy(txrt_cuda_graph *graph);

/*===----------------------------------------------------------------------===*
 * GEMM (cuBLASLt)
 *===----------------------------------------------------------------------===*/

/** As txrt_linear_fwd: y = act(x w^T + bias) + residual. The bias alone,
 *  or with ReLU, runs in cuBLASLt's epilogue (a residual without activation
 *  as its C); GELU (both forms), SiLU and a residual after an activation in
 *  a kernel of our own. */
txrt_status txrt_cuda_linear_fwd(txrt_cuda_context *ctx, int64_t site,
                                 int64_t m, int64_t n, int64_t k,
                                 const float *x, const float *w,
                                 const float *bias, int32_t activation,
                                 const float *residual, float *y);

/** As txrt_matmul (strides are host arrays): one cuBLASLt GEMM per batch
 *  into the workspace (batch0 * batch1 * m * n <= 4M), then
 *  c = act(alpha A.B + bias) + residual + beta c_old at c's strides, the
 *  order of the CPU kernel's oneDNN post-ops. */
txrt_status txrt_cuda_matmul(txrt_cuda_context *ctx, int64_t site,
                             int64_t batch0, int64_t batch1, int64_t m,
                             int64_t n, int64_t k, const float *a,
                             const int64_t *a_strides, const float *b,
                             const int64_t *b_strides, float *c,
                             const int64_t *c_strides, const float *bias,
                             int32_t activation, const float *residual,
                             float alpha, float beta);

/** As txrt_linear_gated_fwd: y = act(x w^T + bias) * gate + residual; y
 *  may be the residual, not the gate (m * n <= 4M: the product is staged in
 *  the context's workspace). */
txrt_status txrt_cuda_linear_gated_fwd(txrt_cuda_context *ctx, int64_t site,
                                       int64_t m, int64_t n, int64_t k,
                                       const float *x, const float *w,
                                       const float *bias, int32_t activation,
                                       const float *gate,
                                       const float *residual, float *y);

/** As txrt_linear_bwd. */
txrt_status txrt_cuda_linear_bwd(txrt_cuda_context *ctx, int64_t site,
                                 int64_t m, int64_t n, int64_t k,
                                 const float *x, const float *w,
                                 const float *dy, float *dx, float *dw,
                                 float *dbias, int32_t accumulate_dx,
                                 int32_t accumulate_params);

/*===----------------------------------------------------------------------===*
 * Own kernels (runtime/cuda/*.cu, built for sm_80 and sm_90)
 *===----------------------------------------------------------------------===*/

/** As txrt_layer_norm_fwd (mean and var may be NULL). */
txrt_status txrt_cuda_layer_norm_fwd(txrt_cuda_context *ctx, int64_t site,
                                     int64_t rows, int64_t cols,
                                     const float *x, const float *gamma,
                                     const float *beta, float eps, float *y,
                                     float *mean, float *var);

/** As txrt_layer_norm_bwd (mean and var both NULL: recomputed). */
txrt_status txrt_cuda_layer_norm_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *gamma, const float *mean, const float *var,
    float eps, const float *dy, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params);

/** As txrt_add_layer_norm_fwd (gamma not NULL). */
txrt_status txrt_cuda_add_layer_norm_fwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *gamma, const float *beta,
    float eps, float *y, float *out_sum, float *mean, float *var);

/** As txrt_add_layer_norm_bwd (sum NULL: x + r; mean and var NULL:
 *  recomputed). */
txrt_status txrt_cuda_add_layer_norm_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t rows, int64_t cols,
    const float *x, const float *r, const float *sum, const float *gamma,
    const float *mean, const float *var, float eps, const float *dy,
    const float *dsum, float *dx, float *dgamma, float *dbeta,
    int32_t accumulate_dx, int32_t accumulate_params);

/** As txrt_rms_norm_fwd (y may alias x or r). */
txrt_status txrt_cuda_rms_norm_fwd(txrt_cuda_context *ctx, int64_t site,
                                   int64_t rows, int64_t cols, const float *x,
                                   const float *r, const float *gamma,
                                   float eps, float *y, float *out_sum);

/** As txrt_rms_norm_bwd (the row statistics are recomputed, as on the CPU,
 *  into the context's workspace). */
txrt_status txrt_cuda_rms_norm_bwd(txrt_cuda_context *ctx, int64_t site,
                                   int64_t rows, int64_t cols, const float *x,
                                   const float *r, const float *gamma,
                                   float eps, const float *dy,
                                   const float *dsum, float *dx, float *dgamma,
                                   int32_t accumulate_dx,
                                   int32_t accumulate_params);

/** As txrt_activation_fwd (y may alias x). */
txrt_status txrt_cuda_activation_fwd(txrt_cuda_context *ctx, int64_t site,
                                     int32_t activation, int64_t n,
                                     const float *x, float *y);

/** As txrt_activation_bwd (dx may alias dy). */
txrt_status txrt_cuda_activation_bwd(txrt_cuda_context *ctx, int64_t site,
                                     int32_t activation, int64_t n,
                                     const float *x, const float *dy,
                                     float *dx);

/** As txrt_binary (dims are host arrays, tensors device buffers). */
txrt_status txrt_cuda_binary(txrt_cuda_context *ctx, int64_t site, int32_t op,
                             int32_t rank, const int64_t *a_dims,
                             const float *a, const int64_t *b_dims,
                             const float *b, float *c);

/** As txrt_reduce (summed in double). */
txrt_status txrt_cuda_reduce(txrt_cuda_context *ctx, int64_t site, int32_t op,
                             int32_t rank, const int64_t *x_dims,
                             const float *x, const int64_t *y_dims, float *y);

/** As txrt_argmax (the first maximum of each row). */
txrt_status txrt_cuda_argmax(txrt_cuda_context *ctx, int64_t site,
                             int64_t rows, int64_t cols, const float *x,
                             int32_t *out);

/** As txrt_softmax_fwd (y may alias x). */
txrt_status txrt_cuda_softmax_fwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t rows, int64_t cols, const float *x,
                                  float *y, int32_t log_softmax);

/** As txrt_softmax_bwd (dx may alias dy). */
txrt_status txrt_cuda_softmax_bwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t rows, int64_t cols, const float *y,
                                  const float *dy, float *dx,
                                  int32_t log_softmax);

/** As txrt_sum_squares: accumulator[0] (a device buffer) += sum x^2, summed
 *  in double by one block (a gradient norm over an arena). */
txrt_status txrt_cuda_sum_squares(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, const float *x,
                                  float *accumulator);

/** As txrt_cross_entropy_fwd; out_loss [1] and out_count [1] (or NULL) are
 *  device buffers. A counted target outside [0, classes) gives a NaN row
 *  loss and is reported by the next txrt_cuda_synchronize. Without out_row_loss the row
 *  losses go to the context's workspace (at most 8M rows). */
txrt_status txrt_cuda_cross_entropy_fwd(
    txrt_cuda_context *ctx, int64_t site, int64_t n, int64_t classes,
    const float *logits, const int32_t *targets, int32_t ignore_index,
    float label_smoothing, int32_t reduction, float *out_loss, float *lse,
    float *out_row_loss, int64_t *out_count);

/** As txrt_cross_entropy_bwd (lse NULL: recomputed); dloss [1] is a device
 *  buffer. */
txrt_status txrt_cuda_cross_entropy_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t n, int64_t classes,
    const float *logits, const int32_t *targets, const float *lse,
    int32_t ignore_index, float label_smoothing, int32_t reduction,
    const float *dloss, float *dlogits);

/** As txrt_embedding_fwd, except that an id outside [0, vocab) (ids live on
 *  the device) is reported by the next txrt_cuda_synchronize, naming the
 *  first such id and its index; its row is pos only and its gradient is
 *  dropped. */
txrt_status txrt_cuda_embedding_fwd(txrt_cuda_context *ctx, int64_t site,
                                    int64_t n, int64_t vocab, int64_t dim,
                                    const int32_t *ids, const float *table,
                                    float scale, const float *pos,
                                    int64_t seq_len, float *out);

/** As txrt_embedding_bwd, with one difference: the scatter-add uses atomics,
 *  so sums over repeated ids are not bitwise deterministic (they agree with
 *  the CPU's to rounding). */
txrt_status txrt_cuda_embedding_bwd(txrt_cuda_context *ctx, int64_t site,
                                    int64_t n, int64_t vocab, int64_t dim,
                                    const int32_t *ids, const float *dout,
                                    float scale, int32_t padding_idx,
                                    float *dtable, int32_t accumulate);

/** As txrt_gather (ids, src, out on the device); an index outside [-n, n)
 *  is reported by the next txrt_cuda_synchronize. */
txrt_status txrt_cuda_gather(txrt_cuda_context *ctx, int64_t site,
                             int64_t outer, int64_t n, int64_t inner,
                             int64_t element_bytes, const int32_t *ids,
                             int64_t count, const void *src, void *out);

/** As txrt_gather_bwd, with atomics (not bitwise deterministic where ids
 *  repeat). */
txrt_status txrt_cuda_gather_bwd(txrt_cuda_context *ctx, int64_t site,
                                 int64_t outer, int64_t n, int64_t inner,
                                 const int32_t *ids, int64_t count,
                                 const float *dout, float *dsrc);

/** As txrt_rope (head_dim <= 512; y may alias x). */
txrt_status txrt_cuda_rope(txrt_cuda_context *ctx, int64_t site,
                           int64_t outer, int64_t seq, int64_t heads,
                           int64_t head_dim, const float *x, float *y,
                           int64_t pos_offset, float base, int32_t inverse);

/** As txrt_rope_partial (rotary_dim <= 512; y may alias x). */
txrt_status txrt_cuda_rope_partial(txrt_cuda_context *ctx, int64_t site,
                                   int64_t outer, int64_t seq, int64_t heads,
                                   int64_t head_dim, int64_t rotary_dim,
                                   const float *x, float *y, int64_t pos_offset,
                                   float base, int32_t inverse);

/** As txrt_rope_angles (angles a device buffer [seq, head_dim/2]). */
txrt_status txrt_cuda_rope_angles(txrt_cuda_context *ctx, int64_t site,
                                  int64_t outer, int64_t seq, int64_t heads,
                                  int64_t head_dim, const float *x, float *y,
                                  const float *angles, int32_t inverse);

/** As txrt_rope_angles_partial (angles [seq, rotary_dim/2] on the device). */
txrt_status txrt_cuda_rope_angles_partial(txrt_cuda_context *ctx, int64_t site,
                                          int64_t outer, int64_t seq,
                                          int64_t heads, int64_t head_dim,
                                          int64_t rotary_dim, const float *x,
                                          float *y, const float *angles,
                                          int32_t inverse);

/** As txrt_dropout_fwd: bit-identical masks to the CPU kernel's. */
txrt_status txrt_cuda_dropout_fwd(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, float p, uint64_t seed,
                                  int64_t step, const float *x, float *y);

/** As txrt_dropout_bwd. */
txrt_status txrt_cuda_dropout_bwd(txrt_cuda_context *ctx, int64_t fwd_site,
                                  int64_t n, float p, uint64_t seed,
                                  int64_t step, const float *dy, float *dx);

/** As txrt_adam_update (one pass over a whole arena). */
txrt_status txrt_cuda_adam_update(txrt_cuda_context *ctx, int64_t site,
                                  int64_t n, float *param, const float *grad,
                                  float *m, float *v, float lr, float beta1,
                                  float beta2, float eps, float weight_decay,
                                  int64_t step);

/** As txrt_attention_fwd (every mask, fill, causal, GQA and dropout form),
 *  for tk <= 8192 and head_dim + tk <= 12288. mask is a device buffer. Not
 *  yet tiled: one block per query row (docs/cuda.md). */
txrt_status txrt_cuda_attention_fwd(
    txrt_cuda_context *ctx, int64_t site, int64_t batch, int64_t heads,
    int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim, const float *q,
    int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv,
    float *o, int64_t ldo, float *lse, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step);

/** As txrt_attention_bwd, with lse required; dk and dv are summed with
 *  atomics (not bitwise deterministic). 2 * (head_dim + tk) <= 12288. */
txrt_status txrt_cuda_attention_bwd(
    txrt_cuda_context *ctx, int64_t site, int64_t fwd_site, int64_t batch,
    int64_t heads, int64_t kv_heads, int64_t tq, int64_t tk, int64_t head_dim,
    const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
    int64_t ldv, const float *o, int64_t ldo, const float *lse,
    const float *d_o, int64_t lddo, float *dq, int64_t lddq, float *dk,
    int64_t lddk, float *dv, int64_t lddv, const uint8_t *mask,
    int64_t mask_stride_batch, int64_t mask_stride_head,
    int64_t mask_stride_query, int64_t mask_stride_key, int32_t causal,
    float scale, float fill, float dropout_p, uint64_t seed, int64_t step);

/** As txrt_adam_step: Adam at the context's training step with the
 *  learning rate of `schedule` (txrt_learning_rate); grad_scale is NULL or a
 *  device buffer [1] multiplying every gradient. */
txrt_status txrt_cuda_adam_step(txrt_cuda_context *ctx, int64_t site,
                                int64_t n, float *param, const float *grad,
                                float *m, float *v, const float *grad_scale,
                                int32_t schedule, float lr, float d_model,
                                float warmup, float beta1, float beta2,
                                float eps, float weight_decay);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TXRT_TXRT_CUDA_H */
