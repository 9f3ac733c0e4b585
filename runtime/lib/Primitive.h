//===- Primitive.h - oneDNN primitives bound to raw pointers ----*- C++ -*-===//
//
// A Primitive is a oneDNN primitive plus memory objects for each of its
// arguments (one set per thread that may execute it), so executing it on the
// caller's buffers is "set data handles, execute" with no allocation. All
// primitives use user-managed scratchpads taken from the context.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_LIB_PRIMITIVE_H
#define TXRT_LIB_PRIMITIVE_H

#include "Context.h"

#include <initializer_list>
#include <vector>

namespace txrt {

using dnnl::memory;
using Dims = memory::dims;

/// A dense row-major f32 descriptor.
memory::desc denseDesc(const Dims &dims);
/// An f32 descriptor with explicit strides (elements).
memory::desc stridedDesc(const Dims &dims, const Dims &strides);

/// An attribute with a user-managed scratchpad (what every Primitive uses).
dnnl::primitive_attr userScratchpadAttr();

class Primitive {
public:
  Primitive() = default;
  /// Creates the primitive of `pd` (counted by the context). `args` lists the
  /// DNNL_ARG_* ids in the order execute() receives their pointers;
  /// `threadSlots` is how many threads may execute it at once.
  Primitive(Context &ctx, const dnnl::primitive_desc_base &pd,
            std::vector<int> args, int threadSlots = 1);

  /// Executes on `pointers` (one per argument id, in order) as OpenMP thread
  /// `thread` (a thread slot) on that thread's stream.
  void execute(Context &ctx, std::initializer_list<const void *> pointers,
               int thread = 0) {
    execute(ctx, pointers.begin(), int(pointers.size()), thread);
  }
  void execute(Context &ctx, const std::vector<const void *> &pointers,
               int thread = 0) {
    execute(ctx, pointers.data(), int(pointers.size()), thread);
  }
  void execute(Context &ctx, const void *const *pointers, int count,
               int thread);

  const char *implementation() const;
  size_t scratchpadBytes() const { return scratchpadBytes_; }

private:
  dnnl::primitive primitive_;
  std::vector<int> args_;
  size_t scratchpadBytes_ = 0;
  // [thread][argument], the scratchpad memory last when there is one.
  std::vector<std::vector<memory>> memories_;
};

/// A cache entry holding one primitive.
struct PrimitiveEntry : CacheEntry {
  Primitive primitive;
};

/// The primitive cached under `key`, built by make() (returning a Primitive)
/// on a miss.
template <typename Make>
Primitive &cachedPrimitive(Context &ctx, const CacheKey &key, Make &&make) {
  auto &entry = ctx.cached<PrimitiveEntry>(key, [&] {
    auto fresh = std::make_unique<PrimitiveEntry>();
    fresh->primitive = make();
    return fresh.release();
  });
  return entry.primitive;
}

/// Limits OpenMP to `threads` threads while alive (and restores the count).
/// Primitives created under ScopedMaxThreads(1) run single-threaded, which is
/// what a primitive executed from inside a parallel region must do.
class ScopedMaxThreads {
public:
  explicit ScopedMaxThreads(int threads);
  ~ScopedMaxThreads();
  ScopedMaxThreads(const ScopedMaxThreads &) = delete;
  ScopedMaxThreads &operator=(const ScopedMaxThreads &) = delete;

private:
  int previous_;
};

} // namespace txrt

#endif // TXRT_LIB_PRIMITIVE_H
