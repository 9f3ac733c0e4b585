//===- Binary.cpp - broadcasting elementwise binary ops on oneDNN ---------===//
//
// oneDNN binary broadcasts its second source only. So: a full-shape a with
// any b runs as (a, b); a broadcast a with a full-shape b runs as (b, a) for
// commutative ops; anything else (both broadcast, or sub/div with a
// broadcast first operand, or an output aliasing the second source) runs a
// vectorised loop here.
//
//===----------------------------------------------------------------------===//
#include "BinaryOp.h"
#include "Kernel.h"
#include "Primitive.h"

#include <algorithm>

using namespace txrt;

namespace {

constexpr int kMaxRank = 6;

dnnl::algorithm binaryAlgorithm(int32_t op) {
  switch (op) {
  case TXRT_BINARY_ADD:
    return dnnl::algorithm::binary_add;
  case TXRT_BINARY_SUB:
    return dnnl::algorithm::binary_sub;
  case TXRT_BINARY_MUL:
    return dnnl::algorithm::binary_mul;
  case TXRT_BINARY_DIV:
    return dnnl::algorithm::binary_div;
  case TXRT_BINARY_MAX:
    return dnnl::algorithm::binary_max;
  case TXRT_BINARY_MIN:
    return dnnl::algorithm::binary_min;
  default:
    throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                "unknown binary op " + std::to_string(op));
  }
}

bool commutative(int32_t op) {
  return op == TXRT_BINARY_ADD || op == TXRT_BINARY_MUL ||
         op == TXRT_BINARY_MAX || op == TXRT_BINARY_MIN;
}

/// The loop for the cases oneDNN does not take: rows of the innermost
/// dimension, each operand either contiguous or a broadcast scalar there.
template <int32_t Op>
void broadcastLoop(Context &ctx, int rank, const Dims &aDims, const float *a,
                   const Dims &bDims, const float *b, const Dims &cDims,
                   float *c) {
  // Element strides of a and b (0 on broadcast dims).
  int64_t aStride[kMaxRank], bStride[kMaxRank];
  int64_t as = 1, bs = 1;
  for (int i = rank - 1; i >= 0; --i) {
    aStride[i] = aDims[i] == 1 ? 0 : as;
    bStride[i] = bDims[i] == 1 ? 0 : bs;
    as *= aDims[i];
    bs *= bDims[i];
  }
  int64_t inner = cDims[rank - 1];
  int64_t rows = 1;
  for (int i = 0; i < rank - 1; ++i)
    rows *= cDims[i];
  int64_t aInner = aStride[rank - 1], bInner = bStride[rank - 1];
#pragma omp parallel for num_threads(ctx.numThreads()) if (rows * inner > 65536)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t aOffset = 0, bOffset = 0, rest = row;
    for (int i = rank - 2; i >= 0; --i) {
      int64_t index = rest % cDims[i];
      rest /= cDims[i];
      aOffset += index * aStride[i];
      bOffset += index * bStride[i];
    }
    const float *aRow = a + aOffset;
    const float *bRow = b + bOffset;
    float *cRow = c + row * inner;
    if (aInner && bInner) {
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j)
        cRow[j] = applyBinary(Op, aRow[j], bRow[j]);
    } else if (aInner) {
      float bValue = bRow[0];
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j)
        cRow[j] = applyBinary(Op, aRow[j], bValue);
    } else if (bInner) {
      float aValue = aRow[0];
#pragma omp simd
      for (int64_t j = 0; j < inner; ++j)
        cRow[j] = applyBinary(Op, aValue, bRow[j]);
    } else {
      float value = applyBinary(Op, aRow[0], bRow[0]);
      for (int64_t j = 0; j < inner; ++j)
        cRow[j] = value;
    }
  }
}

void runBroadcastLoop(Context &ctx, int32_t op, int rank, const Dims &aDims,
                      const float *a, const Dims &bDims, const float *b,
                      const Dims &cDims, float *c) {
  switch (op) {
  case TXRT_BINARY_ADD:
    return broadcastLoop<TXRT_BINARY_ADD>(ctx, rank, aDims, a, bDims, b, cDims,
                                          c);
  case TXRT_BINARY_SUB:
    return broadcastLoop<TXRT_BINARY_SUB>(ctx, rank, aDims, a, bDims, b, cDims,
                                          c);
  case TXRT_BINARY_MUL:
    return broadcastLoop<TXRT_BINARY_MUL>(ctx, rank, aDims, a, bDims, b, cDims,
                                          c);
  case TXRT_BINARY_DIV:
    return broadcastLoop<TXRT_BINARY_DIV>(ctx, rank, aDims, a, bDims, b, cDims,
                                          c);
  case TXRT_BINARY_MAX:
    return broadcastLoop<TXRT_BINARY_MAX>(ctx, rank, aDims, a, bDims, b, cDims,
                                          c);
  default:
    return broadcastLoop<TXRT_BINARY_MIN>(ctx, rank, aDims, a, bDims, b, cDims,
                                          c);
  }
}

} // namespace

extern "C" {

txrt_status txrt_binary(txrt_context *ctx, int64_t site, int32_t op,
                        int32_t rank, const int64_t *a_dims, const float *a,
                        const int64_t *b_dims, const float *b, float *c) {
  return runKernel(
      ctx, site, "txrt_binary",
      [&] {
        int shown = rank >= 1 && rank <= kMaxRank ? rank : 0;
        return shapes("op", op, "a", dimsString(a_dims, shown), "b",
                      dimsString(b_dims, shown));
      },
      [&](Context &ctxRef) {
        dnnl::algorithm algorithm = binaryAlgorithm(op);
        require(rank >= 1 && rank <= kMaxRank, "rank must be 1..6");
        require(a_dims && b_dims, "a_dims and b_dims must not be NULL");
        Dims aDims(a_dims, a_dims + rank), bDims(b_dims, b_dims + rank);
        Dims cDims(rank);
        int64_t count = 1;
        for (int i = 0; i < rank; ++i) {
          require(aDims[i] >= 0 && bDims[i] >= 0, "dims must be non-negative");
          require(aDims[i] == bDims[i] || aDims[i] == 1 || bDims[i] == 1,
                  "dimension " + std::to_string(i) +
                      " is neither equal nor broadcast");
          cDims[i] = aDims[i] == 1 ? bDims[i] : aDims[i];
          count *= cDims[i];
        }
        if (count == 0)
          return;
        require(a && b && c, "a, b and c must not be NULL");

        bool aFull = aDims == cDims, bFull = bDims == cDims;
        const float *src0 = nullptr, *src1 = nullptr;
        Dims src1Dims;
        if (aFull && !(bFull && c == b && c != a)) {
          src0 = a;
          src1 = b;
          src1Dims = bDims;
        } else if (bFull && commutative(op) && !(c == a && c != b)) {
          src0 = b;
          src1 = a;
          src1Dims = aDims;
        }
        if (!src0)
          return runBroadcastLoop(ctxRef, op, rank, aDims, a, bDims, b, cDims,
                                  c);
        CacheKey key(site, int32_t(Kernel::Binary));
        key << int64_t(op) << int64_t(rank);
        for (int i = 0; i < rank; ++i)
          key << cDims[i] << src1Dims[i];
        Primitive &primitive = cachedPrimitive(ctxRef, key, [&] {
          dnnl::binary::desc desc(algorithm, denseDesc(cDims),
                                  denseDesc(src1Dims), denseDesc(cDims));
          dnnl::binary::primitive_desc pd(desc, userScratchpadAttr(),
                                          ctxRef.engine());
          return Primitive(ctxRef, pd,
                           {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST});
        });
        primitive.execute(ctxRef, {src0, src1, c});
      });
}

} // extern "C"
