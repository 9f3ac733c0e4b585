//===- BroadcastKernels.cuh - broadcasting ops' device code ----*- CUDA -*-===//
//
// The kernels of txrt_cuda_binary, _reduce and _argmax (Broadcast.cu
// launches them), their shapes' host arithmetic and launch geometry:
// binary ops with NumPy broadcasting and reductions over the dimensions
// where y has size 1, ranks 1..6, a thread an output element (the dims by
// value; a reduction sums in double, the CPU's exact result rounded once);
// argmax with a block per row (the first maximum). max / min are
// a > b ? a : b and a < b ? a : b, as on the CPU. No CUDA header:
// test/unit/cuda/emulated/ runs the same code on the host against the CPU
// kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_BROADCASTKERNELS_CUH
#define TXRT_CUDA_KERNELS_BROADCASTKERNELS_CUH

#include "BlockReduce.cuh"
#include "KernelLaunch.cuh"

#include "lib/BinaryOp.h"
#include "txrt/txrt.h"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::broadcast {

constexpr int kMaxRank = 6;

struct Dims {
  int32_t rank;
  int64_t a[kMaxRank], b[kMaxRank], c[kMaxRank];
};

__global__ void binaryKernel(int32_t op, Dims d, int64_t total, const float *a,
                             const float *b, float *c) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = e, ia = 0, ib = 0, strideA = 1, strideB = 1;
    for (int r = d.rank - 1; r >= 0; --r) {
      const int64_t index = rest % d.c[r];
      rest /= d.c[r];
      if (d.a[r] != 1)
        ia += index * strideA;
      if (d.b[r] != 1)
        ib += index * strideB;
      strideA *= d.a[r];
      strideB *= d.b[r];
    }
    c[e] = applyBinary(op, a[ia], b[ib]);
  }
}

/// y[e] = reduce of x over the dims where d.b (y) is 1 and d.a (x) is not.
__global__ void reduceKernel(int32_t op, Dims d, int64_t total, int64_t reduced,
                             const float *x, float *y) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    // The x offset of y's element e (reduced dims at 0).
    int64_t rest = e, base = 0, stride = 1;
    for (int r = d.rank - 1; r >= 0; --r) {
      const int64_t index = rest % d.b[r];
      rest /= d.b[r];
      base += index * stride;
      stride *= d.a[r];
    }
    double sum = 0.0;
    float best = op == TXRT_REDUCE_MAX ? -INFINITY : INFINITY;
    for (int64_t k = 0; k < reduced; ++k) {
      // The k-th combination of the reduced dims.
      int64_t kr = k, offset = 0, s = 1;
      for (int r = d.rank - 1; r >= 0; --r) {
        if (d.b[r] == 1 && d.a[r] != 1) {
          offset += (kr % d.a[r]) * s;
          kr /= d.a[r];
        }
        s *= d.a[r];
      }
      const float v = x[base + offset];
      sum += v;
      best =
          op == TXRT_REDUCE_MAX ? (v > best ? v : best) : (v < best ? v : best);
    }
    y[e] = op == TXRT_REDUCE_SUM    ? float(sum)
           : op == TXRT_REDUCE_MEAN ? float(sum / double(reduced))
                                    : best;
  }
}

__global__ void argmaxKernel(int64_t cols, const float *x, int32_t *out) {
  const float *row = x + blockIdx.x * cols;
  // Each thread's first maximum (its j increase), then the block's.
  float best = -INFINITY;
  long long at = cols; // past the end: no element yet
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    if (at == cols || row[j] > best) {
      best = row[j];
      at = j;
    }
  }
  const float top = blockMax(best);
  // The first index that holds the maximum.
  long long first = (best == top && at < cols) ? at : (long long)cols;
  first = blockReduce(first,
                      [](long long p, long long q) { return p < q ? p : q; });
  if (threadIdx.x == 0)
    out[blockIdx.x] = int32_t(first == cols ? 0 : first);
}

/// Sets d.c to the broadcast shape of d.a and d.b (compatible dims) and
/// returns its number of elements.
inline int64_t broadcastShape(Dims &d) {
  int64_t total = 1;
  for (int r = 0; r < d.rank; ++r) {
    d.c[r] = d.a[r] == 1 ? d.b[r] : d.a[r];
    total *= d.c[r];
  }
  return total;
}

/// A reduction of x (d.a) to y (d.b): y's elements, and the x elements
/// reduced into each.
struct ReduceCounts {
  int64_t total, reduced;
};
inline ReduceCounts reduceCounts(const Dims &d) {
  ReduceCounts counts = {1, 1};
  for (int r = 0; r < d.rank; ++r) {
    counts.total *= d.b[r];
    if (d.b[r] == 1)
      counts.reduced *= d.a[r];
  }
  return counts;
}

/// binaryKernel and reduceKernel: a thread an output element.
inline KernelLaunch elementLaunch(int64_t elements) {
  return gridStrideLaunch(elements, 256);
}
/// argmaxKernel: a block a row.
inline KernelLaunch argmaxLaunch(int64_t rows) {
  return blockPerRowLaunch(rows, 256);
}

} // namespace txrt::cuda::broadcast

#endif // TXRT_CUDA_KERNELS_BROADCASTKERNELS_CUH
