//===- Primitive.cpp - oneDNN primitives bound to raw pointers ------------===//
//
// Creation of primitives with per-thread argument memories, and their
// execution through the C API (no std::unordered_map per call).
//
//===----------------------------------------------------------------------===//
#include "Primitive.h"

#include <omp.h>

using namespace txrt;

memory::desc txrt::denseDesc(const Dims &dims) {
  Dims strides(dims.size(), 1);
  for (int i = int(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc txrt::stridedDesc(const Dims &dims, const Dims &strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

dnnl::primitive_attr txrt::userScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

Primitive::Primitive(Context &ctx, const dnnl::primitive_desc_base &pd,
                     std::vector<int> args, int threadSlots)
    : args_(std::move(args)) {
  primitive_ = dnnl::primitive(pd.get());
  ctx.countPrimitiveCreation();
  scratchpadBytes_ = pd.scratchpad_desc().get_size();
  memories_.resize(threadSlots);
  for (auto &slot : memories_) {
    for (int arg : args_) {
      const dnnl_memory_desc_t *md =
          dnnl_primitive_desc_query_md(pd.get(), dnnl_query_exec_arg_md, arg);
      if (!md)
        throw Error(TXRT_ERROR_INTERNAL,
                    "primitive has no argument " + std::to_string(arg));
      slot.emplace_back(memory::desc(*md), ctx.engine(), nullptr);
    }
    if (scratchpadBytes_)
      slot.emplace_back(pd.scratchpad_desc(), ctx.engine(), nullptr);
  }
}

void Primitive::execute(Context &ctx, const void *const *pointers,
                        int pointerCount, int thread) {
  constexpr int kMaxArgs = 16;
  if (pointerCount != int(args_.size()) || pointerCount + 1 > kMaxArgs)
    throw Error(TXRT_ERROR_INTERNAL,
                "primitive executed with " + std::to_string(pointerCount) +
                    " arguments, expected " + std::to_string(args_.size()));
  dnnl_exec_arg_t execArgs[kMaxArgs];
  std::vector<memory> &slot = memories_[thread];
  int count = 0;
  for (; count < pointerCount; ++count) {
    memory &mem = slot[count];
    dnnl_status_t status = dnnl_memory_set_data_handle_v2(
        mem.get(), const_cast<void *>(pointers[count]), nullptr);
    if (status != dnnl_success)
      throw dnnl::error(status, "could not set a memory handle");
    execArgs[count] = {args_[count], mem.get()};
  }
  if (scratchpadBytes_) {
    memory &mem = slot[count];
    void *scratch = ctx.threadScratchpad(thread).get(scratchpadBytes_);
    dnnl_memory_set_data_handle_v2(mem.get(), scratch, nullptr);
    execArgs[count] = {DNNL_ARG_SCRATCHPAD, mem.get()};
    ++count;
  }
  dnnl_status_t status = dnnl_primitive_execute(
      primitive_.get(), ctx.stream(thread).get(), count, execArgs);
  if (status != dnnl_success)
    throw dnnl::error(status, "could not execute a primitive");
}

const char *Primitive::implementation() const {
  const_dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_get_primitive_desc(primitive_.get(), &pd);
  const char *info = nullptr;
  if (pd)
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info);
  return info ? info : "?";
}

ScopedMaxThreads::ScopedMaxThreads(int threads)
    : previous_(omp_get_max_threads()) {
  omp_set_num_threads(threads);
}

ScopedMaxThreads::~ScopedMaxThreads() { omp_set_num_threads(previous_); }
