//===- RowStats.h - statistics recomputed for backward kernels --*- C++ -*-===//
//
// Backward kernels called without the forward's saved statistics (the
// compiler recomputes instead of storing them) rebuild them here in one
// pass over the input: layer-norm mean and biased variance of each row.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_ROWSTATS_H
#define TXRT_LIB_ROWSTATS_H

#include "Context.h"

#include <cmath>
#include <cstdint>

namespace txrt {

/// mean[i], var[i] of row i of x, rows x cols, in double (vectorised: the
/// sums' order is the compiler's, a few ulps of double, far below the
/// float results). The plain layer norm's backward uses it: its forward is
/// oneDNN's, whose sums txrt cannot repeat. (The add + layer norm backward
/// recomputes with its forward's own arithmetic, AddLayerNorm.cpp.)
inline void rowMeanVar(Context &c, int64_t rows, int64_t cols, const float *x,
                       float *mean, float *var) {
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *xi = x + i * cols;
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < cols; ++j)
      sum += double(xi[j]);
    const double m = sum / double(cols);
    double sq = 0.0;
#pragma omp simd reduction(+ : sq)
    for (int64_t j = 0; j < cols; ++j) {
      const double d = double(xi[j]) - m;
      sq += d * d;
    }
    mean[i] = float(m);
    var[i] = float(sq / double(cols));
  }
}

} // namespace txrt

#endif // TXRT_LIB_ROWSTATS_H
