//===- ColumnSums.cuh - per-column sums over all rows, by blocks -*- CUDA -*-===//
//
// The one pattern behind the bias gradient (ElementwiseKernels.cuh), the
// layer-norm parameter gradients (LayerNormKernels.cuh) and the RMS-norm
// gain's gradient (RmsNormKernels.cuh): a block takes a tile of
// kColumnTile adjacent columns (tiles grid-strided), its blockDim.x /
// kColumnTile row groups take rows g, g + groups, ... (a warp reads
// kColumnTile adjacent floats, one 32-byte sector, of each of 4 rows), and
// group 0 adds the groups' sums in order: the same additions at any grid,
// so a run repeats bit for bit. It replaced a thread per whole column,
// which on an H200 took 1.9 (bias) and 8.5 ms (layer norm) a call at 16384
// rows, half of base.tx's B=64, T=256 step. Tiles of 8 columns, not 32, so
// that a 512-column gradient makes 64 blocks rather than 16 (a GPU has
// over 100 SMs), and the row loop unrolled so that a thread has several
// loads in flight (not yet timed on a GPU). No CUDA header: the emulated
// tests run it on the host.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_COLUMNSUMS_CUH
#define TXRT_CUDA_KERNELS_COLUMNSUMS_CUH

#include "KernelLaunch.cuh"

#include <cstdint>

namespace txrt::cuda {

constexpr unsigned kColumnTile = 8;
constexpr unsigned kColumnThreads = 512;

/// kSums sums per column j < cols over rows i < rows: `term(i, j, sums)`
/// adds row i's terms to the thread's double sums, `finish(j, totals)`
/// stores the column's totals. Every thread of the block calls it (it
/// synchronizes), with blockDim.x = kColumnThreads.
template <int kSums, typename Term, typename Finish>
__device__ void columnTileSums(int64_t rows, int64_t cols, Term term,
                               Finish finish) {
  __shared__ double partial[kSums][kColumnThreads];
  const unsigned lane = threadIdx.x % kColumnTile;
  const unsigned group = threadIdx.x / kColumnTile;
  const unsigned groups = blockDim.x / kColumnTile;
  for (int64_t tile = blockIdx.x; tile * kColumnTile < cols;
       tile += gridDim.x) {
    const int64_t j = tile * kColumnTile + lane;
    double sums[kSums] = {};
    if (j < cols)
#pragma unroll 4
      for (int64_t i = group; i < rows; i += groups)
        term(i, j, sums);
    for (int s = 0; s < kSums; ++s)
      partial[s][threadIdx.x] = sums[s];
    __syncthreads();
    if (group == 0 && j < cols) {
      double totals[kSums] = {};
      for (unsigned g = 0; g < groups; ++g)
        for (int s = 0; s < kSums; ++s)
          totals[s] += partial[s][g * kColumnTile + lane];
      finish(j, totals);
    }
    __syncthreads();
  }
}

/// columnTileSums' launch: a block a tile of kColumnTile columns.
inline KernelLaunch columnTileLaunch(int64_t cols) {
  return {gridFor(cols, kColumnTile), kColumnThreads};
}

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_COLUMNSUMS_CUH
