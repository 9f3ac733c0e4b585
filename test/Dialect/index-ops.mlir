// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s --mlir-print-op-generic | tx-opt | FileCheck %s
//
// Round trip of every op of TxIndexOps.td in its custom assembly (and through
// the generic form).

// CHECK-LABEL: func.func @slices
func.func @slices(%wpe: tensor<16x8xf32>, %x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, %ids: tensor<?x?xi32, #tx.dims<B: 4, T: 16>>, %m: tensor<?x?xi1, #tx.dims<B: 4, T: 16>>) {
  // CHECK-NEXT: tx.slice %{{.+}} {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %0 = tx.slice %wpe {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  // CHECK-NEXT: tx.slice %{{.+}} {starts = array<i64: 0, 0, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
  %1 = tx.slice %x {starts = array<i64: 0, 0, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
  // CHECK-NEXT: tx.slice %{{.+}} {starts = array<i64: 0, -1, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
  %2 = tx.slice %x {starts = array<i64: 0, -1, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
  // CHECK-NEXT: tx.slice %{{.+}} {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>
  %3 = tx.slice %x {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>
  // CHECK-NEXT: tx.slice %{{.+}} {starts = array<i64: 0, 0>} : (tensor<?x?xi32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1xi32, #tx.dims<B: 4>>
  %4 = tx.slice %ids {starts = array<i64: 0, 0>} : (tensor<?x?xi32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1xi32, #tx.dims<B: 4>>
  // CHECK-NEXT: tx.slice %{{.+}} {starts = array<i64: -1, 0>} : (tensor<?x?xi1, #tx.dims<B: 4, T: 16>>) -> tensor<1x?xi1, #tx.dims<T: 16>>
  %5 = tx.slice %m {starts = array<i64: -1, 0>} : (tensor<?x?xi1, #tx.dims<B: 4, T: 16>>) -> tensor<1x?xi1, #tx.dims<T: 16>>
  // CHECK-NEXT: return
  return
}

// CHECK-LABEL: func.func @joins
func.func @joins(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, %y: tensor<?x?x2xf32, #tx.dims<B: 4, T: 16>>, %s: tensor<6x?xi32, #tx.dims<T: 16>>) {
  // CHECK-NEXT: [[P:%.+]]:2 = tx.split %{{.+}} {axis = -1 : i64, sizes = array<i64: 4, 4>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>, tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>)
  %a, %b = tx.split %x {axis = -1 : i64, sizes = array<i64: 4, 4>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>, tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>)
  // CHECK-NEXT: tx.concat [[P]]#1, [[P]]#0, %{{.+}} {axis = 2 : i64} : (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>, tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>, tensor<?x?x2xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x10xf32, #tx.dims<B: 4, T: 16>>
  %0 = tx.concat %b, %a, %y {axis = 2 : i64} : (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>, tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>, tensor<?x?x2xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x10xf32, #tx.dims<B: 4, T: 16>>
  // CHECK-NEXT: tx.split %{{.+}} {axis = 0 : i64, sizes = array<i64: 1, 2, 3>} : (tensor<6x?xi32, #tx.dims<T: 16>>) -> (tensor<1x?xi32, #tx.dims<T: 16>>, tensor<2x?xi32, #tx.dims<T: 16>>, tensor<3x?xi32, #tx.dims<T: 16>>)
  %1:3 = tx.split %s {axis = 0 : i64, sizes = array<i64: 1, 2, 3>} : (tensor<6x?xi32, #tx.dims<T: 16>>) -> (tensor<1x?xi32, #tx.dims<T: 16>>, tensor<2x?xi32, #tx.dims<T: 16>>, tensor<3x?xi32, #tx.dims<T: 16>>)
  // CHECK-NEXT: return
  return
}

// CHECK-LABEL: func.func @gathers
func.func @gathers(%wpe: tensor<16x8xf32>, %x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, %idx: tensor<3xi32>, %i: tensor<i32>) {
  // CHECK-NEXT: [[POS:%.+]] = tx.arange : tensor<?xi32, #tx.dims<T: 16>>
  %pos = tx.arange : tensor<?xi32, #tx.dims<T: 16>>
  // CHECK-NEXT: tx.arange {start = 2 : i64} : tensor<4xi32>
  %0 = tx.arange {start = 2 : i64} : tensor<4xi32>
  // CHECK-NEXT: tx.gather %{{.+}}, [[POS]] {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?xi32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %1 = tx.gather %wpe, %pos {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?xi32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  // CHECK-NEXT: tx.gather %{{.+}}, %{{.+}} {axis = -1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, tensor<3xi32>) -> tensor<?x?x3xf32, #tx.dims<B: 4, T: 16>>
  %2 = tx.gather %x, %idx {axis = -1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, tensor<3xi32>) -> tensor<?x?x3xf32, #tx.dims<B: 4, T: 16>>
  // CHECK-NEXT: tx.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, tensor<i32>) -> tensor<?x8xf32, #tx.dims<B: 4>>
  %3 = tx.gather %x, %i {axis = 1 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, tensor<i32>) -> tensor<?x8xf32, #tx.dims<B: 4>>
  // CHECK-NEXT: return
  return
}

// CHECK-LABEL: func.func @gradients
func.func @gradients(%dp: tensor<?x8xf32, #tx.dims<T: 16>>, %pos: tensor<?xi32, #tx.dims<T: 16>>, %dy: tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>) {
  // CHECK-NEXT: tx.slice_grad %{{.+}} {starts = array<i64: 0, 0>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
  %0 = tx.slice_grad %dp {starts = array<i64: 0, 0>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
  // CHECK-NEXT: tx.slice_grad %{{.+}} {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>
  %1 = tx.slice_grad %dy {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>
  // CHECK-NEXT: tx.gather_grad %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<?xi32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
  %2 = tx.gather_grad %pos, %dp {axis = 0 : i64} : (tensor<?xi32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
  // CHECK-NEXT: return
  return
}
