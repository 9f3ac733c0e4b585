//===- Broadcast.cu - broadcasting binary ops, reductions, argmax ---------===//
//
// txrt_binary with NumPy broadcasting and txrt_reduce over the dimensions
// where y has size 1, for ranks 1..6, one thread per output element (the
// dims travel by value; a reduction sums in double, as the CPU's exact
// result rounded once); argmax with one block per row (the first maximum).
// max / min are a > b ? a : b and a < b ? a : b, as on the CPU.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "CudaContext.h"

#include <cmath>

using namespace txrt::cuda;

namespace {

constexpr int kMaxRank = 6;

struct Dims {
  int32_t rank;
  int64_t a[kMaxRank], b[kMaxRank], c[kMaxRank];
};

__device__ float apply(int32_t op, float a, float b) {
  switch (op) {
  case TXRT_BINARY_ADD:
    return a + b;
  case TXRT_BINARY_SUB:
    return a - b;
  case TXRT_BINARY_MUL:
    return a * b;
  case TXRT_BINARY_DIV:
    return a / b;
  case TXRT_BINARY_MAX:
    return a > b ? a : b;
  default:
    return a < b ? a : b;
  }
}

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
    c[e] = apply(op, a[ia], b[ib]);
  }
}

/// y[e] = reduce of x over the dims where d.b (y) is 1 and d.a (x) is not.
__global__ void reduceKernel(int32_t op, Dims d, int64_t total,
                             int64_t reduced, const float *x, float *y) {
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
      best = op == TXRT_REDUCE_MAX ? (v > best ? v : best)
                                   : (v < best ? v : best);
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
  first = blockReduce(first, [](long long p, long long q) {
    return p < q ? p : q;
  });
  if (threadIdx.x == 0)
    out[blockIdx.x] = int32_t(first == cols ? 0 : first);
}

Dims readDims(int32_t rank, const int64_t *a, const int64_t *b) {
  require(rank >= 1 && rank <= kMaxRank, "rank must be in 1..6");
  require(a && b, "dims must not be NULL");
  Dims d = {};
  d.rank = rank;
  for (int r = 0; r < rank; ++r) {
    require(a[r] >= 0 && b[r] >= 0, "dims must be non-negative");
    d.a[r] = a[r];
    d.b[r] = b[r];
  }
  return d;
}

} // namespace

extern "C" {

txrt_status txrt_cuda_binary(txrt_cuda_context *ctx, int64_t site, int32_t op,
                             int32_t rank, const int64_t *a_dims,
                             const float *a, const int64_t *b_dims,
                             const float *b, float *c) {
  return runCuda(ctx, "txrt_cuda_binary", [&](txrt_cuda_context &cx) {
    require(op >= TXRT_BINARY_ADD && op <= TXRT_BINARY_MIN, "unknown op");
    Dims d = readDims(rank, a_dims, b_dims);
    int64_t total = 1;
    for (int r = 0; r < rank; ++r) {
      require(d.a[r] == d.b[r] || d.a[r] == 1 || d.b[r] == 1,
              "dims are not broadcast-compatible");
      d.c[r] = d.a[r] == 1 ? d.b[r] : d.a[r];
      total *= d.c[r];
    }
    if (total == 0)
      return;
    require(a && b && c, "a, b and c must not be NULL");
    binaryKernel<<<gridFor(total, 256), 256, 0, cx.stream>>>(op, d, total, a,
                                                            b, c);
    checkLaunch("binaryKernel");
  });
}

txrt_status txrt_cuda_reduce(txrt_cuda_context *ctx, int64_t site, int32_t op,
                             int32_t rank, const int64_t *x_dims,
                             const float *x, const int64_t *y_dims, float *y) {
  return runCuda(ctx, "txrt_cuda_reduce", [&](txrt_cuda_context &c) {
    require(op >= TXRT_REDUCE_SUM && op <= TXRT_REDUCE_MIN, "unknown op");
    Dims d = readDims(rank, x_dims, y_dims);
    int64_t total = 1, reduced = 1;
    for (int r = 0; r < rank; ++r) {
      require(d.b[r] == d.a[r] || d.b[r] == 1,
              "y_dims[i] must be x_dims[i] or 1");
      total *= d.b[r];
      if (d.b[r] == 1)
        reduced *= d.a[r];
    }
    if (total == 0)
      return;
    require(y, "y must not be NULL");
    require(reduced == 0 || x, "x must not be NULL");
    // Reducing an empty dimension gives the identity (-inf, inf, 0) and a
    // NaN mean (0 / 0), as the CPU kernel does.
    reduceKernel<<<gridFor(total, 256), 256, 0, c.stream>>>(op, d, total,
                                                           reduced, x, y);
    checkLaunch("reduceKernel");
  });
}

txrt_status txrt_cuda_argmax(txrt_cuda_context *ctx, int64_t site,
                             int64_t rows, int64_t cols, const float *x,
                             int32_t *out) {
  return runCuda(ctx, "txrt_cuda_argmax", [&](txrt_cuda_context &c) {
    require(rows >= 0 && cols >= 0, "rows and cols must be non-negative");
    require(rows <= 0x7FFFFFFF, "more than 2^31 - 1 rows");
    if (rows == 0)
      return;
    require(cols > 0, "argmax of an empty row");
    require(x && out, "x and out must not be NULL");
    argmaxKernel<<<unsigned(rows), 256, 0, c.stream>>>(cols, x, out);
    checkLaunch("argmaxKernel");
  });
}

} // extern "C"
