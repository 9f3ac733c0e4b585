//===- LayerNormBackward.h - the layer norms' shared backward ---*- C++ -*-===//
//
// One backward for both layer norms: the fused residual add + layer norm
// (AddLayerNorm.cpp) and the plain one (LayerNorm.cpp, whose forward is
// oneDNN's). Its dgamma and dbeta sum over rows in float blocks added in
// double (ColumnSums, VecMath.h); oneDNN's backward summed each column in
// one float per thread (7e-6 off float64 over 131072 rows).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_LAYERNORMBACKWARD_H
#define TXRT_LIB_LAYERNORMBACKWARD_H

#include "Context.h"

#include <algorithm>
#include <cstdint>

namespace txrt {

/// dx (and dgamma, dbeta when not NULL) of y = (s - mean) * rstd * gamma
/// + beta over rows x cols, with s = `sum` when given, else x + r. mean
/// and var are the forward's, or NULL: recomputed from s by the fused
/// forward's own arithmetic. dsum (may be NULL) is added to ds. The
/// accumulate flags add into dx and into dgamma / dbeta instead of
/// overwriting them.
void addLayerNormBackward(Context &ctx, int64_t rows, int64_t cols,
                          const float *x, const float *r, const float *sum,
                          const float *gamma, const float *mean,
                          const float *var, float eps, const float *dy,
                          const float *dsum, float *dx, float *dgamma,
                          float *dbeta, bool accumulateDx,
                          bool accumulateParams);

/// The backward over no rows (an empty batch): dgamma and dbeta (each when
/// not NULL) sum over nothing, so they are zeros, kept when accumulating;
/// dx is empty.
inline void layerNormBackwardOverNoRows(int64_t cols, float *dgamma,
                                        float *dbeta, bool accumulateParams) {
  if (accumulateParams)
    return;
  for (float *g : {dgamma, dbeta})
    if (g)
      std::fill(g, g + cols, 0.0f);
}

} // namespace txrt

#endif // TXRT_LIB_LAYERNORMBACKWARD_H
