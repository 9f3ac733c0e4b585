//===- GradientExchange.cpp - accumulated gradients on the GPU, over NCCL -===//
#include "GradientExchange.h"
#include "CudaContext.h"
#include "Kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

namespace txrt::cuda {

GradientExchange::GradientExchange(txrt_cuda_context &c)
    : c_(c), plan_(BucketPlan::floatsFromEnvironment()),
      overlap_(allreduceOverlapFromEnvironment()) {}

GradientExchange::~GradientExchange() {
  // Nothing may still use the buckets (the stream is synchronized by the
  // context's destroy before this runs; the communication stream here).
  if (commStream_)
    cudaStreamSynchronize(commStream_);
  for (Bucket &bucket : buckets_) {
    cudaFree(bucket.data);
    if (bucket.ready)
      cudaEventDestroy(bucket.ready);
    if (bucket.done)
      cudaEventDestroy(bucket.done);
  }
  cudaFree(squares_);
  cudaFree(clipScale_);
  communicator_.reset();
  if (commStream_)
    cudaStreamDestroy(commStream_);
}

void GradientExchange::joinRanks(int rank, int ranks, const void *ncclId) {
  require(!communicator_, "the context has joined its ranks already");
  require(buckets_.empty(), "join the ranks before the first update");
  communicator_ =
      std::make_unique<NcclCommunicator>(c_.device, rank, ranks, ncclId);
  check(cudaStreamCreateWithFlags(&commStream_, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags (NCCL)");
}

GradientExchange::Bucket &
GradientExchange::bucketFor(const BucketPlan::Slot &slot) {
  while (int64_t(buckets_.size()) < plan_.buckets())
    buckets_.emplace_back();
  Bucket &bucket = buckets_[size_t(slot.bucket)];
  if (!bucket.data) {
    // A bucket of several sites never passes bucketFloats(); a larger site
    // is alone in its bucket (BucketPlan::place).
    bucket.capacity = std::max(plan_.bucketFloats(), slot.size);
    check(cudaMalloc(&bucket.data, size_t(bucket.capacity) * sizeof(float)),
          "cudaMalloc (gradient bucket)");
    check(cudaMemsetAsync(bucket.data, 0,
                          size_t(bucket.capacity) * sizeof(float), c_.stream),
          "cudaMemsetAsync (gradient bucket)");
    check(cudaEventCreateWithFlags(&bucket.ready, cudaEventDisableTiming),
          "cudaEventCreate");
    check(cudaEventCreateWithFlags(&bucket.done, cudaEventDisableTiming),
          "cudaEventCreate");
  }
  require(slot.offset + slot.size <= bucket.capacity,
          "a gradient bucket overflowed its allocation");
  return bucket;
}

void GradientExchange::add(int64_t site, int64_t n, const float *gradient,
                           bool clips, Update update) {
  require(n >= 0 && (gradient || n == 0), "the gradient must not be NULL");
  require(!clips || clip > 0.0f,
          "gradient clipping over accumulated or exchanged gradients needs "
          "the bound (txrt_cuda_context_set_gradient_clip)");
  int64_t before = plan_.buckets();
  BucketPlan::Slot slot = plan_.place(site, n);
  Bucket &bucket = bucketFor(slot);
  float *sum = bucket.data + slot.offset;
  launchAccumulateScaled(c_.stream, sum, gradient, scale, n);
  checkLaunch("accumulateScaledKernel");
  if (mode != TXRT_GRADIENTS_APPLY)
    return;
  if (!communicator_ && !clips) {
    update(sum, nullptr);
    check(cudaMemsetAsync(sum, 0, size_t(n) * sizeof(float), c_.stream),
          "cudaMemsetAsync (gradient slot)");
    return;
  }
  clipping_ = clipping_ || clips;
  waiting_.emplace_back(slot, std::move(update));
  if (!communicator_)
    return;
  ++bucket.arrived;
  if (!overlap_)
    return;
  // A new bucket closes the one before it (first update only).
  if (plan_.buckets() > before && slot.bucket > 0) {
    Bucket &previous = buckets_[size_t(slot.bucket - 1)];
    if (!previous.started &&
        previous.arrived == plan_.bucketSites(slot.bucket - 1))
      start(slot.bucket - 1);
  }
  if (plan_.closed(slot.bucket) &&
      bucket.arrived == plan_.bucketSites(slot.bucket))
    start(slot.bucket);
}

void GradientExchange::start(int64_t b) {
  Bucket &bucket = buckets_[size_t(b)];
  // The allreduce reads what the compute stream has queued so far: the
  // kernels that completed the bucket.
  check(cudaEventRecord(bucket.ready, c_.stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(commStream_, bucket.ready, 0),
        "cudaStreamWaitEvent");
  communicator_->allReduceSum(bucket.data, plan_.bucketSize(b), commStream_);
  check(cudaEventRecord(bucket.done, commStream_), "cudaEventRecord");
  bucket.started = true;
  bytesSent += plan_.bucketSize(b) * int64_t(sizeof(float));
}

void GradientExchange::finish() {
  if (waiting_.empty())
    return;
  if (communicator_) {
    for (int64_t b = 0; b < plan_.buckets(); ++b)
      if (!buckets_[size_t(b)].started)
        start(b);
    // Wait on the host, so that an asynchronous NCCL failure (a rank that
    // died) is an error here instead of a stream that never completes.
    auto begin = std::chrono::steady_clock::now();
    for (Bucket &bucket : buckets_) {
      for (;;) {
        cudaError_t state = cudaEventQuery(bucket.done);
        if (state == cudaSuccess)
          break;
        if (state != cudaErrorNotReady)
          check(state, "cudaEventQuery (allreduce)");
        communicator_->checkAsync();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      // The optimizer reads the bucket after its allreduce.
      check(cudaStreamWaitEvent(c_.stream, bucket.done, 0),
            "cudaStreamWaitEvent");
    }
    waitSeconds += std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
  }
  const float *clipScale = nullptr;
  if (clipping_) {
    if (!squares_) {
      check(cudaMalloc(&squares_, sizeof(double)), "cudaMalloc");
      check(cudaMalloc(&clipScale_, sizeof(float)), "cudaMalloc");
    }
    check(cudaMemsetAsync(squares_, 0, sizeof(double), c_.stream),
          "cudaMemsetAsync");
    // In the sites' order, as the CPU's exchange sums them.
    for (const auto &[slot, update] : waiting_) {
      launchSumSquares(c_.stream,
                       buckets_[size_t(slot.bucket)].data + slot.offset,
                       slot.size, squares_);
      checkLaunch("sumSquaresKernel");
    }
    launchClipFactor(c_.stream, squares_, clip, clipScale_);
    checkLaunch("clipFactorKernel");
    clipScale = clipScale_;
  }
  for (auto &[slot, update] : waiting_)
    update(buckets_[size_t(slot.bucket)].data + slot.offset, clipScale);
  waiting_.clear();
  clipping_ = false;
  for (int64_t b = 0; b < int64_t(buckets_.size()); ++b) {
    Bucket &bucket = buckets_[size_t(b)];
    check(cudaMemsetAsync(bucket.data, 0,
                          size_t(plan_.bucketSize(b)) * sizeof(float),
                          c_.stream),
          "cudaMemsetAsync (gradient bucket)");
    bucket.arrived = 0;
    bucket.started = false;
  }
}

} // namespace txrt::cuda

using namespace txrt::cuda;

namespace {
GradientExchange &exchangeOf(txrt_cuda_context &c) {
  if (!c.gradients)
    c.gradients = new GradientExchange(c);
  return *c.gradients;
}
} // namespace

extern "C" {

txrt_status txrt_cuda_context_set_gradient_mode(txrt_cuda_context *ctx,
                                                int32_t mode, float scale) {
  return runCuda(ctx, "txrt_cuda_context_set_gradient_mode",
                 [&](txrt_cuda_context &c) {
                   require(mode == TXRT_GRADIENTS_UPDATE ||
                               mode == TXRT_GRADIENTS_ACCUMULATE ||
                               mode == TXRT_GRADIENTS_APPLY,
                           "mode must be TXRT_GRADIENTS_UPDATE, _ACCUMULATE "
                           "or _APPLY");
                   GradientExchange &exchange = exchangeOf(c);
                   exchange.mode = mode;
                   exchange.scale = scale;
                 });
}

txrt_status txrt_cuda_context_set_gradient_clip(txrt_cuda_context *ctx,
                                                float clip) {
  return runCuda(ctx, "txrt_cuda_context_set_gradient_clip",
                 [&](txrt_cuda_context &c) {
                   require(clip >= 0.0f && std::isfinite(clip),
                           "clip must be a finite number >= 0");
                   exchangeOf(c).clip = clip;
                 });
}

txrt_status txrt_cuda_nccl_version(int32_t *out_version) {
  std::string &error = globalError();
  try {
    require(out_version, "out_version must not be NULL");
    *out_version = ncclVersionCode();
    return TXRT_OK;
  } catch (const CudaError &e) {
    error = std::string("txrt_cuda_nccl_version: ") + e.what();
    return e.status;
  }
}

txrt_status txrt_cuda_nccl_unique_id(void *out_id, size_t bytes) {
  std::string &error = globalError();
  try {
    ncclMakeUniqueId(out_id, bytes);
    return TXRT_OK;
  } catch (const CudaError &e) {
    error = std::string("txrt_cuda_nccl_unique_id: ") + e.what();
    return e.status;
  }
}

txrt_status txrt_cuda_context_join_ranks(txrt_cuda_context *ctx, int32_t rank,
                                         int32_t ranks, const void *nccl_id,
                                         size_t id_bytes) {
  return runCuda(ctx, "txrt_cuda_context_join_ranks",
                 [&](txrt_cuda_context &c) {
                   require(id_bytes == kNcclIdBytes,
                           "the NCCL id must have TXRT_CUDA_NCCL_ID_BYTES "
                           "(128) bytes");
                   exchangeOf(c).joinRanks(rank, ranks, nccl_id);
                 });
}

txrt_status txrt_cuda_context_finish_update(txrt_cuda_context *ctx) {
  return runCuda(ctx, "txrt_cuda_context_finish_update",
                 [&](txrt_cuda_context &c) {
                   if (c.gradients)
                     c.gradients->finish();
                 });
}

void txrt_cuda_context_allreduce_stats(const txrt_cuda_context *ctx,
                                       double *out_wait_seconds,
                                       int64_t *out_bytes) {
  const GradientExchange *exchange = ctx ? ctx->gradients : nullptr;
  if (out_wait_seconds)
    *out_wait_seconds = exchange ? exchange->waitSeconds : 0.0;
  if (out_bytes)
    *out_bytes = exchange ? exchange->bytesSent : 0;
}

} // extern "C"
