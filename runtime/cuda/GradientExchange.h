//===- GradientExchange.h - accumulated gradients on the GPU, over NCCL -*- C++ -*-===//
//
// What txrt_cuda_adam_step does outside TXRT_GRADIENTS_UPDATE mode: the
// device counterpart of runtime/lib/GradientExchange.h, with the same
// BucketPlan (sites in the order the backward pass completes them, buckets
// of at least TXRT_BUCKET_MB), so every rank lays its buckets out alike.
// The buckets are device buffers beside the parameter arena. ACCUMULATE
// adds scale * gradient into the site's slot (a kernel on the context's
// stream). APPLY adds it too, and: without a communicator and without
// clipping, enqueues Adam on the slot and clears it; with an NCCL
// communicator, when a bucket's last site has arrived, records an event on
// the compute stream, makes the communication stream wait for it and
// enqueues ncclAllReduce(sum) there (so it overlaps the rest of the
// backward pass), and keeps the Adam update for finish(): finish() starts
// what is left, waits on the host for the buckets' events (checking
// NCCL's asynchronous errors meanwhile), makes the compute stream wait for
// them and enqueues the updates in their order, scaled by the clipping
// factor computed on the device when the step clips.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_GRADIENTEXCHANGE_H
#define TXRT_CUDA_GRADIENTEXCHANGE_H

#include "Nccl.h"
#include "kernels/StepState.cuh"
#include "lib/GradientExchange.h"

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

struct txrt_cuda_context;

namespace txrt::cuda {

/// Adam over n elements with device pointers, enqueued on the context's
/// stream (kernels/Adam.cu; gradScale: NULL or a device float). With
/// stepScalars (inside a capture: capturedAdamScalars) the kernel reads lr's
/// and the bias corrections' part from there instead of from lr and step.
void adamUpdate(txrt_cuda_context &c, int64_t n, float *param,
                const float *grad, const float *gradScale, float *m, float *v,
                float lr, float beta1, float beta2, float eps,
                float weight_decay, int64_t step,
                const AdamStepScalars *stepScalars = nullptr);

class GradientExchange {
public:
  explicit GradientExchange(txrt_cuda_context &c);
  ~GradientExchange();
  GradientExchange(const GradientExchange &) = delete;
  GradientExchange &operator=(const GradientExchange &) = delete;

  int32_t mode = TXRT_GRADIENTS_UPDATE;
  float scale = 1.0f;
  /// txrt_cuda_context_set_gradient_clip's bound; 0: not set.
  float clip = 0.0f;

  /// Joins the ranks of a data-parallel run (NCCL); every later APPLY sums
  /// the buckets over them.
  void joinRanks(int rank, int ranks, const void *ncclId);
  bool joined() const { return bool(communicator_); }

  /// The Adam update of one site, given device pointers to its summed
  /// gradient and to the clipping factor (NULL: none).
  using Update =
      std::function<void(const float *gradient, const float *clipScale)>;
  void add(int64_t site, int64_t n, const float *gradient, bool clips,
           Update update);
  /// Waits for the buckets in flight and enqueues the waiting updates.
  void finish();

  double waitSeconds = 0.0;
  int64_t bytesSent = 0;

private:
  struct Bucket {
    float *data = nullptr;
    int64_t capacity = 0; ///< floats
    int64_t arrived = 0;
    bool started = false;
    cudaEvent_t ready = nullptr; ///< the compute stream reached the bucket
    cudaEvent_t done = nullptr;  ///< its allreduce completed
  };
  void start(int64_t bucket);
  Bucket &bucketFor(const BucketPlan::Slot &slot);

  txrt_cuda_context &c_;
  BucketPlan plan_;
  bool overlap_ = true;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<BucketPlan::Slot, Update>> waiting_;
  bool clipping_ = false;
  std::unique_ptr<NcclCommunicator> communicator_;
  cudaStream_t commStream_ = nullptr;
  double *squares_ = nullptr; ///< device: the clipping norm's sum
  float *clipScale_ = nullptr; ///< device: the clipping factor
};

} // namespace txrt::cuda

#endif // TXRT_CUDA_GRADIENTEXCHANGE_H
