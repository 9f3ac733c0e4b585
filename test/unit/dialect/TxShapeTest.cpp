//===- TxShapeTest.cpp - symbolic shapes and broadcasting -----------------===//
//
// Unit tests of tx/Dialect/TxShape.h: the `#tx.dims` round trip between
// tensor types and shapes, formatting, and NumPy broadcasting over symbolic
// dimensions, and the size limits (checked products, never wrapping).
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tx;

namespace {

class TxShapeTest : public ::testing::Test {
protected:
  TxShapeTest() { context.loadDialect<TxDialect>(); }
  Dim sym(StringRef name, int64_t bound) {
    return Dim::symbolic(StringAttr::get(&context, name), bound);
  }
  MLIRContext context;
};

TEST_F(TxShapeTest, TensorTypeRoundTripsThroughShape) {
  Shape shape = {sym("B", 64), sym("S", 256), Dim::fixed(512)};
  RankedTensorType type = getTensorType(shape, Float32Type::get(&context));
  EXPECT_EQ(type.getNumDynamicDims(), 2);
  EXPECT_TRUE(isWellFormedTensor(type));
  Shape back = getShape(type);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].symbol.getValue(), "B");
  EXPECT_EQ(back[0].bound, 64);
  EXPECT_EQ(back[2].size, 512);
  EXPECT_EQ(formatType(type), "f32[B, S, 512]");
}

TEST_F(TxShapeTest, StaticTensorsHaveNoEncoding) {
  RankedTensorType type =
      getTensorType({Dim::fixed(4), Dim::fixed(8)}, IntegerType::get(&context, 32));
  EXPECT_FALSE(type.getEncoding());
  EXPECT_TRUE(isWellFormedTensor(type));
  EXPECT_EQ(formatType(type), "i32[4, 8]");
}

TEST_F(TxShapeTest, DynamicDimWithoutEncodingIsMalformed) {
  auto type = RankedTensorType::get({ShapedType::kDynamic, 4},
                                    Float32Type::get(&context));
  EXPECT_FALSE(isWellFormedTensor(type));
}

TEST_F(TxShapeTest, BroadcastStretchesOnesAndMissingDims) {
  Shape result;
  std::string why;
  // [B, 1, 1, S] with [T, S] -> [B, 1, T, S]
  ASSERT_TRUE(broadcastShapes({sym("B", 64), Dim::fixed(1), Dim::fixed(1), sym("S", 9)},
                              {sym("T", 9), sym("S", 9)}, result, why))
      << why;
  EXPECT_EQ(formatShape(result), "[B, 1, T, S]");
  ASSERT_TRUE(broadcastShapes({Dim::fixed(4), Dim::fixed(8)}, {}, result, why));
  EXPECT_EQ(formatShape(result), "[4, 8]");
}

TEST_F(TxShapeTest, BroadcastRejectsDifferentSymbolsAndSizes) {
  Shape result;
  std::string why;
  EXPECT_FALSE(broadcastShapes({sym("S", 9)}, {sym("T", 9)}, result, why));
  EXPECT_NE(why.find("dimension 0 is S vs T"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(broadcastShapes({Dim::fixed(3)}, {Dim::fixed(4)}, result, why));
  EXPECT_NE(why.find("3 vs 4"), std::string::npos) << why;
}

TEST_F(TxShapeTest, UpperBoundUsesBounds) {
  EXPECT_EQ(upperBoundNumElements({sym("B", 8), Dim::fixed(512)}),
            std::optional<int64_t>(8 * 512));
  EXPECT_EQ(upperBoundNumElements({}), std::optional<int64_t>(1));
}

TEST_F(TxShapeTest, UpperBoundOverflowIsNotANumber) {
  // 2^62 * 8 wraps to 0 in int64: the product is reported as unknown.
  EXPECT_EQ(upperBoundNumElements({sym("B", int64_t(1) << 62), Dim::fixed(8)}),
            std::nullopt);
  EXPECT_EQ(upperBoundNumElements({Dim::fixed(int64_t(1) << 32),
                                   Dim::fixed(int64_t(1) << 31)}),
            std::nullopt);
  EXPECT_EQ(upperBoundNumElements({Dim::fixed(int64_t(1) << 31),
                                   Dim::fixed(int64_t(1) << 31)}),
            std::optional<int64_t>(int64_t(1) << 62));
}

TEST_F(TxShapeTest, SizeLimitsAcceptTheBaseModel) {
  EXPECT_EQ(checkSizeLimits({sym("B", 64), Dim::fixed(8), sym("T", 256),
                             sym("S", 256)}),
            "");
  EXPECT_EQ(checkSizeLimits({Dim::fixed(kMaxDimSize)}), "");
  // Exactly 2^40 elements is allowed.
  EXPECT_EQ(checkSizeLimits({Dim::fixed(int64_t(1) << 20),
                             Dim::fixed(int64_t(1) << 20)}),
            "");
}

TEST_F(TxShapeTest, SizeLimitsNameTheDimAndTheBound) {
  EXPECT_EQ(checkSizeLimits({sym("B", int64_t(1) << 62), Dim::fixed(8)}),
            "has dimension 0 = B <= 4611686018427387904, over the limit of "
            "2147483647 (2^31 - 1)");
  EXPECT_EQ(checkSizeLimits({Dim::fixed(4), Dim::fixed(int64_t(1) << 31)}),
            "has dimension 1 = 2147483648, over the limit of 2147483647 "
            "(2^31 - 1)");
  EXPECT_EQ(checkSizeLimits({sym("B", 64), sym("S", 256),
                             Dim::fixed(1000000000)}),
            "has up to 16384000000000 elements (B <= 64, S <= 256), over the "
            "limit of 1099511627776 (2^40) per tensor");
  EXPECT_EQ(checkSizeLimits({Dim::fixed(kMaxDimSize), Dim::fixed(kMaxDimSize),
                             Dim::fixed(kMaxDimSize)}),
            "has more than 2^63 elements, over the limit of 1099511627776 "
            "(2^40) per tensor");
}

} // namespace
