//===- GatherTest.cpp - gather along an axis and its scatter-add ----------===//
#include "TestUtil.h"

#include <cstring>
#include <vector>

using namespace txrt_test;

namespace {

class GatherTest : public RuntimeTest {};

/// out[o, k, :] = src[o, ids[k] (wrapped), :].
Doubles referenceGather(int64_t outer, int64_t n, int64_t inner,
                        const std::vector<int32_t> &ids, const Doubles &src) {
  int64_t count = int64_t(ids.size());
  Doubles out(outer * count * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k) {
      int64_t i = ids[k] < 0 ? n + ids[k] : ids[k];
      for (int64_t j = 0; j < inner; ++j)
        out[(o * count + k) * inner + j] = src[(o * n + i) * inner + j];
    }
  return out;
}

TEST_F(GatherTest, PicksRowsWithNegativeIndices) {
  const int64_t outer = 3, n = 7, inner = 5;
  std::vector<int32_t> ids = {0, 6, -1, -7, 3, 3};
  Floats src = randomFloats(outer * n * inner, 1);
  Floats out(outer * ids.size() * inner);
  expectOk(txrt_gather(ctx_, 1, outer, n, inner, 4, ids.data(),
                       int64_t(ids.size()), src.data(), out.data()));
  expectClose(out, referenceGather(outer, n, inner, ids, toDoubles(src)), 0, 0,
              "gather");
}

TEST_F(GatherTest, LargeAcrossThreadsAndBytes) {
  const int64_t outer = 4, n = 300, inner = 129, count = 257;
  std::vector<int32_t> ids(count);
  for (int64_t k = 0; k < count; ++k)
    ids[k] = int32_t((k * 37) % (2 * n) - n);
  Floats src = randomFloats(outer * n * inner, 2);
  Floats out(outer * count * inner);
  expectOk(txrt_gather(ctx_, 1, outer, n, inner, 4, ids.data(), count,
                       src.data(), out.data()));
  expectClose(out, referenceGather(outer, n, inner, ids, toDoubles(src)), 0, 0,
              "gather");
  // One-byte elements (bool masks): the same rows.
  std::vector<uint8_t> mask(outer * n * inner), picked(outer * count * inner);
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = uint8_t(src[i] > 0);
  expectOk(txrt_gather(ctx_, 1, outer, n, inner, 1, ids.data(), count,
                       mask.data(), picked.data()));
  for (size_t i = 0; i < picked.size(); ++i)
    ASSERT_EQ(picked[i], uint8_t(out[i] > 0)) << i;
}

TEST_F(GatherTest, OutOfRangeIndexIsAnError) {
  std::vector<int32_t> ids = {0, -3, 2};
  Floats src(2 * 2), out(3 * 2);
  EXPECT_EQ(
      txrt_gather(ctx_, 1, 1, 2, 2, 4, ids.data(), 3, src.data(), out.data()),
      TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_))
                .find("ids[1] = -3 is outside "
                      "[-2, 2)"),
            std::string::npos)
      << txrt_last_error(ctx_);
  Floats dsrc(2 * 2);
  EXPECT_EQ(
      txrt_gather_bwd(ctx_, 1, 1, 2, 2, ids.data(), 3, out.data(), dsrc.data()),
      TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(
      txrt_gather(ctx_, 1, 1, 2, 2, 2, ids.data(), 1, src.data(), out.data()),
      TXRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(GatherTest, ScatterAddMatchesFiniteDifferences) {
  const int64_t outer = 2, n = 6, inner = 3;
  std::vector<int32_t> ids = {1, -1, 1, 0, 5, 3, 3, -5}; // repeats
  Floats src = randomFloats(outer * n * inner, 3);
  Floats dout = randomFloats(outer * ids.size() * inner, 4);
  Floats dsrc(outer * n * inner, 123.0f); // overwritten, not accumulated
  expectOk(txrt_gather_bwd(ctx_, 1, outer, n, inner, ids.data(),
                           int64_t(ids.size()), dout.data(), dsrc.data()));
  expectClose(dsrc,
              vjpByFiniteDifferences(
                  [&](const Doubles &p) {
                    return referenceGather(outer, n, inner, ids, p);
                  },
                  toDoubles(src), dout),
              1e-6, 1e-5, "dsrc");
}

TEST_F(GatherTest, ScatterAddIsTheSameForAnyThreadCount) {
  const int64_t outer = 3, n = 50, inner = 100, count = 400;
  std::vector<int32_t> ids(count);
  for (int64_t k = 0; k < count; ++k)
    ids[k] = int32_t((k * k + 7) % n);
  Floats dout = randomFloats(outer * count * inner, 5);
  Floats one(outer * n * inner), many(outer * n * inner);
  txrt_context *single = nullptr;
  expectOk(txrt_context_create_with_threads(1, &single));
  expectOk(txrt_gather_bwd(single, 1, outer, n, inner, ids.data(), count,
                           dout.data(), one.data()));
  txrt_context_destroy(single);
  expectOk(txrt_gather_bwd(ctx_, 1, outer, n, inner, ids.data(), count,
                           dout.data(), many.data()));
  EXPECT_EQ(0,
            std::memcmp(one.data(), many.data(), one.size() * sizeof(float)));
}

} // namespace
