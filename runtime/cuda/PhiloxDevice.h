//===- PhiloxDevice.h - the CPU kernel's Philox stream, host and device -*- C++ -*-===//
//
// The same Philox4x32-10 generator, key derivation and keep threshold as
// runtime/lib/Philox.h, written once for both sides: __host__ __device__
// under nvcc, plain inline functions in C++. Element i of dropout site
// (seed, step, site) uses word i % 4 of counter i / 4 in both kernels, so
// a GPU run and a CPU run drop the same elements. PhiloxDeviceTest checks
// the host side against Philox.h bit for bit; the CUDA dropout test checks
// the device side against the CPU kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_PHILOXDEVICE_H
#define TXRT_CUDA_PHILOXDEVICE_H

#include <cstdint>

#ifdef __CUDACC__
#define TXRT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TXRT_HOST_DEVICE inline
#endif

namespace txrt::cuda {

struct PhiloxStream {
  uint32_t k0, k1; ///< the key: the seed
  uint32_t c2, c3; ///< words 2 and 3 of every counter: (step, site) mixed
};

TXRT_HOST_DEVICE uint64_t splitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// txrt::philoxKey of Philox.h.
TXRT_HOST_DEVICE PhiloxStream philoxStream(uint64_t seed, int64_t step,
                                           int64_t site) {
  uint64_t stream = splitMix64(uint64_t(step) ^ splitMix64(uint64_t(site)));
  return {uint32_t(seed), uint32_t(seed >> 32), uint32_t(stream),
          uint32_t(stream >> 32)};
}

/// The four words of counter `block` (txrt::philox4x32 of Philox.h).
TXRT_HOST_DEVICE void philoxWords(const PhiloxStream &key, uint64_t block,
                                  uint32_t out[4]) {
  uint32_t c0 = uint32_t(block), c1 = uint32_t(block >> 32);
  uint32_t c2 = key.c2, c3 = key.c3;
  uint32_t k0 = key.k0, k1 = key.k1;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c0;
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/// The training state a captured step reads on the device: each replay of a
/// CUDA graph sees the step and seed txrt_cuda_context_set_train_state set
/// for it (CudaContext.h, StepState), where a kernel argument would keep the
/// value of the step that was captured.
struct DeviceTrainState {
  uint64_t seed;
  int64_t step;
};

/// A site's Philox stream as a kernel argument: the key the host derived,
/// or, with `state` set (a call inside a captured step), derived on the
/// device from the training state it points at, by the same philoxStream.
struct PhiloxSource {
  PhiloxStream key;
  const DeviceTrainState *state;
  int64_t site;
  TXRT_HOST_DEVICE PhiloxStream resolve() const {
    return state ? philoxStream(state->seed, state->step, site) : key;
  }
};

/// The host-derived source of (seed, step, site).
TXRT_HOST_DEVICE PhiloxSource hostPhilox(uint64_t seed, int64_t step,
                                         int64_t site) {
  return {philoxStream(seed, step, site), nullptr, site};
}

/// txrt::dropoutThreshold: word w keeps iff w >= threshold.
TXRT_HOST_DEVICE uint32_t keepThreshold(float p) {
  double t = double(p) * 4294967296.0;
  return t >= 4294967295.0 ? 0xFFFFFFFFu : uint32_t(t);
}

/// Whether element i of the stream is kept.
TXRT_HOST_DEVICE bool keepsElement(const PhiloxStream &key, uint64_t i,
                                   uint32_t threshold) {
  uint32_t words[4];
  philoxWords(key, i / 4, words);
  return words[i % 4] >= threshold;
}

} // namespace txrt::cuda

#endif // TXRT_CUDA_PHILOXDEVICE_H
