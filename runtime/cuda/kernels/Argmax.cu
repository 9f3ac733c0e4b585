//===- Argmax.cu - greedy decoding's choice on the device -----------------===//
//
// The host side of ArgmaxKernels.cuh: txrt_cuda_argmax_rows's checks and
// its launch on the context's stream (no synchronization: the caller copies
// the ids back).
//
//===----------------------------------------------------------------------===//
#include "ArgmaxKernels.cuh"
#include "CudaContext.h"

#include <string>

using namespace txrt::cuda;
using namespace txrt::cuda::argmax;

extern "C" {

txrt_status txrt_cuda_argmax_rows(txrt_cuda_context *ctx, const float *logits,
                                  int64_t rows, int64_t vocab,
                                  int64_t row_stride, int64_t emittable,
                                  const int32_t *excluded,
                                  int64_t excluded_count, int32_t *ids) {
  return runCuda(ctx, "txrt_cuda_argmax_rows", [&](txrt_cuda_context &c) {
    require(rows >= 0 && rows <= 0x7FFFFFFF, "rows must be in [0, 2^31 - 1]");
    require(vocab > 0 && vocab <= 0x7FFFFFFF,
            "vocab must be in [1, 2^31 - 1]");
    require(row_stride >= vocab, "row_stride must be at least vocab");
    require(emittable >= 0, "emittable must be non-negative");
    const std::string range =
        "excluded_count must be in [0, " + std::to_string(kMaxExcluded) + "]";
    require(excluded_count >= 0 && excluded_count <= kMaxExcluded,
            range.c_str());
    require(excluded_count == 0 || excluded,
            "excluded must not be NULL when excluded_count > 0");
    if (rows == 0)
      return;
    require(logits && ids, "logits and ids must not be NULL");
    AllowedIds allowed{emittable, int32_t(excluded_count), {}};
    for (int64_t i = 0; i < excluded_count; ++i)
      allowed.excluded[i] = excluded[i];
    const KernelLaunch perRow = argmaxLaunch(rows);
    argmaxRowsKernel<<<perRow.blocks, perRow.threads, 0, c.stream>>>(
        logits, vocab, row_stride, allowed, ids);
    checkLaunch("argmaxRowsKernel");
  });
}

} // extern "C"
