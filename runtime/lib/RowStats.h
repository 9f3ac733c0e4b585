//===- RowStats.h - statistics recomputed for backward kernels --*- C++ -*-===//
//
// Backward kernels called without the forward's saved statistics (the
// compiler recomputes instead of storing them) rebuild them here in one
// pass over the input: layer-norm mean and biased variance of each row (of
// x, or of x + r), and the log-sum-exp of each row of logits.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_ROWSTATS_H
#define TXRT_LIB_ROWSTATS_H

#include "Context.h"

#include <cmath>
#include <cstdint>

namespace txrt {

/// mean[i], var[i] of row i of x (+ r when r is not NULL), rows x cols.
inline void rowMeanVar(Context &c, int64_t rows, int64_t cols, const float *x,
                       const float *r, float *mean, float *var) {
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *xi = x + i * cols;
    const float *ri = r ? r + i * cols : nullptr;
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      sum += ri ? double(xi[j] + ri[j]) : double(xi[j]);
    double m = sum / double(cols), sq = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      double d = (ri ? double(xi[j] + ri[j]) : double(xi[j])) - m;
      sq += d * d;
    }
    mean[i] = float(m);
    var[i] = float(sq / double(cols));
  }
}

} // namespace txrt

#endif // TXRT_LIB_ROWSTATS_H
