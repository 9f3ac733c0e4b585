//===- FakeDeviceKernels.cpp - the fake device's kernels, emulated --------===//
//
// What the fake device (FakeDevice.h) computes for its Device calls: the
// CUDA backend's own device code run on the host under CudaEmulation.h
// (test/unit/cuda/emulated/), with the launch geometry its .cu uses, so a
// driver test on the fake device runs the kernel a GPU would. A file of
// its own: CudaEmulation.h defines CUDA's names as macros.
//
//===----------------------------------------------------------------------===//
#include "core/FakeDevice.h"

#include "CudaEmulation.h"

#include "kernels/CopyRowsKernels.cuh"
#include "kernels/EmaKernels.cuh"

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

void emulateCopyRows(const std::vector<txrt::driver::RowCopy> &copies) {
  using namespace txrt::cuda::copyrows;
  std::vector<RowCopy> rows;
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
