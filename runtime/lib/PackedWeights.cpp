//===- PackedWeights.cpp - frozen weights kept in a product's layout ------===//
#include "PackedWeights.h"
#include "Context.h"

#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

using namespace txrt;

PackedWeights::PackedWeights() {
  // As the executables check it (Driver.cpp): `off` or `false` turned
  // packing on in a program of the C API, as any value but 0 did.
  const char *env = std::getenv("TXRT_PACK_WEIGHTS");
  const std::string_view value = env ? env : "";
  if (!value.empty() && value != "0" && value != "1")
    throw Error(TXRT_ERROR_INVALID_ARGUMENT,
                "TXRT_PACK_WEIGHTS='" + std::string(value) +
                    "' is not 0 (off) or 1 (on, the default)");
  enabled_ = value != "0";
}

void PackedWeights::freeze(const void *base, size_t bytes) {
  copies_.clear();
  count_ = 0;
  bytes_ = 0;
  begin_ = base && bytes ? reinterpret_cast<uintptr_t>(base) : 0;
  end_ = begin_ ? begin_ + bytes : 0;
}

void PackedWeights::noteWrite(const void *p, size_t bytes) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  if (begin_ != 0 && at < end_ && at + bytes > begin_)
    freeze(nullptr, 0);
}

bool PackedWeights::covers(const void *w, size_t bytes) const {
  const uintptr_t at = reinterpret_cast<uintptr_t>(w);
  return enabled_ && begin_ != 0 && at >= begin_ && at <= end_ &&
         bytes <= end_ - at;
}

const void *PackedWeights::get(const dnnl::engine &engine, dnnl::stream &stream,
                               const void *w, const dnnl::memory::desc &plain,
                               const dnnl::memory::desc &packed) {
  if (!covers(w, plain.get_size()))
    return nullptr;
  std::vector<Copy> &copies = copies_[w];
  for (Copy &copy : copies)
    if (copy.layout == packed)
      return copy.data.get_data_handle();
  const size_t size = packed.get_size();
  if (bytes_ + size > 2 * (end_ - begin_)) // layouts pad odd shapes
    return nullptr;
  try {
    dnnl::memory source(plain, engine, const_cast<void *>(w));
    dnnl::memory data(packed, engine); // allocated by oneDNN
    dnnl::reorder(source, data).execute(stream, source, data);
    stream.wait();
    copies.push_back({packed, data});
  } catch (const dnnl::error &) {
    return nullptr; // out of memory or no reorder: read the plain weights
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
  ++count_;
  bytes_ += size;
  return copies.back().data.get_data_handle();
}
