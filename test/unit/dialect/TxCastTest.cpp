//===- TxCastTest.cpp - tx.cast: verifier and VJP -------------------------===//
//
// The VJP of tx.cast called directly (tx-autodiff never reaches it yet: it
// runs before tx-precision inserts casts, and no op takes a gradient
// through a bf16 operand): the gradient is cast back to the operand's type,
// or passed through when it already has it. formatType names bf16.
//
//===----------------------------------------------------------------------===//
#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tx;

namespace {

class TxCastTest : public ::testing::Test {
protected:
  TxCastTest() : builder(&context) {
    context.loadDialect<TxDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    f32 = RankedTensorType::get({4, 8}, builder.getF32Type());
    bf16 = RankedTensorType::get({4, 8}, builder.getBF16Type());
    auto func = func::FuncOp::create(builder.getUnknownLoc(), "f",
                                     builder.getFunctionType({f32, bf16}, {}));
    module.push_back(func);
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToStart(body);
    x = body->getArgument(0);
    xb = body->getArgument(1);
  }
  ~TxCastTest() override { module.erase(); }

  MLIRContext context;
  OpBuilder builder;
  ModuleOp module;
  RankedTensorType f32, bf16;
  Value x, xb;
};

TEST_F(TxCastTest, VjpCastsTheGradientBack) {
  auto down = builder.create<CastOp>(builder.getUnknownLoc(), bf16, x);
  EXPECT_TRUE(succeeded(verify(down)));
  // A bf16 gradient at the bf16 result comes back as f32.
  SmallVector<Value> grads;
  ASSERT_TRUE(succeeded(down.buildVJP(builder, ValueRange{xb}, grads)));
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].getType(), f32);
  auto back = grads[0].getDefiningOp<CastOp>();
  ASSERT_TRUE(back);
  EXPECT_EQ(back.getInput(), xb);
  // An f32 gradient (a bf16 linear's) already has the operand's type.
  grads.clear();
  ASSERT_TRUE(succeeded(down.buildVJP(builder, ValueRange{x}, grads)));
  EXPECT_EQ(grads[0], x);
  EXPECT_EQ(formatType(bf16), "bf16[4, 8]");
}

TEST_F(TxCastTest, VerifierWantsTwoTypesAndOneShape) {
  auto same = builder.create<CastOp>(builder.getUnknownLoc(), f32, x);
  EXPECT_TRUE(failed(verify(same)));
  auto reshaped = builder.create<CastOp>(
      builder.getUnknownLoc(),
      RankedTensorType::get({8, 4}, builder.getBF16Type()), x);
  EXPECT_TRUE(failed(verify(reshaped)));
}

} // namespace
