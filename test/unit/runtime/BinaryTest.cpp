//===- BinaryTest.cpp - txrt_binary with broadcasting ---------------------===//
#include "TestUtil.h"

#include <vector>

using namespace txrt_test;

namespace {

double referenceOp(int32_t op, double a, double b) {
  switch (op) {
  case TXRT_BINARY_ADD:
    return a + b;
  case TXRT_BINARY_SUB:
    return a - b;
  case TXRT_BINARY_MUL:
    return a * b;
  case TXRT_BINARY_DIV:
    return a / b;
  case TXRT_BINARY_MAX:
    return a > b ? a : b;
  default:
    return a < b ? a : b;
  }
}

/// The broadcast reference over dense tensors.
Doubles referenceBinary(int32_t op, const std::vector<int64_t> &aDims,
                        const Floats &a, const std::vector<int64_t> &bDims,
                        const Floats &b) {
  size_t rank = aDims.size();
  std::vector<int64_t> cDims(rank);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i)
    count *= cDims[i] = std::max(aDims[i], bDims[i]);
  Doubles c(count);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, aIndex = 0, bIndex = 0, aScale = 1, bScale = 1;
    for (int i = int(rank) - 1; i >= 0; --i) {
      int64_t index = rest % cDims[i];
      rest /= cDims[i];
      aIndex += (aDims[i] == 1 ? 0 : index) * aScale;
      bIndex += (bDims[i] == 1 ? 0 : index) * bScale;
      aScale *= aDims[i];
      bScale *= bDims[i];
    }
    c[flat] = referenceOp(op, a[aIndex], b[bIndex]);
  }
  return c;
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

class BinaryTest : public RuntimeTest {};

TEST_F(BinaryTest, BroadcastingShapesAndOps) {
  using Shape = std::vector<int64_t>;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{65}, {65}},
      {{7, 63}, {1, 63}},             // row vector
      {{7, 63}, {7, 1}},              // column vector
      {{1, 63}, {7, 63}},             // broadcast first operand
      {{2, 3, 7, 65}, {2, 1, 1, 65}}, // padding-mask style
      {{7, 1}, {1, 65}},              // both broadcast (outer product)
      {{1}, {2, 3, 4}},               // scalar first (rank mismatch padded)
  };
  uint32_t seed = 1;
  for (auto [aDims, bDims] : cases) {
    // Pad ranks with leading ones.
    while (aDims.size() < bDims.size())
      aDims.insert(aDims.begin(), 1);
    while (bDims.size() < aDims.size())
      bDims.insert(bDims.begin(), 1);
    for (int32_t op = TXRT_BINARY_ADD; op <= TXRT_BINARY_MIN; ++op) {
      Floats a = randomFloats(product(aDims), seed++, 0.5f, 2.0f);
      Floats b = randomFloats(product(bDims), seed++, 0.5f, 2.0f);
      Doubles expected = referenceBinary(op, aDims, a, bDims, b);
      Floats c(expected.size());
      expectOk(txrt_binary(ctx_, seed, op, int32_t(aDims.size()), aDims.data(),
                           a.data(), bDims.data(), b.data(), c.data()));
      expectClose(c, expected, 1e-6, 1e-6, "op " + std::to_string(op));
    }
  }
}

TEST_F(BinaryTest, OutputMayAliasAnOperandOfItsShape) {
  std::vector<int64_t> full = {7, 63}, row = {1, 63};
  for (int32_t op : {TXRT_BINARY_ADD, TXRT_BINARY_SUB}) {
    Floats a = randomFloats(7 * 63, 1), b = randomFloats(7 * 63, 2);
    Floats r = randomFloats(63, 3);
    Doubles expected = referenceBinary(op, full, a, full, b);
    Floats inB = b;
    expectOk(txrt_binary(ctx_, 1, op, 2, full.data(), a.data(), full.data(),
                         inB.data(), inB.data()));
    expectClose(inB, expected, 1e-6, 1e-6, "c aliases b");
    Doubles expectedRow = referenceBinary(op, row, r, full, a);
    Floats inA = a;
    expectOk(txrt_binary(ctx_, 2, op, 2, row.data(), r.data(), full.data(),
                         inA.data(), inA.data()));
    expectClose(inA, expectedRow, 1e-6, 1e-6, "c aliases broadcast b");
  }
}

TEST_F(BinaryTest, RejectsIncompatibleShapes) {
  std::vector<int64_t> a = {3, 4}, b = {2, 4};
  Floats x(12), y(8), z(12);
  EXPECT_EQ(txrt_binary(ctx_, 1, TXRT_BINARY_ADD, 2, a.data(), x.data(),
                        b.data(), y.data(), z.data()),
            TXRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(txrt_last_error(ctx_)).find("a=[3, 4], b=[2, 4]"),
            std::string::npos)
      << txrt_last_error(ctx_);
}

} // namespace
