//===- CudaTestUtil.h - fixtures for the CUDA backend's tests ---*- C++ -*-===//
//
// CudaTest holds a CPU context (the reference kernels) and a CUDA context;
// without a usable device it skips the test, naming why (no driver, no
// device). DeviceBuffer moves std::vectors to and from the device.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_TEST_CUDA_CUDATESTUTIL_H
#define TXRT_TEST_CUDA_CUDATESTUTIL_H

#include "txrt/txrt.h"
#include "txrt/txrt_cuda.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace txrt_cuda_test {

using Floats = std::vector<float>;
using Ints = std::vector<int32_t>;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
/// The tolerance of results that follow the reference's float operations.
constexpr double kStrict = 1e-5;

class CudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (txrt_cuda_probe(nullptr) != TXRT_OK)
      GTEST_SKIP() << "no CUDA device: " << txrt_cuda_last_error(nullptr);
    ASSERT_EQ(txrt_cuda_context_create(0, &gpu_), TXRT_OK)
        << txrt_cuda_last_error(nullptr);
    ASSERT_EQ(txrt_context_create_with_threads(2, &cpu_), TXRT_OK);
  }
  void TearDown() override {
    txrt_cuda_context_destroy(gpu_);
    if (cpu_)
      txrt_context_destroy(cpu_);
  }
  void expectCpuOk(txrt_status status) {
    EXPECT_EQ(status, TXRT_OK) << txrt_last_error(cpu_);
  }
  void expectGpuOk(txrt_status status) {
    EXPECT_EQ(status, TXRT_OK) << txrt_cuda_last_error(gpu_);
  }

  txrt_context *cpu_ = nullptr;
  txrt_cuda_context *gpu_ = nullptr;
};

/// A device copy of a host vector; read() synchronizes and copies back.
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer(txrt_cuda_context *ctx, const std::vector<T> &host)
      : ctx_(ctx), size_(host.size()) {
    EXPECT_EQ(txrt_cuda_malloc(ctx, bytes(), &ptr_), TXRT_OK)
        << txrt_cuda_last_error(ctx);
    EXPECT_EQ(txrt_cuda_copy_to_device(ctx, ptr_, host.data(), bytes()),
              TXRT_OK)
        << txrt_cuda_last_error(ctx);
  }
  DeviceBuffer(txrt_cuda_context *ctx, size_t size, T poison)
      : DeviceBuffer(ctx, std::vector<T>(size, poison)) {}
  ~DeviceBuffer() { txrt_cuda_free(ctx_, ptr_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  T *get() { return static_cast<T *>(ptr_); }
  std::vector<T> read() {
    std::vector<T> host(size_);
    EXPECT_EQ(txrt_cuda_synchronize(ctx_), TXRT_OK)
        << txrt_cuda_last_error(ctx_);
    EXPECT_EQ(txrt_cuda_copy_to_host(ctx_, host.data(), ptr_, bytes()),
              TXRT_OK)
        << txrt_cuda_last_error(ctx_);
    return host;
  }

private:
  size_t bytes() const { return size_ * sizeof(T); }
  txrt_cuda_context *ctx_;
  void *ptr_ = nullptr;
  size_t size_;
};

using txrt_test::randomFloats; // test/unit/runtime/TestUtil.h

/// The GPU result agrees with the CPU kernel's to `rel`: the norm-wise
/// relative error ||gpu - cpu|| / ||cpu|| is at most rel, and no element is
/// off by more than 10 rel of max(|cpu_i|, 1% of the tensor's largest |cpu|)
/// (summation orders differ between the devices, so an element that is a
/// small difference of large terms may not keep rel of itself). NaN never
/// passes. Reports the first few mismatches.
inline void expectNear(const Floats &gpu, const Floats &cpu, double rel,
                       const std::string &what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double scale = 0.0, diffNorm = 0.0, refNorm = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    scale = std::max(scale, double(std::fabs(cpu[i])));
    double diff = double(gpu[i]) - double(cpu[i]);
    diffNorm += diff * diff;
    refNorm += double(cpu[i]) * double(cpu[i]);
  }
  const double normError =
      refNorm > 0.0 ? std::sqrt(diffNorm / refNorm) : std::sqrt(diffNorm);
  EXPECT_TRUE(normError <= rel)
      << what << ": ||gpu - cpu|| / ||cpu|| = " << normError << " > " << rel;
  const double floor = std::max(scale * 1e-2, 1e-30);
  int reported = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    double bound = 10.0 * rel * std::max(double(std::fabs(cpu[i])), floor);
    double diff = std::fabs(double(gpu[i]) - double(cpu[i]));
    if (!(diff <= bound) && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu "
                    << cpu[i] << " (|diff| " << diff << " > " << bound << ")";
  }
}

} // namespace txrt_cuda_test

#endif // TXRT_TEST_CUDA_CUDATESTUTIL_H
