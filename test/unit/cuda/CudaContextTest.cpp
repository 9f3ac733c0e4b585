//===- CudaContextTest.cpp - probing, contexts, errors at the C ABI -------===//
//
// The probe runs everywhere: without a driver it must fail cleanly with one
// line naming what is missing (this is what CI and the build machine check),
// with one it must count the devices. Argument errors are reported by name
// without touching the device.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

using namespace txrt_cuda_test;

namespace {

TEST(CudaProbeTest, SucceedsOrNamesWhatIsMissing) {
  int32_t devices = -1;
  txrt_status status = txrt_cuda_probe(&devices);
  std::string message = txrt_cuda_last_error(nullptr);
  if (status == TXRT_OK) {
    EXPECT_GT(devices, 0);
    EXPECT_EQ(message, "");
    return;
  }
  EXPECT_EQ(status, TXRT_ERROR_BACKEND);
  EXPECT_EQ(devices, 0);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(message.find("libcuda.so.1") != std::string::npos ||
              message.find("no CUDA device") != std::string::npos ||
              message.find("driver supports CUDA") != std::string::npos)
      << message;
  // Creating a context fails the same way, without a crash.
  txrt_cuda_context *ctx = reinterpret_cast<txrt_cuda_context *>(1);
  EXPECT_EQ(txrt_cuda_context_create(0, &ctx), TXRT_ERROR_BACKEND);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::string(txrt_cuda_last_error(nullptr)).find(
                "txrt_cuda_context_create: "),
            std::string::npos);
}

TEST(CudaProbeTest, NullContextIsAnArgumentError) {
  EXPECT_EQ(txrt_cuda_synchronize(nullptr), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(txrt_cuda_last_error(nullptr)),
            "txrt_cuda_synchronize: invalid argument: the context is NULL");
}

class CudaContextTest : public CudaTest {};

TEST_F(CudaContextTest, DeviceInfoAndBadArguments) {
  char name[256];
  uint64_t bytes = 0;
  int32_t major = 0, minor = 0;
  expectGpuOk(
      txrt_cuda_device_info(gpu_, name, sizeof(name), &bytes, &major, &minor));
  EXPECT_GT(bytes, uint64_t(1) << 30) << name;
  EXPECT_GE(major, 8) << name << ": built for sm_80 and sm_90";
  std::printf("CUDA device 0: %s, %.1f GiB, compute capability %d.%d\n", name,
              double(bytes) / (1 << 30), major, minor);

  txrt_cuda_context *other = nullptr;
  EXPECT_EQ(txrt_cuda_context_create(1000, &other),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_cuda_last_error(nullptr)).find("no CUDA device 1000"),
            std::string::npos);
  EXPECT_EQ(txrt_cuda_dropout_fwd(gpu_, 0, 10, 1.5f, 1, 1, nullptr, nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(txrt_cuda_last_error(gpu_)),
            "txrt_cuda_dropout_fwd: invalid argument: p must be in [0, 1)");
  void *huge = nullptr;
  EXPECT_EQ(txrt_cuda_malloc(gpu_, size_t(1) << 50, &huge),
            TXRT_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_)).find("out of device memory"),
            std::string::npos)
      << txrt_cuda_last_error(gpu_);
  expectGpuOk(txrt_cuda_synchronize(gpu_));
}

// A spec constant's device copy (what --target=cuda code calls wherever
// an entry takes a constant's address): the bytes arrive, a second call
// returns the same copy, and a bad call is NULL with the reason kept for
// the next synchronize.
TEST_F(CudaContextTest, ConstantsAreCopiedOnceAndKept) {
  static const float kConstant[5] = {8.0f, -1.5f, 0.25f, 3.0e-38f, 7.0f};
  void *first = txrt_cuda_constant(gpu_, kConstant, sizeof(kConstant));
  ASSERT_NE(first, nullptr) << txrt_cuda_last_error(gpu_);
  EXPECT_EQ(txrt_cuda_constant(gpu_, kConstant, sizeof(kConstant)), first);
  static const float kOther[1] = {2.0f};
  void *other = txrt_cuda_constant(gpu_, kOther, sizeof(kOther));
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, first);
  std::vector<float> back(5, 0.0f);
  expectGpuOk(txrt_cuda_synchronize(gpu_));
  expectGpuOk(txrt_cuda_copy_to_host(gpu_, back.data(), first,
                                     sizeof(kConstant)));
  EXPECT_EQ(back, std::vector<float>(kConstant, kConstant + 5));
  EXPECT_EQ(txrt_cuda_constant(gpu_, kOther, 0), nullptr);
  EXPECT_NE(txrt_cuda_synchronize(gpu_), TXRT_OK);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_)).find("txrt_cuda_constant"),
            std::string::npos)
      << txrt_cuda_last_error(gpu_);
}

// What the driver's resident KV caches are regrown with
// (runtime/driver/core/ResidentTensor.h): rows copied between pitches
// within the device, several copies a call (more than one launch takes),
// and rows of zeros between kept bytes.
TEST_F(CudaContextTest, CopyRowsAndZeroRowsKeepTheirPitches) {
  std::vector<float> source(12);
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = float(i + 1);
  DeviceBuffer<float> src(gpu_, source), dst(gpu_, 15, -1.0f);
  // Rows of 3 floats at pitch 4 -> rows at pitch 5, the 4th float of each
  // row of 5 zeroed, the 5th untouched.
  txrt_cuda_row_copy rows{dst.get(), src.get(), 5 * 4, 4 * 4, 3 * 4, 3};
  expectGpuOk(txrt_cuda_copy_rows(gpu_, &rows, 1));
  expectGpuOk(txrt_cuda_zero_rows(gpu_, dst.get() + 3, 5 * 4, 1 * 4, 3));
  EXPECT_EQ(dst.read(), (std::vector<float>{1, 2, 3, 0, -1, 5, 6, 7, 0, -1,
                                            9, 10, 11, 0, -1}));
  // 40 one-float copies (two launches), element i to 39 - i.
  std::vector<float> values(40);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(100 + i);
  DeviceBuffer<float> from(gpu_, values), to(gpu_, 40, 0.0f);
  std::vector<txrt_cuda_row_copy> many;
  for (int i = 0; i < 40; ++i)
    many.push_back({to.get() + (39 - i), from.get() + i, 4, 4, 4, 1});
  expectGpuOk(txrt_cuda_copy_rows(gpu_, many.data(), int64_t(many.size())));
  std::vector<float> reversed(values.rbegin(), values.rend());
  EXPECT_EQ(to.read(), reversed);
  // Nothing to do is fine; bad pitches and NULL are argument errors.
  txrt_cuda_row_copy empty{nullptr, nullptr, 0, 0, 0, 3};
  expectGpuOk(txrt_cuda_copy_rows(gpu_, &empty, 1));
  expectGpuOk(txrt_cuda_copy_rows(gpu_, nullptr, 0));
  expectGpuOk(txrt_cuda_zero_rows(gpu_, nullptr, 0, 4, 0));
  txrt_cuda_row_copy narrow{dst.get(), src.get(), 4, 16, 8, 1};
  EXPECT_EQ(txrt_cuda_copy_rows(gpu_, &narrow, 1),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_cuda_zero_rows(gpu_, nullptr, 4, 4, 1),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_cuda_last_error(gpu_)).find("txrt_cuda_zero_rows"),
            std::string::npos);
  expectGpuOk(txrt_cuda_synchronize(gpu_));
}

} // namespace
