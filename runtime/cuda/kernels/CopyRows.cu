//===- CopyRows.cu - strided copies within the device ---------------------===//
//
// The host side of CopyRowsKernels.cuh: txrt_cuda_copy_rows's checks and
// its launches on the context's stream, kCopiesPerLaunch copies a launch
// (no synchronization: it can be captured).
//
//===----------------------------------------------------------------------===//
#include "CopyRowsKernels.cuh"
#include "CudaContext.h"

#include <vector>

using namespace txrt::cuda;
using namespace txrt::cuda::copyrows;

extern "C" {

txrt_status txrt_cuda_copy_rows(txrt_cuda_context *ctx,
                                const txrt_cuda_row_copy *copies,
                                int64_t count) {
  return runCuda(ctx, "txrt_cuda_copy_rows", [&](txrt_cuda_context &c) {
    require(count >= 0, "count must be non-negative");
    require(count == 0 || copies, "copies must not be NULL");
    std::vector<RowCopy> rows;
    for (int64_t i = 0; i < count; ++i) {
      const txrt_cuda_row_copy &copy = copies[i];
      if (copy.width == 0 || copy.height == 0)
        continue;
      require(copy.dst && copy.src, "dst and src must not be NULL");
      require(copy.dst_pitch >= copy.width && copy.src_pitch >= copy.width,
              "the pitches must be at least the width");
      rows.push_back({static_cast<char *>(copy.dst),
                      static_cast<const char *>(copy.src),
                      int64_t(copy.dst_pitch), int64_t(copy.src_pitch),
                      int64_t(copy.width), int64_t(copy.height)});
    }
    forEachLaunch(rows.data(), int64_t(rows.size()),
                  [&](const RowCopies &batch, int64_t filled,
                      const KernelLaunch &geometry) {
                    copyRowsKernel<<<dim3(geometry.blocks, unsigned(filled)),
                                     geometry.threads, 0, c.stream>>>(batch);
                    checkLaunch("copyRowsKernel");
                  });
  });
}

} // extern "C"
