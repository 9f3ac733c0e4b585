//===- RopeKernels.cuh - rotary embeddings' device code --------*- CUDA -*-===//
//
// The kernel of txrt_cuda_rope / _rope_angles (Rope.cu launches it), its
// inverse frequencies and its launch geometry. The CPU kernel's rotation
// (runtime/lib/kernels/Rope.cpp): the angle of position t and pair i is a
// float (p * inv_freq[i], inv_freq computed on the host with the CPU's
// expression and passed by value, or the program's angle table), its cos
// and sin taken in double and rounded once; then
//   y[i] = x[i] cos - x[i + d/2] sin,  y[i + d/2] = x[i + d/2] cos + x[i] sin
// a thread a pair. inverse rotates by -theta (the backward). A partial
// rotation rotates each head's first `rot` features (rot in place of d
// above) and copies the other d - rot when y is not x. No CUDA
// header: test/unit/cuda/emulated/ runs the same code on the host against
// the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_ROPEKERNELS_CUH
#define TXRT_CUDA_KERNELS_ROPEKERNELS_CUH

#include "KernelLaunch.cuh"

#include <cmath>
#include <cstdint>

namespace txrt::cuda::rope {

constexpr int kMaxPairs = 256; ///< head_dim <= 512

struct InverseFrequencies {
  float values[kMaxPairs];
};

__global__ void ropeKernel(int64_t outer, int64_t seq, int64_t heads,
                           int64_t headDim, int64_t rot, const float *x,
                           float *y, int64_t posOffset, InverseFrequencies inv,
                           const float *angles, bool inverse) {
  const int64_t half = rot / 2;
  const int64_t total = outer * seq * heads * half;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % half, h = e / half % heads,
                  t = e / half / heads % seq, o = e / half / heads / seq;
    const float angle =
        angles ? angles[t * half + i] : float(posOffset + t) * inv.values[i];
    const float c = float(cos(double(angle)));
    const float s = float((inverse ? -1.0 : 1.0) * sin(double(angle)));
    const int64_t base = (o * seq + t) * heads * headDim + h * headDim;
    // y may alias x: both elements of the pair are read before either is
    // written, by this thread alone.
    const float first = x[base + i], second = x[base + i + half];
    y[base + i] = first * c - second * s;
    y[base + i + half] = second * c + first * s;
  }
  // The features past `rot` of each head row, unrotated.
  const int64_t rest = headDim - rot;
  if (x == y || rest == 0)
    return;
  const int64_t copies = outer * seq * heads * rest;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < copies;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = e / rest * headDim + rot + e % rest;
    y[at] = x[at];
  }
}

/// inv_freq[i] = 1 / base^(2i / rot) in float, as the CPU computes it, for
/// the `rot` features that rotate (rot / 2 <= kMaxPairs).
inline InverseFrequencies inverseFrequencies(float base, int64_t rot) {
  InverseFrequencies inv = {};
  for (int64_t i = 0; i < rot / 2; ++i)
    inv.values[i] = 1.0f / std::pow(base, float(2 * i) / float(rot));
  return inv;
}

/// A thread a pair of the outer x seq x heads x rot / 2 (and as many of
/// the copied features, when there are more of those).
inline KernelLaunch pairLaunch(int64_t pairs, int64_t copies = 0) {
  return gridStrideLaunch(pairs > copies ? pairs : copies, 256);
}

} // namespace txrt::cuda::rope

#endif // TXRT_CUDA_KERNELS_ROPEKERNELS_CUH
