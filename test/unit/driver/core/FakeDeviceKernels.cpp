//===- FakeDeviceKernels.cpp - the fake device's kernels, emulated --------===//
//
// What the fake device (FakeDevice.h) computes for its Device calls: the
// CUDA backend's own device code run on the host under CudaEmulation.h
// (test/unit/cuda/emulated/), with the launch geometry its .cu uses, so a
// driver test on the fake device runs the kernel a GPU would. Kept apart
// from FakeDevice.cpp: CudaEmulation.h defines CUDA's names as macros. In a
// unity batch the files before this one can bring txrt::driver into scope,
// whose AllowedIds and RowCopy are named as the kernels' types are: this
// file writes those qualified.
//
//===----------------------------------------------------------------------===//
#include "core/FakeDevice.h"

#include "CudaEmulation.h"

#include "kernels/ArgmaxKernels.cuh"
#include "kernels/CopyRowsKernels.cuh"
#include "kernels/EmaKernels.cuh"

#include <stdexcept>

namespace txrt_driver_test {

void emulateUpdateAverage(float *average, const float *params, int64_t count,
                          float decay) {
  if (count == 0)
    return;
  const txrt::cuda::KernelLaunch elements =
      txrt::cuda::ema::updateAverageLaunch(count);
  emu::launch({elements.blocks, 1, 1}, {elements.threads, 1, 1}, 0, [&] {
    txrt::cuda::ema::updateAverageKernel(average, params, count, decay);
  });
}

void emulateArgmaxRows(const float *logits, int64_t rows, int64_t vocab,
                       int64_t rowStride, int64_t emittable,
                       const std::vector<int32_t> &excluded, int32_t *ids) {
  using namespace txrt::cuda::argmax;
  if (rows == 0)
    return;
  if (excluded.size() > size_t(kMaxExcluded))
    throw std::logic_error("emulateArgmaxRows: more excluded ids than a "
                           "launch takes");
  txrt::cuda::argmax::AllowedIds allowed{
      emittable, int32_t(excluded.size()), {}};
  for (size_t i = 0; i < excluded.size(); ++i)
    allowed.excluded[i] = excluded[i];
  const txrt::cuda::KernelLaunch perRow = argmaxLaunch(rows);
  emu::launch({perRow.blocks, 1, 1}, {perRow.threads, 1, 1}, 0, [&] {
    argmaxRowsKernel(logits, vocab, rowStride, allowed, ids);
  });
}

void emulateCopyRows(const std::vector<txrt::driver::RowCopy> &copies) {
  using namespace txrt::cuda::copyrows;
  std::vector<txrt::cuda::copyrows::RowCopy> rows;
  for (const txrt::driver::RowCopy &copy : copies)
    rows.push_back({static_cast<char *>(copy.dst),
                    static_cast<const char *>(copy.src),
                    int64_t(copy.dstPitch), int64_t(copy.srcPitch),
                    int64_t(copy.width), int64_t(copy.height)});
  forEachLaunch(rows.data(), int64_t(rows.size()),
                [](const RowCopies &batch, int64_t filled,
                   const txrt::cuda::KernelLaunch &geometry) {
                  emu::launch({geometry.blocks, unsigned(filled), 1},
                              {geometry.threads, 1, 1}, 0,
                              [&] { copyRowsKernel(batch); });
                });
}

} // namespace txrt_driver_test
