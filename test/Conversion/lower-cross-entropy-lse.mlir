// RUN: tx-opt %s --tx-autodiff --tx-plan-memory --tx-lower-entries | FileCheck %s
//
// The train step's loss saves each row's log-sum-exp and its gradient reads
// it (tx.cross_entropy_train, tx.cross_entropy_grad ... lse): the lse buffer
// is txrt_cross_entropy_fwd's `lse` argument and txrt_cross_entropy_bwd's,
// so the backward does not read every row of the logits once more for its
// statistics. An eval entry's loss saves none (NULL).

// CHECK-LABEL: func.func @txc_entry_step
// CHECK: call @txrt_cross_entropy_fwd(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[LSE:[0-9]+]],
// CHECK: call @txrt_cross_entropy_bwd(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[LSE]],
// CHECK-LABEL: func.func @txc_entry_loss
// CHECK: call @txrt_linear_fwd(
// CHECK: %[[NONE:[0-9]+]] = llvm.mlir.zero
// CHECK: call @txrt_cross_entropy_fwd(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[NONE]],
// CHECK-NOT: call @txrt_cross_entropy_bwd
// CHECK: return
module attributes {tx.dims = {B = 4 : i64, T = 9 : i64}} {
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
func.func @step(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, %tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<16x8xf32>
  %z = tx.linear %x, %w : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, tensor<16x8xf32>) -> tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>
  %l = tx.cross_entropy %z, %tgt {ignore_index = 0 : i64, label_smoothing = 0.1 : f32} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @loss(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, %tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32> attributes {tx.entry = "eval"} {
  %w = tx.param @w : tensor<16x8xf32>
  %z = tx.linear %x, %w : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, tensor<16x8xf32>) -> tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>
  %l = tx.cross_entropy %z, %tgt {ignore_index = 0 : i64, label_smoothing = 0.1 : f32} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32>
  return %l : tensor<f32>
}
}
