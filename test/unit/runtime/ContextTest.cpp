//===- ContextTest.cpp - contexts, statuses, messages, primitive cache ----===//
#include "Kernel.h"
#include "TestUtil.h"

#include <dnnl.hpp>

#include <cstdlib>
#include <string>

using namespace txrt_test;

namespace {

class ContextTest : public RuntimeTest {};

TEST_F(ContextTest, ThreadCountComesFromEnvironment) {
  ::setenv("TXRT_NUM_THREADS", "3", 1);
  txrt_context *ctx = nullptr;
  ASSERT_EQ(txrt_context_create(&ctx), TXRT_OK) << txrt_last_error(nullptr);
  EXPECT_EQ(txrt_context_num_threads(ctx), 3);
  txrt_context_destroy(ctx);
  ::unsetenv("TXRT_NUM_THREADS");

  ASSERT_EQ(txrt_context_create(&ctx), TXRT_OK);
  EXPECT_GE(txrt_context_num_threads(ctx), 1);
  txrt_context_destroy(ctx);

  ASSERT_EQ(txrt_context_create_with_threads(5, &ctx), TXRT_OK);
  EXPECT_EQ(txrt_context_num_threads(ctx), 5);
  txrt_context_destroy(ctx);
}

TEST_F(ContextTest, ExplicitThreadCountsAreBoundedAsTheEnvironmentsAre) {
  // 100000 was accepted, and the first entry call ended the process in
  // libgomp ("Thread creation failed").
  txrt_context *ctx = reinterpret_cast<txrt_context *>(0x1);
  EXPECT_EQ(txrt_context_create_with_threads(100000, &ctx),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::string(txrt_last_error(nullptr))
                .find("num_threads 100000 is not in [1, 4096]"),
            std::string::npos)
      << txrt_last_error(nullptr);
  ASSERT_EQ(txrt_context_create_with_threads(8, &ctx), TXRT_OK);
  txrt_context_destroy(ctx);
}

TEST_F(ContextTest, MalformedThreadCountIsAnError) {
  ::setenv("TXRT_NUM_THREADS", "many", 1);
  txrt_context *ctx = reinterpret_cast<txrt_context *>(0x1);
  EXPECT_EQ(txrt_context_create(&ctx), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::string(txrt_last_error(nullptr)).find("TXRT_NUM_THREADS"),
            std::string::npos);
  ::unsetenv("TXRT_NUM_THREADS");
}

// Spaces around the number are taken either side, as libgomp takes them in
// OMP_NUM_THREADS (' 1' was taken and '1 ' refused); a sign or a second
// number is not.
TEST_F(ContextTest, ThreadCountMayHaveSpacesAround) {
  for (const char *text : {" 2", "2 ", "\t2\n", " 2 "}) {
    ::setenv("TXRT_NUM_THREADS", text, 1);
    txrt_context *ctx = nullptr;
    ASSERT_EQ(txrt_context_create(&ctx), TXRT_OK)
        << "'" << text << "': " << txrt_last_error(nullptr);
    EXPECT_EQ(txrt_context_num_threads(ctx), 2) << "'" << text << "'";
    txrt_context_destroy(ctx);
  }
  for (const char *text : {" ", "2 2", "2x", "+2 x", "0", "-1"}) {
    ::setenv("TXRT_NUM_THREADS", text, 1);
    txrt_context *ctx = nullptr;
    EXPECT_EQ(txrt_context_create(&ctx), TXRT_ERROR_INVALID_ARGUMENT)
        << "'" << text << "'";
  }
  ::unsetenv("TXRT_NUM_THREADS");
}

TEST_F(ContextTest, NullContextIsReportedPerThread) {
  float x = 0, w = 0, y = 0;
  EXPECT_EQ(txrt_linear_fwd(nullptr, 0, 1, 1, 1, &x, &w, nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, &y),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(nullptr)).find("ctx is NULL"),
            std::string::npos);
}

TEST_F(ContextTest, MessageNamesKernelShapesAndCause) {
  Floats x(8), y(12);
  EXPECT_EQ(txrt_linear_fwd(ctx_, 0, 4, 3, 2, x.data(), nullptr, nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(txrt_last_error(ctx_),
               "txrt_linear_fwd(m=4, n=3, k=2): invalid argument: w is NULL");
}

TEST_F(ContextTest, TheFailingCallsSiteIsKept) {
  // The driver names the spec location of a failed call with it.
  Floats x(8), y(12);
  EXPECT_EQ(txrt_linear_fwd(ctx_, 17, 4, 3, 2, x.data(), nullptr, nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_last_error_site(ctx_), 17);
  // A failure without a site does not keep the last one's.
  EXPECT_EQ(txrt_context_set_option(ctx_, 12345, 0),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_last_error_site(ctx_), -1);
  EXPECT_EQ(txrt_last_error_site(nullptr), -1);
}

TEST_F(ContextTest, OneDnnErrorsBecomeStatuses) {
  // A negative stride is rejected by oneDNN itself (dnnl::error inside).
  Floats a(16, 1.0f), b(16, 1.0f), c(16);
  int64_t aStrides[4] = {0, 0, -4, 1}, bStrides[4] = {0, 0, 4, 1},
          cStrides[4] = {0, 0, 4, 1};
  txrt_status status = txrt_matmul(
      ctx_, 0, 1, 1, 4, 4, 4, a.data() + 12, aStrides, b.data(), bStrides,
      c.data(), cStrides, nullptr, TXRT_ACTIVATION_NONE, nullptr, 1.0f, 0.0f);
  EXPECT_EQ(status, TXRT_ERROR_BACKEND);
  std::string message = txrt_last_error(ctx_);
  EXPECT_EQ(message.rfind("txrt_matmul(batch0=1, batch1=1, m=4", 0), 0u)
      << message;
  EXPECT_NE(message.find("oneDNN"), std::string::npos) << message;
}

TEST_F(ContextTest, OneDnnOutOfMemoryIsSaidAsSuch) {
  // Under `ulimit -v` oneDNN failed with "could not execute a primitive
  // (dnnl_status 1)", a backend error that never said memory ran out.
  txrt_status status = txrt::runKernel(
      ctx_, "txrt_example", [] { return std::string("n=1"); },
      [](txrt::Context &) {
        throw dnnl::error(dnnl_out_of_memory, "could not execute a primitive");
      });
  EXPECT_EQ(status, TXRT_ERROR_OUT_OF_MEMORY);
  const std::string message = txrt_last_error(ctx_);
  EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
  EXPECT_NE(message.find("dnnl_status 1: out of memory"), std::string::npos)
      << message;
}

TEST_F(ContextTest, UnknownEnumsAreRejected) {
  Floats x(4), y(4);
  EXPECT_EQ(txrt_activation_fwd(ctx_, 0, 42, 4, x.data(), y.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(txrt_context_set_option(ctx_, 999, 1), TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(txrt_status_string(TXRT_ERROR_BACKEND), "backend error");
}

TEST_F(ContextTest, PrimitiveCacheCreatesOncePerSiteAndShape) {
  txrt_context *ctx = nullptr;
  ASSERT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
  const int64_t m = 8, n = 6, k = 5;
  Floats x = randomFloats(m * k, 1), w = randomFloats(n * k, 2), bias(n),
         y(m * n);
  auto linear = [&](int64_t site, int64_t rows) {
    return txrt_linear_fwd(ctx, site, rows, n, k, x.data(), w.data(),
                           bias.data(), TXRT_ACTIVATION_RELU, nullptr,
                           y.data());
  };
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 0);
  ASSERT_EQ(linear(7, m), TXRT_OK) << txrt_last_error(ctx);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 1);
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(linear(7, m), TXRT_OK);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 1) << "same site, shape";
  ASSERT_EQ(linear(8, m), TXRT_OK);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 2) << "another site";
  ASSERT_EQ(linear(7, m - 1), TXRT_OK);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 3) << "another shape";
  ASSERT_EQ(linear(7, m), TXRT_OK);
  ASSERT_EQ(linear(7, m - 1), TXRT_OK);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 3) << "both cached";
  txrt_context_clear_cache(ctx);
  ASSERT_EQ(linear(7, m), TXRT_OK);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 4) << "after clearing";
  txrt_context_destroy(ctx);
}

TEST_F(ContextTest, AttentionCreatesNoPrimitivesPerCall) {
  txrt_context *ctx = nullptr;
  ASSERT_EQ(txrt_context_create_with_threads(2, &ctx), TXRT_OK);
  const int64_t B = 2, h = 2, T = 9, d = 4;
  Floats q = randomFloats(B * T * h * d, 3), o(q.size()), lse(B * h * T);
  auto run = [&] {
    return txrt_attention_fwd(ctx, 1, B, h, h, T, T, d, q.data(), h * d,
                              q.data(), h * d, q.data(), h * d, o.data(), h * d,
                              lse.data(), nullptr, 0, 0, 0, 0, 1, 0.5f,
                              -INFINITY, 0.0f, 0, 0);
  };
  // Its block products are register-blocked loops, not primitives.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(run(), TXRT_OK) << txrt_last_error(ctx);
  EXPECT_EQ(txrt_context_primitive_creations(ctx), 0);
  txrt_context_destroy(ctx);
}

TEST_F(ContextTest, EmptyTensorsAreNoOps) {
  EXPECT_EQ(txrt_linear_fwd(ctx_, 0, 0, 3, 2, nullptr, nullptr, nullptr,
                            TXRT_ACTIVATION_NONE, nullptr, nullptr),
            TXRT_OK);
  EXPECT_EQ(txrt_softmax_fwd(ctx_, 0, 0, 5, nullptr, nullptr, 0), TXRT_OK);
  EXPECT_EQ(txrt_adam_update(ctx_, 0, 0, nullptr, nullptr, nullptr, nullptr,
                             1e-3f, 0.9f, 0.98f, 1e-9f, 0.0f, 1),
            TXRT_OK);
}

TEST_F(ContextTest, TrainStateIsWhatTheDriverSet) {
  int64_t step = -1, seed = -1;
  expectOk(txrt_train_state(ctx_, &step, &seed));
  EXPECT_EQ(step, 0); // a fresh context
  EXPECT_EQ(seed, 0);
  txrt_context_set_train_state(ctx_, 42, 0xfedcba9876543210ull);
  EXPECT_EQ(txrt_context_train_step(ctx_), 42);
  EXPECT_EQ(txrt_context_train_seed(ctx_), 0xfedcba9876543210ull);
  expectOk(txrt_train_state(ctx_, &step, &seed));
  EXPECT_EQ(step, 42);
  EXPECT_EQ(uint64_t(seed), 0xfedcba9876543210ull);
  EXPECT_EQ(txrt_train_state(ctx_, nullptr, &seed),
            TXRT_ERROR_INVALID_ARGUMENT);
}

} // namespace
