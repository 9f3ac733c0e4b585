//===- Bf16.cpp - bf16 casts, bf16 linears and the CPU check --------------===//
//
// The kernels of txc --precision=bf16 (docs/precision.md): f32 <-> bf16
// casts (round to nearest even), the linear forward and backward as oneDNN
// bf16 matmuls with f32 accumulation and f32 outputs (oneDNN picks
// brg:avx512_core_bf16 or the AMX kernel), and the cpuid check the
// executable runs at startup.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Bf16Round.h"
#include "MatmulPrimitive.h"

#include <cpuid.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace txrt;

namespace {

void castToBf16(Context &c, int64_t n, const float *src, txrt_bf16 *dst) {
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dst[i] = roundToBf16(src[i]);
}

/// db[j] (+)= sum_i dy[i, j] over dy [rows, cols].
void requireSizes(int64_t m, int64_t n, int64_t k) {
  require(m >= 0 && n >= 0 && k >= 0, "sizes must be non-negative");
}

} // namespace

extern "C" {

txrt_status txrt_cast_f32_to_bf16(txrt_context *ctx, int64_t n,
                                  const float *src, txrt_bf16 *dst) {
  return runKernel(
      ctx, "txrt_cast_f32_to_bf16", [&] { return shapes("n", n); },
      [&](Context &c) {
        require(n >= 0, "n must be non-negative");
        if (n == 0)
          return;
        require(src != nullptr && dst != nullptr, "src or dst is NULL");
        castToBf16(c, n, src, dst);
      });
}

void txrt_round_to_bf16(int64_t n, const float *src, txrt_bf16 *dst) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = roundToBf16(src[i]);
}

txrt_status txrt_cast_bf16_to_f32(txrt_context *ctx, int64_t n,
                                  const txrt_bf16 *src, float *dst) {
  return runKernel(
      ctx, "txrt_cast_bf16_to_f32", [&] { return shapes("n", n); },
      [&](Context &c) {
        require(n >= 0, "n must be non-negative");
        if (n == 0)
          return;
        require(src != nullptr && dst != nullptr, "src or dst is NULL");
#pragma omp parallel for num_threads(c.numThreads()) schedule(static)
        for (int64_t i = 0; i < n; ++i)
          dst[i] = widenBf16(src[i]);
      });
}

txrt_status txrt_linear_fwd_bf16(txrt_context *ctx, int64_t site, int64_t m,
                                 int64_t n, int64_t k, const txrt_bf16 *x,
                                 const txrt_bf16 *w, const float *bias,
                                 int32_t activation, const float *residual,
                                 float *y) {
  return runKernel(
      ctx, site, "txrt_linear_fwd_bf16",
      [&] { return shapes("m", m, "n", n, "k", k); },
      [&](Context &c) {
        linearForward(c, site, /*bf16=*/true, m, n, k, x, w, bias, activation,
                      nullptr, residual, y);
      });
}

txrt_status txrt_linear_gated_fwd_bf16(txrt_context *ctx, int64_t site,
                                       int64_t m, int64_t n, int64_t k,
                                       const txrt_bf16 *x, const txrt_bf16 *w,
                                       const float *bias, int32_t activation,
                                       const float *gate,
                                       const float *residual, float *y) {
  return runKernel(
      ctx, site, "txrt_linear_gated_fwd_bf16",
      [&] { return shapes("m", m, "n", n, "k", k); },
      [&](Context &c) {
        gatedLinearForward(c, site, /*bf16=*/true, m, n, k, x, w, bias,
                           activation, gate, residual, y);
      });
}

txrt_status txrt_linear_bwd_bf16(txrt_context *ctx, int64_t site, int64_t m,
                                 int64_t n, int64_t k, const txrt_bf16 *x,
                                 const txrt_bf16 *w, const float *dy,
                                 float *dx, float *dw, float *dbias,
                                 int32_t accumulate_dx,
                                 int32_t accumulate_params) {
  return runKernel(
      ctx, site, "txrt_linear_bwd_bf16",
      [&] { return shapes("m", m, "n", n, "k", k); },
      [&](Context &c) {
        c.noteFlops(2.0 * double(m) * double(n) * double(k) *
                    ((dx ? 1.0 : 0.0) + (dw ? 1.0 : 0.0)));
        requireSizes(m, n, k);
        if (m == 0 || n == 0 || k == 0)
          return emptyLinearBackward(c, m, n, k, dy, dx, dw, dbias,
                                     accumulate_dx != 0,
                                     accumulate_params != 0);
        require(dy != nullptr, "dy is NULL");
        // oneDNN 2.6 has no matmul with f32 src and bf16 weights: dy is
        // rounded to bf16 once for both products.
        txrt_bf16 *dyBf16 = nullptr;
        if (dx || dw) {
          dyBf16 = c.temp(0).as<txrt_bf16>(size_t(m) * size_t(n));
          castToBf16(c, m * n, dy, dyBf16);
        }
        linearBackwardProducts(c, site, /*bf16=*/true, m, n, k, dyBf16, x, w,
                               dx, dw, accumulate_dx != 0,
                               accumulate_params != 0);
        if (dbias)
          columnSum(c, dy, m, n, dbias, accumulate_params != 0);
      });
}

int32_t txrt_cpu_has_bf16(void) {
  const char *assumeNo = std::getenv("TXRT_ASSUME_NO_BF16");
  if (assumeNo && *assumeNo && std::strcmp(assumeNo, "0") != 0)
    return 0;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27)))
    return 0; // no OSXSAVE: the OS does not save vector state
  unsigned xcr0Low, xcr0High;
  __asm__ volatile("xgetbv" : "=a"(xcr0Low), "=d"(xcr0High) : "c"(0));
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return 0;
  const bool amxBf16 = (edx & (1u << 22)) && (xcr0Low & 0x60000u) == 0x60000u;
  const unsigned subleaves = eax;
  bool avx512Bf16 = false;
  if (subleaves >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    avx512Bf16 = (eax & (1u << 5)) && (xcr0Low & 0xe6u) == 0xe6u;
  return (amxBf16 || avx512Bf16) ? 1 : 0;
}

} // extern "C"
