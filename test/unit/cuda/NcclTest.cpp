//===- NcclTest.cpp - NCCL opened with dlopen, and its errors -------------===//
//
// Runs without a GPU: NCCL's library is opened and asked its version, a
// missing library is one error naming the path and the fix, NCCL's result
// codes become messages naming the call and the code, and the C API
// refuses bad arguments without a crash. (Joining ranks needs a device:
// GradientExchangeTest.)
//
//===----------------------------------------------------------------------===//
#include "Nccl.h"

#include "txrt/txrt_cuda.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>

namespace {

/// Points TXRT_NCCL at the toolkit's library when nothing else says where
/// NCCL is (the loader reads it once, at the first use).
void useToolkitNcclIfUnset() {
  const char *toolkit = "/usr/local/cuda/lib64/libnccl.so.2";
  struct stat info;
  if (!std::getenv("TXRT_NCCL") && stat(toolkit, &info) == 0)
    setenv("TXRT_NCCL", toolkit, 0);
}

#ifdef TXC_HAVE_NCCL
TEST(NcclTest, OpensTheLibraryAndReadsItsVersion) {
  useToolkitNcclIfUnset();
  int32_t version = 0;
  ASSERT_EQ(txrt_cuda_nccl_version(&version), TXRT_OK)
      << txrt_cuda_last_error(nullptr);
  // 2.x.y is 2xxyy since NCCL 2.9.
  EXPECT_GE(version, 20900);
  EXPECT_LT(version, 30000);
}

TEST(NcclTest, ErrorsNameTheCallAndTheResult) {
  useToolkitNcclIfUnset();
  // ncclInvalidArgument is 4, ncclInvalidUsage 5 (nccl.h).
  std::string message = txrt::cuda::ncclDescribe("ncclAllReduce", 4);
  EXPECT_EQ(message.rfind("ncclAllReduce: ", 0), 0u) << message;
  EXPECT_NE(message.find("invalid argument"), std::string::npos) << message;
  EXPECT_NE(message.find("(ncclInvalidArgument, 4)"), std::string::npos)
      << message;
  message = txrt::cuda::ncclDescribe("ncclCommInitRank", 5);
  EXPECT_NE(message.find("(ncclInvalidUsage, 5)"), std::string::npos)
      << message;
}

TEST(NcclDeathTest, AMissingLibraryIsOneErrorNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("TXRT_NCCL", "/nonexistent/libnccl.so.2", 1);
        int32_t version = 0;
        txrt_status status = txrt_cuda_nccl_version(&version);
        fprintf(stderr, "%s\n", txrt_cuda_last_error(nullptr));
        std::exit(status == TXRT_ERROR_BACKEND ? 3 : 1);
      },
      ::testing::ExitedWithCode(3),
      "txrt_cuda_nccl_version: cannot load NCCL "
      "\\(/nonexistent/libnccl.so.2\\): .*set TXRT_NCCL");
}
#else
TEST(NcclTest, WithoutNcclEveryCallSaysSo) {
  int32_t version = 0;
  EXPECT_EQ(txrt_cuda_nccl_version(&version), TXRT_ERROR_BACKEND);
  EXPECT_NE(std::string(txrt_cuda_last_error(nullptr))
                .find("built without NCCL"),
            std::string::npos);
}
#endif

TEST(NcclTest, BadArgumentsAreErrorsNotCrashes) {
  char id[TXRT_CUDA_NCCL_ID_BYTES] = {};
  EXPECT_NE(txrt_cuda_nccl_unique_id(id, 64), TXRT_OK);
  EXPECT_NE(txrt_cuda_nccl_unique_id(nullptr, sizeof(id)), TXRT_OK);
  EXPECT_EQ(txrt_cuda_context_join_ranks(nullptr, 0, 1, id, sizeof(id)),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_cuda_context_set_gradient_mode(nullptr, 1, 1.0f),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_cuda_context_finish_update(nullptr),
            TXRT_ERROR_INVALID_ARGUMENT);
  double waited = -1.0;
  int64_t bytes = -1;
  txrt_cuda_context_allreduce_stats(nullptr, &waited, &bytes);
  EXPECT_EQ(waited, 0.0);
  EXPECT_EQ(bytes, 0);
}

} // namespace
