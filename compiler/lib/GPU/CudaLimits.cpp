//===- CudaLimits.cpp - what the CUDA kernels take, checked at compile time
//===//
//
// Some CUDA kernels of runtime/cuda take less than their CPU counterparts
// (docs/cuda.md): a rope rotates at most 512 dimensions of a head
// (RopeKernels.cuh, kMaxPairs), and attention over heads wider than 128
// (the per-row kernels of AttentionKernels.cuh) keeps a row's scores in
// 48 KiB of shared memory: at most 8192 keys, and head_dim + keys within
// 12288 floats forward, 6144 backward. The shapes are known here (static
// head widths, dims with bounds): a spec that would fail every call is an
// error at its line, one that fails past some length a warning that says
// which.
//
//===----------------------------------------------------------------------===//
#include "txc/GPU/CudaLowering.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include <algorithm>
#include <set>
#include <string>

using namespace mlir;
using namespace mlir::tx;

namespace {

/// RopeKernels.cuh: pairs a thread block rotates.
constexpr int64_t kMaxRotatedDims = 512;
/// AttentionKernels.cuh: the tiled and tensor-core kernels' widest head.
constexpr int64_t kMaxTiledHeadDim = 128;
/// The per-row kernels: keys a row's scores hold, and the floats of shared
/// memory (48 KiB) the forward (head_dim + keys) and backward (twice that)
/// fit in.
constexpr int64_t kMaxRowKeys = 8192, kSharedFloats = 48 * 1024 / 4;

/// The key length the per-row kernel takes for heads of `headDim` (0 or
/// less: none), `backward` its training form.
int64_t maxKeys(int64_t headDim, bool backward) {
  int64_t floats = backward ? kSharedFloats / 2 : kSharedFloats;
  return std::min(kMaxRowKeys, floats - headDim);
}

/// Each source location's problem once (every entry holds its copy of an
/// attention or rope).
using Reported = std::set<std::pair<const void *, int>>;

LogicalResult checkAttention(Operation *op, Value query, Value key,
                             bool backward, Reported &reported) {
  Shape q = getShape(cast<RankedTensorType>(query.getType()));
  Shape k = getShape(cast<RankedTensorType>(key.getType()));
  int64_t headDim = q.back().upperBound();
  if (q.back().isSymbolic() || headDim <= kMaxTiledHeadDim)
    return success();
  const Dim &keys = k[k.size() - 2];
  int64_t limit = maxKeys(headDim, backward);
  if (!reported.insert({op->getLoc().getAsOpaquePointer(), backward ? 2 : 1})
           .second)
    return success(limit > 0);
  std::string what = backward ? "the backward of an attention" : "an attention";
  if (limit <= 0)
    return op->emitError("--target=cuda: ")
           << what << " over heads of " << headDim
           << " features: the CUDA kernel for heads over " << kMaxTiledHeadDim
           << " keeps a row's scores and the head in "
           << (backward ? "24" : "48")
           << " KiB of shared memory, which holds no key beside it (the CPU "
              "target has no such limit)";
  if (keys.upperBound() > limit)
    op->emitWarning("--target=cuda: ")
        << what << " over heads of " << headDim << " features takes at most "
        << limit << " keys on the GPU (the "
        << "kernel for heads over " << kMaxTiledHeadDim
        << " keeps a row's scores in shared memory); its keys "
        << (keys.isSymbolic() ? "'" + keys.symbol.str() + "' may reach "
                              : std::string("are "))
        << keys.upperBound()
        << ": a longer batch fails there with an error (the CPU target has "
           "no such limit)";
  return success();
}

} // namespace

LogicalResult mlir::tx::checkCudaLimits(ModuleOp module) {
  bool failed = false;
  Reported reported;
  module.walk([&](Operation *op) {
    if (auto rope = dyn_cast<RopeOp>(op)) {
      if (rope.getRotatedDims() > kMaxRotatedDims) {
        failed = true;
        if (!reported.insert({op->getLoc().getAsOpaquePointer(), 0}).second)
          return;
        rope.emitError("--target=cuda: a rotary embedding over ")
            << rope.getRotatedDims()
            << " dimensions of each head: the CUDA kernel rotates at most "
            << kMaxRotatedDims
            << " (rope's rotary_dim <= 512, or heads of at most 512 "
               "features; a rotation written out with cos and sin is fused "
               "into this kernel too, and --no-fuse keeps it as written; the "
               "CPU target has no such limit)";
      }
    } else if (auto attention = dyn_cast<AttentionOp>(op)) {
      failed |= mlir::failed(checkAttention(
          op, attention.getQuery(), attention.getKey(), false, reported));
    } else if (auto train = dyn_cast<AttentionTrainOp>(op)) {
      failed |= mlir::failed(checkAttention(op, train.getQuery(),
                                            train.getKey(), false, reported));
    } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
      failed |= mlir::failed(
          checkAttention(op, grad.getQuery(), grad.getKey(), true, reported));
    }
  });
  return failure(failed);
}
