//===- Adam.cpp - the Adam update with bias correction --------------------===//
//
// One streaming pass over (param, grad, m, v), the same arithmetic as
// torch.optim.Adam's single-tensor path: denom = sqrt(v) / sqrt(1 - b2^t) +
// eps, param -= (lr / (1 - b1^t)) * (m / denom), m updated as a lerp.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <cmath>

using namespace txrt;

extern "C" {

txrt_status txrt_adam_update(txrt_context *ctx, int64_t /*site*/, int64_t n,
                             float *param, const float *grad, float *m,
                             float *v, float lr, float beta1, float beta2,
                             float eps, float weight_decay, int64_t step) {
  return runKernel(
      ctx, "txrt_adam_update", [&] { return shapes("n", n, "step", step); },
      [&](Context &c) {
        require(n >= 0, "n must be non-negative");
        require(step >= 1, "step must be >= 1 (the count including this one)");
        require(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
                "betas must be in [0, 1)");
        if (n == 0)
          return;
        require(param && grad && m && v,
                "param, grad, m and v must not be NULL");
        const double correction1 = 1.0 - std::pow(double(beta1), double(step));
        const double correction2 = 1.0 - std::pow(double(beta2), double(step));
        const float stepSize = float(double(lr) / correction1);
        const float sqrtCorrection2 = float(std::sqrt(correction2));
        const float oneMinusBeta1 = 1.0f - beta1;
        const float oneMinusBeta2 = 1.0f - beta2;
#pragma omp parallel for simd num_threads(c.numThreads()) if (n > 32768)
        for (int64_t i = 0; i < n; ++i) {
          float g = grad[i];
          if (weight_decay != 0.0f)
            g += weight_decay * param[i];
          float mi = m[i] + oneMinusBeta1 * (g - m[i]); // lerp, as torch
          float vi = beta2 * v[i] + oneMinusBeta2 * g * g;
          m[i] = mi;
          v[i] = vi;
          float denom = std::sqrt(vi) / sqrtCorrection2 + eps;
          param[i] -= stepSize * (mi / denom);
        }
      });
}

} // extern "C"
