// RUN: tx-opt %s --tx-strip-dropout | FileCheck %s
// RUN: tx-opt %s --tx-strip-dropout=all | FileCheck %s --check-prefix=ALL

// Dropout stays in the train entry...
// CHECK-LABEL: func.func @train
// CHECK: tx.dropout
// ALL-LABEL: func.func @train
// ALL-NOT: tx.dropout
func.func @train(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tx.entry = "train"} {
  %0 = tx.dropout %x {rate = 0.1 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// ...and is the identity elsewhere.
// CHECK-LABEL: func.func @encode
// CHECK-NOT: tx.dropout
// CHECK: %[[R:.+]] = tx.relu %arg0
// CHECK-NEXT: return %[[R]]
func.func @encode(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tx.entry = "encode"} {
  %0 = tx.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = tx.dropout %0 {rate = 0.1 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// Fused attention outside training loses its dropout probability too.
// CHECK-LABEL: func.func @decode
// CHECK: tx.attention %arg0, %arg0, %arg0 {causal, scale = 5.000000e-01 : f32}
func.func @decode(%q: tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> attributes {tx.entry = "decode"} {
  %0 = tx.attention %q, %q, %q {causal, dropout = 0.1 : f32, scale = 0.5 : f32} : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  return %0 : tensor<2x2x4x4xf32>
}
