//===- DynamicLibrary.h - a CUDA library opened with dlopen -----*- C++ -*-===//
//
// cuBLASLt (CublasLt.cpp) and NCCL (Nccl.cpp) are opened at run time, not
// linked, so the executables start on machines without them. Both look
// their functions up into a table the same way; the errors name the
// library, the path and what to do.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_CUDA_DYNAMICLIBRARY_H
#define TXRT_CUDA_DYNAMICLIBRARY_H

#include "CudaContext.h"

#include <dlfcn.h>

#include <string>
#include <utility>

namespace txrt::cuda {

/// A library opened with RTLD_NOW | RTLD_LOCAL and never closed (its
/// functions live in process-wide tables).
class DynamicLibrary {
public:
  /// Opens `path`; throws CudaError "cannot load WHAT (PATH): REASON; HINT".
  DynamicLibrary(std::string what, std::string path, const std::string &hint)
      : what_(std::move(what)), path_(std::move(path)),
        handle_(dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) {
      const char *reason = dlerror();
      throw CudaError(TXRT_ERROR_BACKEND,
                      "cannot load " + what_ + " (" + path_ +
                          "): " + (reason ? reason : "not found") + "; " +
                          hint);
    }
  }

  /// Sets `slot` to the function `symbol`; a missing required one throws
  /// CudaError "WHAT: PATH has no SYMBOL", an optional one leaves NULL.
  template <typename Fn>
  void lookup(const char *symbol, Fn &slot, bool required = true) const {
    slot = reinterpret_cast<Fn>(dlsym(handle_, symbol));
    if (!slot && required)
      throw CudaError(TXRT_ERROR_BACKEND,
                      what_ + ": " + path_ + " has no " + symbol);
  }

private:
  std::string what_, path_;
  void *handle_;
};

} // namespace txrt::cuda

#endif // TXRT_CUDA_DYNAMICLIBRARY_H
