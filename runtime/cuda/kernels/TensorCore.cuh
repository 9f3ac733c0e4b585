//===- TensorCore.cuh - fp32 products on TF32 tensor cores ----*- CUDA -*-===//
//
// A warp's 16x8x8 matrix product on the tensor cores (PTX mma.sync
// m16n8k8, TF32 inputs, fp32 accumulation, sm_80 and later) with the
// operands split in two TF32 parts, x = big + small (big = x rounded to
// TF32's 10 mantissa bits, small = the rounded rest), and each product taken
// as big*big + big*small + small*big: "3xTF32", the error-compensated form
// CUTLASS calls OpMultiplyAddFastF32 and PyTorch's memory-efficient
// scaled_dot_product_attention uses for fp32 on these GPUs. A product then
// carries about 22 bits of each operand (fp32 has 24): the results agree
// with fp32 CUDA-core arithmetic to ~1e-6 relative, far inside the 1e-5 the
// kernels are held to, unlike plain TF32 (~1e-3), which stays behind
// --allow-tf32.
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k8" with .tf32), lane =
// 4 * g + t: A (16 x 8, row-major) a0 = A[g][t], a1 = A[g + 8][t], a2 =
// A[g][t + 4], a3 = A[g + 8][t + 4]; B (8 x 8) b0 = B[t][g], b1 = B[t + 4][g];
// C and D (16 x 8) c_q = C[g + 8 (q / 2)][2 t + q % 2].
//
// No CUDA header: under test/unit/cuda/emulated/CudaEmulation.h the product
// is the emulation's warp-wide host form (emu::mmaTf32), so the kernels built
// on it are checked on machines without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_TENSORCORE_CUH
#define TXRT_CUDA_KERNELS_TENSORCORE_CUH

#include <cstdint>
#ifdef TXRT_CUDA_EMULATION
#include <cstring>
#endif

namespace txrt::cuda::tensorcore {

__device__ __forceinline__ uint32_t bitsOf(float x) {
#ifdef TXRT_CUDA_EMULATION
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#else
  return __float_as_uint(x);
#endif
}

__device__ __forceinline__ float floatOf(uint32_t bits) {
#ifdef TXRT_CUDA_EMULATION
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#else
  return __uint_as_float(bits);
#endif
}

/// x rounded to TF32 (10 mantissa bits), to nearest with ties away from
/// zero as cvt.rna.tf32.f32 rounds, as fp32 bits with the 13 low bits zero.
/// Integer arithmetic, so the GPU and the emulation round alike.
__device__ __forceinline__ uint32_t roundToTf32(float x) {
  return (bitsOf(x) + 0x1000u) & 0xFFFFE000u;
}

/// The two TF32 parts of n values: big = tf32(x), small = tf32(x - big).
/// x - big is exact in fp32 (x and big share their leading bits).
template <int n> struct Split {
  uint32_t big[n], small[n];
  __device__ __forceinline__ void set(int i, float x) {
    big[i] = roundToTf32(x);
    small[i] = roundToTf32(x - floatOf(big[i]));
  }
};
using SplitA = Split<4>;
using SplitB = Split<2>;

/// d += a b for one 16x8x8 product in TF32 (fragments as above).
__device__ __forceinline__ void mmaTf32(float (&d)[4], const uint32_t (&a)[4],
                                        const uint32_t (&b)[2]) {
#ifdef TXRT_CUDA_EMULATION
  ::emu::mmaTf32(d, a, b);
#else
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
#endif
}

/// d += a b with 3xTF32: the small cross terms first, the large product
/// last (small * small, ~2^-22 relative, is left out).
__device__ __forceinline__ void mma3xTf32(float (&d)[4], const SplitA &a,
                                          const SplitB &b) {
  mmaTf32(d, a.small, b.big);
  mmaTf32(d, a.big, b.small);
  mmaTf32(d, a.big, b.big);
}

/// d += a b in kPasses tensor-core products: 3 is mma3xTf32 (fp32-level),
/// 1 the big parts alone, plain TF32 (~1e-3 relative, only where the user
/// allowed TF32: txrt_cuda_context's allowTf32), a third of the products.
/// The small parts a 1-pass kernel sets are dead code to the compiler.
template <int kPasses>
__device__ __forceinline__ void mmaPasses(float (&d)[4], const SplitA &a,
                                          const SplitB &b) {
  static_assert(kPasses == 1 || kPasses == 3, "1xTF32 or 3xTF32");
  if constexpr (kPasses == 3)
    mma3xTf32(d, a, b);
  else
    mmaTf32(d, a.big, b.big);
}

/// This lane's row group g (0-7) and thread in the group t (0-3).
struct Lane {
  int g, t;
};
__device__ __forceinline__ Lane laneOf(int lane) {
  return {lane / 4, lane % 4};
}

/// The A fragment of the 16x8 block at (row0, col0) of a row-major tile
/// (`stride` floats a row).
__device__ __forceinline__ SplitA loadA(const float *tile, int stride, int row0,
                                        int col0, Lane l) {
  SplitA a;
  const float *top = tile + (row0 + l.g) * stride + col0 + l.t;
  const float *bottom = top + 8 * stride;
  a.set(0, top[0]);
  a.set(1, bottom[0]);
  a.set(2, top[4]);
  a.set(3, bottom[4]);
  return a;
}

/// The B fragment of B[k][n] = tile[(n0 + n) * stride + k0 + k]: B's columns
/// are the tile's rows (K for Q K^T).
__device__ __forceinline__ SplitB loadBTransposed(const float *tile, int stride,
                                                  int n0, int k0, Lane l) {
  SplitB b;
  const float *p = tile + (n0 + l.g) * stride + k0 + l.t;
  b.set(0, p[0]);
  b.set(1, p[4]);
  return b;
}

/// The B fragment of B[k][n] = tile[(k0 + k) * stride + n0 + n]: B's rows
/// are the tile's rows (V for P V).
__device__ __forceinline__ SplitB loadB(const float *tile, int stride, int k0,
                                        int n0, Lane l) {
  SplitB b;
  const float *p = tile + (k0 + l.t) * stride + n0 + l.g;
  b.set(0, p[0]);
  b.set(1, p[4 * stride]);
  return b;
}

/// Sum and maximum over the 4 lanes of a row group (the lanes holding one
/// row of a C fragment).
__device__ __forceinline__ float quadSum(float x) {
  x += __shfl_xor_sync(0xFFFFFFFFu, x, 1);
  x += __shfl_xor_sync(0xFFFFFFFFu, x, 2);
  return x;
}
__device__ __forceinline__ float quadMax(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 1));
  x = fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 2));
  return x;
}

} // namespace txrt::cuda::tensorcore

#endif // TXRT_CUDA_KERNELS_TENSORCORE_CUH
