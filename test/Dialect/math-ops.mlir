// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s --mlir-print-op-generic | tx-opt | FileCheck %s
//
// Round trip of every op of TxMathOps.td in its custom assembly (and through
// the generic form).

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<?x8xf32, #tx.dims<N: 64>>) {
  // CHECK-NEXT: tx.exp %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %0 = tx.exp %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.log %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %1 = tx.log %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.sqrt %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %2 = tx.sqrt %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.rsqrt %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %3 = tx.rsqrt %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.abs %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %4 = tx.abs %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.tanh %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %5 = tx.tanh %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.sigmoid %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %6 = tx.sigmoid %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.silu %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %7 = tx.silu %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.gelu_tanh %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %8 = tx.gelu_tanh %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.cos %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %cos = tx.cos %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.sin %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %sin = tx.sin %x : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.pow %{{.+}} {exponent = -5.000000e-01 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %9 = tx.pow %x {exponent = -0.5 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: return
  return
}

// CHECK-LABEL: func.func @selections
func.func @selections(%x: tensor<?x8xf32, #tx.dims<N: 64>>, %b: tensor<8xf32>, %m: tensor<?x1xi1, #tx.dims<N: 64>>, %s: tensor<f32>) {
  // CHECK-NEXT: tx.minimum %{{.+}}, %{{.+}} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %0 = tx.minimum %x, %b : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.maximum %{{.+}}, %{{.+}} : (tensor<f32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %1 = tx.maximum %s, %x : (tensor<f32>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.clamp %{{.+}} {max = 1.000000e+00 : f32, min = -1.000000e+00 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %2 = tx.clamp %x {min = -1.0 : f32, max = 1.0 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.clamp %{{.+}} {min = 0.000000e+00 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %3 = tx.clamp %x {min = 0.0 : f32} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.where %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x1xi1, #tx.dims<N: 64>>, tensor<8xf32>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %4 = tx.where %m, %b, %s : (tensor<?x1xi1, #tx.dims<N: 64>>, tensor<8xf32>, tensor<f32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.reduce_max %{{.+}} {axes = array<i64: 0>} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<8xf32>
  %5 = tx.reduce_max %x {axes = array<i64: 0>} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<8xf32>
  // CHECK-NEXT: tx.reduce_max %{{.+}} {axes = array<i64: -1>, keepdim} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x1xf32, #tx.dims<N: 64>>
  %6 = tx.reduce_max %x {axes = array<i64: -1>, keepdim} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x1xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.argmax %{{.+}} {axis = -1 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?xi32, #tx.dims<N: 64>>
  %7 = tx.argmax %x {axis = -1 : i64} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?xi32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.argmax %{{.+}} {axis = 0 : i64, keepdim} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<1x8xi32>
  %8 = tx.argmax %x {axis = 0 : i64, keepdim} : (tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<1x8xi32>
  // CHECK-NEXT: return
  return
}

// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<?x8xf32, #tx.dims<N: 64>>, %dy: tensor<?x8xf32, #tx.dims<N: 64>>, %dm: tensor<1x8xf32>) {
  // CHECK-NEXT: tx.unary_grad %{{.+}}, %{{.+}} {function = #tx.unary<exp>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %0 = tx.unary_grad %x, %dy {function = #tx.unary<exp>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.unary_grad %{{.+}}, %{{.+}} {function = #tx.unary<gelu_tanh>}
  %1 = tx.unary_grad %x, %dy {function = #tx.unary<gelu_tanh>} : (tensor<?x8xf32, #tx.dims<N: 64>>, tensor<?x8xf32, #tx.dims<N: 64>>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: tx.reduce_mean_grad %{{.+}} : (tensor<1x8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  %2 = tx.reduce_mean_grad %dm : (tensor<1x8xf32>) -> tensor<?x8xf32, #tx.dims<N: 64>>
  // CHECK-NEXT: return
  return
}

// -----

// CHECK-LABEL: func.func @to_float
func.func @to_float(%ids: tensor<?xi32, #tx.dims<T: 64>>, %m: tensor<4x8xi1>) {
  // CHECK-NEXT: tx.to_float %{{.+}} : (tensor<?xi32, #tx.dims<T: 64>>) -> tensor<?xf32, #tx.dims<T: 64>>
  %0 = tx.to_float %ids : (tensor<?xi32, #tx.dims<T: 64>>) -> tensor<?xf32, #tx.dims<T: 64>>
  // CHECK-NEXT: tx.to_float %{{.+}} : (tensor<4x8xi1>) -> tensor<4x8xf32>
  %1 = tx.to_float %m : (tensor<4x8xi1>) -> tensor<4x8xf32>
  return
}
