//===- CudaEmulation.h - CUDA kernels run as host threads -------*- C++ -*-===//
//
// Just enough of CUDA's thread model to run a kernel's device code on the
// host, for the tests of kernels that a machine without a GPU must still
// check (runtime/cuda/kernels/*Kernels.cuh): every thread of a block is a
// fiber (ucontext) on one host thread, running until it reaches
// __syncthreads or __syncwarp, which release when the whole block or warp
// has arrived; warp shuffles exchange through a slot a thread between two
// warp barriers; __shared__ variables are statics (one block runs at a time)
// and the dynamic shared memory is one buffer per launch; atomics are plain
// read-modify-writes (a thread is never interrupted between barriers).
// Blocks run one after another, deterministically. Include it before the
// device code.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_TEST_CUDA_EMULATED_CUDAEMULATION_H
#define TXRT_TEST_CUDA_EMULATED_CUDAEMULATION_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include <ucontext.h>

namespace emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// One kernel thread: a context of its own on a stack of its own.
struct Fiber {
  enum State { Ready, AtBlockBarrier, AtWarpBarrier, Done };
  static constexpr size_t kStackBytes = 256 * 1024;
  ucontext_t context;
  /// Not zeroed: the pages a thread never touches are never committed.
  std::unique_ptr<char[]> stack{new char[kStackBytes]};
  State state = Ready;
  unsigned index = 0;
};

inline Dim3 threadIndex, blockIndex, blockDimension, gridDimension;
inline ucontext_t schedulerContext;
inline Fiber *currentFiber = nullptr;
inline const std::function<void()> *currentKernel = nullptr;
inline std::vector<uint64_t> exchangeSlots; ///< one a thread, for shuffles
/// Six a thread: its A and B fragments of a warp's tensor-core product.
inline std::vector<uint32_t> mmaSlots;
inline std::vector<unsigned char> dynamicSharedMemory;

/// Parks the running thread at a barrier until the scheduler releases it.
inline void waitAt(Fiber::State barrier) {
  currentFiber->state = barrier;
  swapcontext(&currentFiber->context, &schedulerContext);
}
inline void syncThreads() { waitAt(Fiber::AtBlockBarrier); }
inline void syncWarp() { waitAt(Fiber::AtWarpBarrier); }

/// The value `lane` of this thread's warp holds.
template <typename T> T exchangeWith(T value, unsigned lane) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "shuffle of a wide type");
  const unsigned self = threadIndex.x, base = self / 32 * 32;
  uint64_t slot = 0;
  std::memcpy(&slot, &value, sizeof(T));
  exchangeSlots[self] = slot;
  syncWarp();
  T result;
  slot = exchangeSlots[base + (lane % 32)];
  std::memcpy(&result, &slot, sizeof(T));
  syncWarp();
  return result;
}

/// __syncthreads_or: a block barrier that returns, in every thread,
/// whether `predicate` was non-zero in any of them.
inline int syncThreadsOr(int predicate) {
  exchangeSlots[threadIndex.x] = predicate != 0;
  syncThreads();
  int any = 0;
  for (unsigned t = 0; t < blockDimension.x; ++t)
    any |= exchangeSlots[t] != 0;
  syncThreads(); // every thread has read the slots before they are reused
  return any;
}

template <typename T> T shuffleXor(unsigned, T value, int mask) {
  return exchangeWith(value, (threadIndex.x % 32) ^ unsigned(mask));
}

template <typename T> T shuffleDown(unsigned, T value, unsigned delta) {
  const unsigned lane = threadIndex.x % 32;
  return exchangeWith(value, lane + delta < 32 ? lane + delta : lane);
}

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (d += a b) as the
/// warp's 32 threads call it together: each publishes its fragments
/// (runtime/cuda/kernels/TensorCore.cuh has their layout), then computes
/// its four elements of D from everyone's. The inputs are TF32: the 13 low
/// bits of each operand are ignored, as the tensor cores ignore them; the
/// products are exact and summed in double, then rounded to fp32 toward
/// zero, as the tensor cores round their sums (they truncate, not round to
/// nearest: Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021;
/// an accumulator carried through thousands of mma.sync calls drifted by
/// 5e-5 on an H200, docs/cuda.md). The hardware also truncates the
/// addends it aligns; this model keeps only the final truncation, the
/// bias that grows with the number of calls.
inline void mmaTf32(float (&d)[4], const uint32_t (&a)[4],
                    const uint32_t (&b)[2]) {
  const unsigned self = threadIndex.x, base = self / 32 * 32;
  for (int i = 0; i < 4; ++i)
    mmaSlots[self * 6 + i] = a[i];
  mmaSlots[self * 6 + 4] = b[0];
  mmaSlots[self * 6 + 5] = b[1];
  syncWarp();
  auto tf32 = [](uint32_t bits) {
    bits &= 0xFFFFE000u;
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return double(x);
  };
  const unsigned lane = self % 32, g = lane / 4, t = lane % 4;
  for (unsigned q = 0; q < 4; ++q) {
    const unsigned row = g + 8 * (q / 2), col = 2 * t + q % 2;
    double sum = d[q];
    for (unsigned k = 0; k < 8; ++k) {
      // A[row][k] is held by lane 4 (row % 8) + k % 4, register
      // (row >= 8) + 2 (k >= 4); B[k][col] by lane 4 col + k % 4, (k >= 4).
      const uint32_t *aLane = &mmaSlots[(base + 4 * (row % 8) + k % 4) * 6];
      const uint32_t *bLane = &mmaSlots[(base + 4 * col + k % 4) * 6];
      sum += tf32(aLane[(row >= 8) + 2 * (k >= 4)]) * tf32(bLane[4 + (k >= 4)]);
    }
    float rounded = float(sum);
    if (std::fabs(double(rounded)) > std::fabs(sum))
      rounded = std::nextafter(rounded, 0.0f);
    d[q] = rounded;
  }
  syncWarp();
}

/// Threads switch only at barriers, so a read-modify-write is already
/// atomic (atomicAdd on any arithmetic type, atomicCAS, atomicExch), and
/// every write is seen at once (__threadfence).
template <typename T> T atomicAddValue(T *address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}
template <typename T> T atomicCompareSwap(T *address, T compare, T value) {
  const T old = *address;
  if (old == compare)
    *address = value;
  return old;
}
template <typename T> T atomicExchange(T *address, T value) {
  const T old = *address;
  *address = value;
  return old;
}
inline void threadFence() {}

/// __fadd_rn / __fmul_rn: one rounded operation each. Not inlined, so the
/// host compiler cannot contract a product and a sum into an FMA.
[[gnu::noinline]] inline float addRounded(float a, float b) { return a + b; }
[[gnu::noinline]] inline float multiplyRounded(float a, float b) {
  return a * b;
}

template <typename T> T *dynamicShared() {
  return reinterpret_cast<T *>(dynamicSharedMemory.data());
}

inline void fiberEntry() {
  (*currentKernel)();
  currentFiber->state = Fiber::Done;
}

/// Makes `fiber` thread `index`, about to run the kernel from its start
/// (apart from launch: getcontext returns twice, as setjmp does).
[[gnu::noinline]] inline void startFiber(Fiber &fiber, unsigned index) {
  fiber.state = Fiber::Ready;
  fiber.index = index;
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = fiber.stack.get();
  fiber.context.uc_stack.ss_size = Fiber::kStackBytes;
  fiber.context.uc_link = &schedulerContext;
  makecontext(&fiber.context, fiberEntry, 0);
}

/// Releases the barriers every thread they name has reached: the block's
/// when all unfinished threads wait there, a warp's when its 32 do. False
/// when none can be released.
inline bool releaseBarriers(Fiber *fibers, size_t count) {
  bool released = false, allAtBlock = true;
  for (const Fiber *fiber = fibers; fiber != fibers + count; ++fiber)
    allAtBlock &=
        fiber->state == Fiber::Done || fiber->state == Fiber::AtBlockBarrier;
  for (size_t warp = 0; warp * 32 < count; ++warp) {
    bool allAtWarp = true;
    for (size_t t = warp * 32; t < warp * 32 + 32; ++t)
      allAtWarp &= fibers[t].state == Fiber::AtWarpBarrier;
    for (size_t t = warp * 32; allAtWarp && t < warp * 32 + 32; ++t)
      fibers[t].state = Fiber::Ready;
    released |= allAtWarp;
  }
  for (Fiber *fiber = fibers; fiber != fibers + count; ++fiber)
    if (allAtBlock && fiber->state == Fiber::AtBlockBarrier) {
      fiber->state = Fiber::Ready;
      released = true;
    }
  return released;
}

/// Runs kernel() on grid x block threads, `sharedBytes` of dynamic shared
/// memory (poisoned with NaN bytes, as a GPU's holds anything). The threads
/// of a block take turns on this host thread, each running until it
/// reaches a barrier; a kernel whose threads wait at barriers that can
/// never all be reached throws. A block's size must be a multiple of 32.
inline void launch(Dim3 grid, Dim3 block, size_t sharedBytes,
                   const std::function<void()> &kernel) {
  if (block.x % 32 != 0 || block.y != 1 || block.z != 1)
    throw std::invalid_argument("emulated blocks are 1-D, whole warps");
  dynamicSharedMemory.assign(sharedBytes, 0xFF);
  exchangeSlots.assign(block.x, 0);
  mmaSlots.assign(block.x * 6, 0);
  gridDimension = grid;
  blockDimension = block;
  currentKernel = &kernel;
  // The threads' stacks are kept from launch to launch: a test launches
  // often, and 256 fresh stacks cost more than a small kernel runs.
  static std::vector<Fiber> pool;
  if (pool.size() < block.x)
    pool.resize(block.x);
  Fiber *const fibers = pool.data();
  const size_t count = block.x;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIndex = {x, y, z};
        for (unsigned t = 0; t < block.x; ++t)
          startFiber(fibers[t], t);
        for (;;) {
          bool running = false;
          for (Fiber *fiber = fibers; fiber != fibers + count; ++fiber) {
            if (fiber->state != Fiber::Ready)
              continue;
            running = true;
            currentFiber = fiber;
            threadIndex = {fiber->index, 0, 0};
            swapcontext(&schedulerContext, &fiber->context);
          }
          bool done = true;
          for (const Fiber *fiber = fibers; fiber != fibers + count; ++fiber)
            done &= fiber->state == Fiber::Done;
          if (done)
            break;
          if (!releaseBarriers(fibers, count) && !running)
            throw std::logic_error("emulated kernel: its threads wait at "
                                   "barriers that can never all be reached");
        }
      }
}

} // namespace emu

/// Device code that has a host form under emulation (DeviceFault.cuh).
#define TXRT_CUDA_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __syncthreads() ::emu::syncThreads()
#define __syncwarp(...) ::emu::syncWarp()
#define __syncthreads_or(predicate) ::emu::syncThreadsOr(predicate)
#define __shfl_xor_sync ::emu::shuffleXor
#define __shfl_down_sync ::emu::shuffleDown
#define atomicAdd ::emu::atomicAddValue
#define atomicCAS ::emu::atomicCompareSwap
#define atomicExch ::emu::atomicExchange
#define __threadfence() ::emu::threadFence()
#define __fadd_rn ::emu::addRounded
#define __fmul_rn ::emu::multiplyRounded
#define threadIdx (::emu::threadIndex)
#define blockIdx (::emu::blockIndex)
#define blockDim (::emu::blockDimension)
#define gridDim (::emu::gridDimension)
#define TXRT_DYNAMIC_SHARED(type, name)                                        \
  type *name = ::emu::dynamicShared<type>()

#endif // TXRT_TEST_CUDA_EMULATED_CUDAEMULATION_H
