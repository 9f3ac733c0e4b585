//===- EmbeddingTest.cpp - gather and scatter-add gradient ----------------===//
#include "TestUtil.h"

#include <vector>

using namespace txrt_test;

namespace {

class EmbeddingTest : public RuntimeTest {};

Doubles referenceEmbedding(int64_t n, int64_t dim,
                           const std::vector<int32_t> &ids,
                           const Doubles &table, double scale,
                           const Floats &pos, int64_t seqLen) {
  Doubles out(n * dim);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < dim; ++j)
      out[i * dim + j] = scale * table[ids[i] * dim + j] +
                         (pos.empty() ? 0.0 : pos[(i % seqLen) * dim + j]);
  return out;
}

TEST_F(EmbeddingTest, GatherScaledWithPositions) {
  const int64_t vocab = 65, dim = 63, batch = 3, seq = 7, n = batch * seq;
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = int32_t((i * 37) % vocab);
  Floats table = randomFloats(vocab * dim, 1), pos = randomFloats(seq * dim, 2);
  Floats out(n * dim);
  expectOk(txrt_embedding_fwd(ctx_, 1, n, vocab, dim, ids.data(), table.data(),
                              8.0f, pos.data(), seq, out.data()));
  expectClose(out,
              referenceEmbedding(n, dim, ids, toDoubles(table), 8.0, pos, seq),
              1e-6, 1e-6, "with positions");
  expectOk(txrt_embedding_fwd(ctx_, 1, n, vocab, dim, ids.data(), table.data(),
                              1.0f, nullptr, 0, out.data()));
  expectClose(out,
              referenceEmbedding(n, dim, ids, toDoubles(table), 1.0, {}, 1), 0,
              0, "plain");
}

TEST_F(EmbeddingTest, OutOfRangeIdIsAnError) {
  std::vector<int32_t> ids = {0, 5, 9};
  Floats table(5 * 2), out(3 * 2);
  EXPECT_EQ(txrt_embedding_fwd(ctx_, 1, 3, 5, 2, ids.data(), table.data(), 1,
                               nullptr, 0, out.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("ids[1] = 5"),
            std::string::npos)
      << txrt_last_error(ctx_);
}

TEST_F(EmbeddingTest, ScatterAddMatchesFiniteDifferences) {
  const int64_t vocab = 7, dim = 5, n = 9;
  std::vector<int32_t> ids = {1, 3, 1, 0, 6, 3, 3, 2, 1}; // repeats
  Floats table = randomFloats(vocab * dim, 3), dout = randomFloats(n * dim, 4);
  Floats dtable(vocab * dim, 123.0f);
  expectOk(txrt_embedding_bwd(ctx_, 1, n, vocab, dim, ids.data(), dout.data(),
                              2.0f, -1, dtable.data(), 0));
  expectClose(dtable,
              vjpByFiniteDifferences(
                  [&](const Doubles &p) {
                    return referenceEmbedding(n, dim, ids, p, 2.0, {}, 1);
                  },
                  toDoubles(table), dout),
              1e-6, 1e-5, "dtable");
}

TEST_F(EmbeddingTest, ScatterAddLargeWithPaddingAndAccumulation) {
  const int64_t vocab = 65, dim = 63, n = 257;
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = int32_t((i * i + 3) % vocab);
  const int32_t pad = ids[5];
  Floats dout = randomFloats(n * dim, 5), dtable = randomFloats(vocab * dim, 6);
  Doubles expected = toDoubles(dtable);
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] != pad)
      for (int64_t j = 0; j < dim; ++j)
        expected[ids[i] * dim + j] += 0.5 * dout[i * dim + j];
  expectOk(txrt_embedding_bwd(ctx_, 2, n, vocab, dim, ids.data(), dout.data(),
                              0.5f, pad, dtable.data(), 1));
  expectClose(dtable, expected, 1e-5, 1e-5, "dtable accumulated");
}

} // namespace
