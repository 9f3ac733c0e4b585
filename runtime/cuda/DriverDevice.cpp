//===- DriverDevice.cpp - the executable driver's CUDA device -------------===//
//
// What a --target=cuda executable links besides the kernels: the driver's
// Device (core/ModelRunner.h) on a txrt_cuda_context, and the device list
// of `info`. ModelRunner finds it through the weak txrt_driver_cuda_backend
// (txc links this library with -Wl,--undefined=txrt_driver_cuda_backend), so
// a CPU executable needs no CUDA library. Errors are the driver's: no
// driver or device is an InputError naming --device and what is missing
// (exit 2), running out of device memory a ResourceError with the sizes.
//
//===----------------------------------------------------------------------===//
#include "core/Error.h"
#include "core/ModelRunner.h"

#include "txrt/txrt_cuda.h"

#include <cstdio>
#include <ostream>

namespace txrt::driver {
namespace {

std::string formatGiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", double(bytes) / (1ull << 30));
  return text;
}

/// "NVIDIA H100 80GB HBM3, 79.1 GiB, sm_90".
std::string describeContext(txrt_cuda_context *ctx) {
  char name[256] = {};
  uint64_t bytes = 0;
  int32_t major = 0, minor = 0;
  if (txrt_cuda_device_info(ctx, name, sizeof(name), &bytes, &major, &minor) !=
      TXRT_OK)
    return std::string("(no device information: ") +
           txrt_cuda_last_error(ctx) + ")";
  return std::string(name) + ", " + formatGiB(bytes) + ", sm_" +
         std::to_string(major) + std::to_string(minor);
}

class CudaDevice : public Device {
public:
  CudaDevice(int32_t index, txrt_cuda_context *ctx)
      : index_(index), ctx_(ctx) {}
  ~CudaDevice() override { txrt_cuda_context_destroy(ctx_); }

  std::string describe() override {
    return "cuda:" + std::to_string(index_) + " (" + describeContext(ctx_) +
           ")";
  }
  void *context() override {
    txrt_cuda_context_make_current(ctx_);
    return ctx_;
  }
  std::string lastError() override { return txrt_cuda_last_error(ctx_); }

  void *allocate(uint64_t bytes, const std::string &what) override {
    void *pointer = nullptr;
    if (txrt_cuda_malloc(ctx_, size_t(bytes), &pointer) != TXRT_OK)
      throw ResourceError("cannot allocate " + what + " on cuda:" +
                          std::to_string(index_) + ": " +
                          txrt_cuda_last_error(ctx_));
    return pointer;
  }
  void release(void *pointer) override { txrt_cuda_free(ctx_, pointer); }
  void toDevice(void *dst, const void *src, uint64_t bytes) override {
    check(txrt_cuda_copy_to_device(ctx_, dst, src, size_t(bytes)),
          "a copy to the device");
  }
  void toHost(void *dst, const void *src, uint64_t bytes) override {
    check(txrt_cuda_copy_to_host(ctx_, dst, src, size_t(bytes)),
          "a copy from the device");
  }
  void setTrainState(int64_t step, uint64_t seed) override {
    txrt_cuda_context_set_train_state(ctx_, step, seed);
  }
  void finish(const std::string &what) override {
    check(txrt_cuda_synchronize(ctx_), what);
  }

private:
  void check(txrt_status status, const std::string &what) {
    if (status != TXRT_OK)
      throw KernelError(what + " failed on cuda:" + std::to_string(index_) +
                        ": " + txrt_cuda_last_error(ctx_));
  }

  int32_t index_;
  txrt_cuda_context *ctx_;
};

std::unique_ptr<Device> openCuda(int32_t index) {
  txrt_cuda_context *ctx = nullptr;
  if (txrt_cuda_context_create(index, &ctx) != TXRT_OK)
    throw InputError("--device cuda:" + std::to_string(index) + ": " +
                     txrt_cuda_last_error(nullptr));
  return std::make_unique<CudaDevice>(index, ctx);
}

void listCuda(std::ostream &out) {
  int32_t devices = 0;
  if (txrt_cuda_probe(&devices) != TXRT_OK) {
    out << "  none: " << txrt_cuda_last_error(nullptr) << "\n";
    return;
  }
  for (int32_t i = 0; i < devices; ++i) {
    txrt_cuda_context *ctx = nullptr;
    if (txrt_cuda_context_create(i, &ctx) != TXRT_OK) {
      out << "  cuda:" << i << "  unusable: " << txrt_cuda_last_error(nullptr)
          << "\n";
      continue;
    }
    out << "  cuda:" << i << "  " << describeContext(ctx) << "\n";
    txrt_cuda_context_destroy(ctx);
  }
}

const CudaSupport kCudaSupport = {openCuda, listCuda};

} // namespace
} // namespace txrt::driver

extern "C" const txrt::driver::CudaSupport *txrt_driver_cuda_backend() {
  return &txrt::driver::kCudaSupport;
}
