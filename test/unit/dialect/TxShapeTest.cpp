//===- TxShapeTest.cpp - symbolic shapes and broadcasting -----------------===//
//
// Unit tests of tx/Dialect/TxShape.h: the `#tx.dims` round trip between
// tensor types and shapes, formatting, and NumPy broadcasting over symbolic
// dimensions.
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
  EXPECT_EQ(upperBoundNumElements({sym("B", 8), Dim::fixed(512)}), 8 * 512);
  EXPECT_EQ(upperBoundNumElements({}), 1);
}

} // namespace
