// RUN: tx-opt %s -split-input-file --tx-fuse-linear | FileCheck %s

// CHECK-LABEL: func.func @relu_epilogue
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 bias %arg2 {activation = #tx.activation<relu>}
// CHECK-NEXT: return %[[Y]]
func.func @relu_epilogue(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %h = tx.linear %x, %w bias %b : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = tx.relu %h : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Activation and residual (the residual on either side of the add).
// CHECK-LABEL: func.func @gelu_residual
// CHECK-NEXT: %[[Y:.+]] = tx.linear %arg0, %arg1 residual %arg2 {activation = #tx.activation<gelu>}
// CHECK-NEXT: return %[[Y]]
func.func @gelu_residual(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %h = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g = tx.gelu %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tx.add %r, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// Not fused: the linear's result has another user.
// CHECK-LABEL: func.func @other_user
// CHECK: tx.linear %arg0, %arg1 :
// CHECK-NEXT: tx.relu
func.func @other_user(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = tx.relu %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %h : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not fused: the residual add broadcasts.
// CHECK-LABEL: func.func @broadcast_residual
// CHECK: tx.linear
// CHECK-NEXT: tx.add
func.func @broadcast_residual(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = tx.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = tx.add %h, %r : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
