// RUN: tx-opt %s -split-input-file --tx-autodiff | FileCheck %s
//
// The VJP rules of the indexing ops (dialect/lib/TxIndexOps.cpp) as
// tx-autodiff builds them, one small train entry per rule: a slice's
// gradient is tx.slice_grad (the gradient zero-padded back to the input), a
// concat's the slices of its gradient, a split's the concat of its results'
// gradients (zeros where a result is unused), a gather's the scatter-add
// tx.gather_grad; the i32 ops (arange, the ids) take no gradient.

// wpe[:T] * x: the slice's gradient is written back into rows 0..T-1.
// CHECK-LABEL: func.func @slice
// CHECK: tx.broadcast_to
// CHECK-NEXT: %[[DP:.+]] = tx.mul %{{.+}}, %arg0
// CHECK-NEXT: %[[DW:.+]] = tx.slice_grad %[[DP]] {starts = array<i64: 0, 0>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]] : tensor<16x8xf32>
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<normal>}
func.func @slice(%x: tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<16x8xf32>
  %p = tx.slice %w {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %y = tx.mul %p, %x : (tensor<?x8xf32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// rotate_half: concat(-w[:, 4:], w[:, :4]). The concat's gradient is sliced
// at each input's offset; each slice's gradient zero-padded; the two summed.
// CHECK-LABEL: func.func @concat
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[D0:.+]] = tx.slice %[[DY]] {starts = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[D1:.+]] = tx.slice %[[DY]] {starts = array<i64: 0, 4>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[DN:.+]] = tx.neg %[[D0]]
// CHECK-NEXT: %[[DLO:.+]] = tx.slice_grad %[[D1]] {starts = array<i64: 0, 0>} : (tensor<4x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DHI:.+]] = tx.slice_grad %[[DN]] {starts = array<i64: 0, 4>} : (tensor<4x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[SUM:.+]] = tx.add %[[DLO]], %[[DHI]]
// CHECK-NEXT: tx.store_grad @w, %[[SUM]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @concat() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %hi = tx.slice %w {starts = array<i64: 0, 4>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %lo = tx.slice %w {starts = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %n = tx.neg %hi : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = tx.concat %n, %lo {axis = -1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %r {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// chunk(w, 3) with the middle piece unused: the input's gradient is the
// concat of the pieces' gradients with zeros (broadcast) in the middle.
// CHECK-LABEL: func.func @split
// CHECK: %[[P:.+]]:3 = tx.split
// CHECK: %[[D0:.+]] = tx.broadcast_to %{{.+}} : (tensor<1x1xf32>) -> tensor<4x2xf32>
// CHECK: %[[D2:.+]] = tx.broadcast_to %{{.+}} : (tensor<1x1xf32>) -> tensor<4x2xf32>
// CHECK: %[[ZERO:.+]] = tx.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[Z:.+]] = tx.broadcast_to %[[ZERO]] : (tensor<f32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[DW:.+]] = tx.concat %{{.+}}, %[[Z]], %{{.+}} {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x6xf32> {init = #tx.init<normal>}
func.func @split() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x6xf32>
  %p:3 = tx.split %w {axis = 1 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
  %a = tx.reduce_sum %p#0 {axes = array<i64: 0, 1>} : (tensor<4x2xf32>) -> tensor<f32>
  %b = tx.reduce_sum %p#2 {axes = array<i64: 0, 1>} : (tensor<4x2xf32>) -> tensor<f32>
  %l = tx.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// wpe[arange(T)]: the gather's gradient is a scatter-add by the same ids;
// arange, being i32, takes none.
// CHECK-LABEL: func.func @gather
// CHECK: %[[POS:.+]] = tx.arange : tensor<?xi32, #tx.dims<T: 16>>
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DW:.+]] = tx.gather_grad %[[POS]], %[[DY]] {axis = 0 : i64} : (tensor<?xi32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<16x8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<normal>}
func.func @gather(%x: tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<16x8xf32>
  %pos = tx.arange : tensor<?xi32, #tx.dims<T: 16>>
  %e = tx.gather %w, %pos {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?xi32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %l = tx.reduce_sum %e {axes = array<i64: 0, 1>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A concat's gradient reaches only its active inputs: the slice for the
// entry argument `x` is dead and erased. The i32 ids sliced and
// concatenated take no gradient; the gather they feed scatter-adds into
// the parameter, and its gradient sums with the slice's.
// CHECK-LABEL: func.func @inactive
// CHECK: %[[IDS:.+]] = tx.concat %arg1, %{{.+}} {axis = 1 : i64} : (tensor<?x4xi32, #tx.dims<T: 16>>, tensor<?x2xi32, #tx.dims<T: 16>>) -> tensor<?x6xi32, #tx.dims<T: 16>>
// CHECK: %[[DE:.+]] = tx.gather_grad %[[IDS]], %{{.+}} {axis = 0 : i64} : (tensor<?x6xi32, #tx.dims<T: 16>>, tensor<?x6x2xf32, #tx.dims<T: 16>>) -> tensor<16x2xf32>
// CHECK: %[[DC:.+]] = tx.slice %{{.+}} {starts = array<i64: 0, 0>} : (tensor<?x10xf32, #tx.dims<T: 16>>) -> tensor<?x2xf32, #tx.dims<T: 16>>
// CHECK-NEXT: %[[DW:.+]] = tx.slice_grad %[[DC]] {starts = array<i64: 0, 0>} : (tensor<?x2xf32, #tx.dims<T: 16>>) -> tensor<16x2xf32>
// CHECK-NEXT: %[[SUM:.+]] = tx.add %[[DE]], %[[DW]]
// CHECK-NEXT: tx.store_grad @w, %[[SUM]]
// CHECK-NOT: tx.slice
tx.parameter @w : tensor<16x2xf32> {init = #tx.init<normal>}
func.func @inactive(%x: tensor<?x8xf32, #tx.dims<T: 16>>, %ids: tensor<?x4xi32, #tx.dims<T: 16>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w0 = tx.param @w : tensor<16x2xf32>
  %w = tx.slice %w0 {starts = array<i64: 0, 0>} : (tensor<16x2xf32>) -> tensor<?x2xf32, #tx.dims<T: 16>>
  %c = tx.concat %w, %x {axis = 1 : i64} : (tensor<?x2xf32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<?x10xf32, #tx.dims<T: 16>>
  %l0 = tx.reduce_sum %c {axes = array<i64: 0, 1>} : (tensor<?x10xf32, #tx.dims<T: 16>>) -> tensor<f32>
  %head = tx.slice %ids {starts = array<i64: 0, 2>} : (tensor<?x4xi32, #tx.dims<T: 16>>) -> tensor<?x2xi32, #tx.dims<T: 16>>
  %i = tx.concat %ids, %head {axis = 1 : i64} : (tensor<?x4xi32, #tx.dims<T: 16>>, tensor<?x2xi32, #tx.dims<T: 16>>) -> tensor<?x6xi32, #tx.dims<T: 16>>
  %e = tx.gather %w0, %i {axis = 0 : i64} : (tensor<16x2xf32>, tensor<?x6xi32, #tx.dims<T: 16>>) -> tensor<?x6x2xf32, #tx.dims<T: 16>>
  %l1 = tx.reduce_sum %e {axes = array<i64: 0, 1, 2>} : (tensor<?x6x2xf32, #tx.dims<T: 16>>) -> tensor<f32>
  %l = tx.add %l0, %l1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
