//===- BlockReduce.cuh - sums and maxima over a thread block ---*- CUDA -*-===//
//
// Warp shuffles, then one value per warp through shared memory. Every thread
// of the block must call blockSum / blockMax (they synchronize) and gets the
// result; warpSum / warpMax reduce one warp's lanes, every lane calling.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_KERNELS_BLOCKREDUCE_CUH
#define TXRT_CUDA_KERNELS_BLOCKREDUCE_CUH

namespace txrt::cuda {

template <typename T, typename Op> __device__ T blockReduce(T value, Op op) {
  __shared__ T partial[32];
  __shared__ T result;
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_down_sync(0xFFFFFFFFu, value, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = (blockDim.x + 31) / 32;
  __syncthreads(); // partial / result may still be read by a previous call
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < warps ? partial[lane] : partial[0];
    for (int offset = 16; offset > 0; offset /= 2) {
      T other = __shfl_down_sync(0xFFFFFFFFu, value, offset);
      if (lane + offset < warps)
        value = op(value, other);
    }
    if (lane == 0)
      result = value;
  }
  __syncthreads();
  return result;
}

/// The sum over the 32 lanes of a warp, in every lane (all lanes call it).
template <typename T> __device__ T warpSum(T value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  return value;
}

/// The maximum over the 32 lanes of a warp, in every lane.
template <typename T> __device__ T warpMax(T value) {
  for (int offset = 16; offset > 0; offset /= 2) {
    T other = __shfl_xor_sync(0xFFFFFFFFu, value, offset);
    value = value > other ? value : other;
  }
  return value;
}

template <typename T> __device__ T blockSum(T value) {
  return blockReduce(value, [](T a, T b) { return a + b; });
}

template <typename T> __device__ T blockMax(T value) {
  return blockReduce(value, [](T a, T b) { return a > b ? a : b; });
}

} // namespace txrt::cuda

#endif // TXRT_CUDA_KERNELS_BLOCKREDUCE_CUH
