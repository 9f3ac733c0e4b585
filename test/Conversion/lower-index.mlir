// RUN: tx-opt %s --tx-plan-memory --tx-lower-entries | FileCheck %s
//
// The ops of TxIndexOps.td lowered: contiguous slices and split pieces are
// pointers into their operand (a byte offset from the start, computed at run
// time when it counts from the end of a symbolic dim), no code; other
// slices, split pieces, concat inputs and slice gradients are glue copies
// between a dense memref and a memref.subview window of another; gathers
// call libtxrt; arange is a glue kernel of linalg.index.

module attributes {tx.dims = {B = 4 : i64, T = 16 : i64}} {
tx.parameter @wpe : tensor<16x8xf32> {init = #tx.init<normal>}
// wpe[:T] (a parameter: offset 0 into the parameter's slot), s[2] (rows
// after 2 * T * 8 elements) and x[-1] (after (B - 1) * T * 8 elements):
// views, no kernel.
// CHECK-LABEL: func.func @txc_entry_views(
// CHECK: %[[WPE:.+]] = llvm.getelementptr %arg1[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[WPE]][%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[ROWS:.+]] = arith.muli %c2, %{{.+}} : index
// CHECK: %[[S:.+]] = arith.addi %{{.+}}, %[[ROWS]] : index
// CHECK: %[[SBYTES:.+]] = arith.muli %[[S]], %c4
// CHECK: %[[SB:.+]] = arith.index_cast %[[SBYTES]] : index to i64
// CHECK: llvm.getelementptr %{{.+}}[%[[SB]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[LAST:.+]] = arith.subi %[[B:.+]], %c1
// CHECK: arith.muli %[[LAST]], %{{.+}} : index
// CHECK-NOT: call @__txc_kernel
// CHECK: call @__txc_kernel_0_add(
// CHECK: call @__txc_kernel_0_add(
// CHECK-NOT: call @__txc_kernel
// CHECK: call @txrt_entry_done(
// CHECK-NEXT: return
func.func @views(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>> {tx.name = "x"}, %s: tensor<3x?x8xf32, #tx.dims<T: 16>> {tx.name = "s"}) -> (tensor<?x8xf32, #tx.dims<T: 16>> {tx.name = "y"}) attributes {tx.entry = "views"} {
  %wpe = tx.param @wpe : tensor<16x8xf32>
  %p = tx.slice %wpe {starts = array<i64: 0, 0>} : (tensor<16x8xf32>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %last = tx.slice %s {starts = array<i64: 2, 0, 0>} : (tensor<3x?x8xf32, #tx.dims<T: 16>>) -> tensor<1x?x8xf32, #tx.dims<T: 16>>
  %l = tx.reshape %last : (tensor<1x?x8xf32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %xb = tx.slice %x {starts = array<i64: -1, 0, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<1x?x8xf32, #tx.dims<T: 16>>
  %xl = tx.reshape %xb : (tensor<1x?x8xf32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %a = tx.add %p, %l : (tensor<?x8xf32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  %y = tx.add %a, %xl : (tensor<?x8xf32, #tx.dims<T: 16>>, tensor<?x8xf32, #tx.dims<T: 16>>) -> tensor<?x8xf32, #tx.dims<T: 16>>
  return %y : tensor<?x8xf32, #tx.dims<T: 16>>
}

// x[:, -1] (from row T - 1 at run time) and x[:, 0]: copies through
// windows; their concat: copies into two windows of the result; a gather
// and its scatter-add: txrt_gather (4-byte elements) and txrt_gather_bwd;
// every other column: a window with stride 2, and its gradient zeroes the
// result, then copies into the same window.
// CHECK-LABEL: func.func @txc_entry_copies(
// CHECK: %[[LAST:.+]] = arith.subi %[[T:.+]], %c1
// CHECK: memref.subview %{{.+}}[0, %[[LAST]], 0] [%{{.+}}, 1, 8] [1, 1, 1] : memref<?x?x8xf32> to memref<?x1x8xf32, strided<[?, 8, 1], offset: ?>>
// CHECK-NEXT: call @__txc_kernel_[[#]]_slice(
// CHECK: memref.subview %{{.+}}[0, 0, 0] [%{{.+}}, 1, 8] [1, 1, 1] : memref<?x?x8xf32> to memref<?x1x8xf32, strided<[?, 8, 1]>>
// CHECK-NEXT: call @__txc_kernel_[[#]]_slice(
// CHECK: memref.subview %{{.+}}[0, 0] [%{{.+}}, 8] [1, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[16, 1]>>
// CHECK: call @__txc_kernel_[[#]]_concat(
// CHECK: memref.subview %{{.+}}[0, 8] [%{{.+}}, 8] [1, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[16, 1], offset: 8>>
// CHECK: call @__txc_kernel_[[#]]_concat(
// CHECK: call @txrt_gather(%arg0, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c4_i64{{(_[0-9]+)?}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: call @txrt_gather_bwd(
// CHECK: memref.subview %{{.+}}[0, 0, 1] [%{{.+}}, %{{.+}}, 4] [1, 1, 2] : memref<?x?x8xf32> to memref<?x?x4xf32, strided<[?, 8, 2], offset: 1>>
// CHECK-NEXT: call @__txc_kernel_[[#]]_slice(
// CHECK: call @__txc_kernel_[[#]]_slice_grad(%{{.+}}) : (memref<?x?x8xf32>) -> ()
// CHECK: memref.subview %{{.+}}[0, 0, 1] [%{{.+}}, %{{.+}}, 4] [1, 1, 2] : memref<?x?x8xf32> to memref<?x?x4xf32, strided<[?, 8, 2], offset: 1>>
// CHECK: call @__txc_kernel_[[#]]_slice_grad(%{{.+}}, %{{.+}}) : (memref<?x?x4xf32>, memref<?x?x4xf32, strided<[?, 8, 2], offset: 1>>) -> ()
func.func @copies(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>> {tx.name = "x"}, %ids: tensor<?x?xi32, #tx.dims<B: 4, T: 16>> {tx.name = "ids"}, %t: tensor<16x8xf32> {tx.name = "t"}) -> (tensor<?x16xf32, #tx.dims<B: 4>> {tx.name = "c"}, tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>> {tx.name = "e"}, tensor<16x8xf32> {tx.name = "dt"}, tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>> {tx.name = "dx"}) attributes {tx.entry = "copies"} {
  %l = tx.slice %x {starts = array<i64: 0, -1, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
  %l2 = tx.reshape %l : (tensor<?x1x8xf32, #tx.dims<B: 4>>) -> tensor<?x8xf32, #tx.dims<B: 4>>
  %f = tx.slice %x {starts = array<i64: 0, 0, 0>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x1x8xf32, #tx.dims<B: 4>>
  %f2 = tx.reshape %f : (tensor<?x1x8xf32, #tx.dims<B: 4>>) -> tensor<?x8xf32, #tx.dims<B: 4>>
  %c = tx.concat %f2, %l2 {axis = 1 : i64} : (tensor<?x8xf32, #tx.dims<B: 4>>, tensor<?x8xf32, #tx.dims<B: 4>>) -> tensor<?x16xf32, #tx.dims<B: 4>>
  %e = tx.gather %t, %ids {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?x?xi32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>
  %dt = tx.gather_grad %ids, %e {axis = 0 : i64} : (tensor<?x?xi32, #tx.dims<B: 4, T: 16>>, tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<16x8xf32>
  %o = tx.slice %x {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>
  %dx = tx.slice_grad %o {starts = array<i64: 0, 0, 1>, strides = array<i64: 1, 1, 2>} : (tensor<?x?x4xf32, #tx.dims<B: 4, T: 16>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>
  return %c, %e, %dt, %dx : tensor<?x16xf32, #tx.dims<B: 4>>, tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>, tensor<16x8xf32>, tensor<?x?x8xf32, #tx.dims<B: 4, T: 16>>
}

// arange from 3; a split along the last axis: copies; the last row of a
// piece and the first row of the other: views; their concat: copies; a
// split of [1, 8] along axis 0: a view.
// CHECK-LABEL: func.func @txc_entry_positions(
// CHECK: memref.store %c3_i64{{(_[0-9]+)?}}, %[[START:.+]][] : memref<i64>
// CHECK: call @__txc_kernel_[[ARANGE:[0-9]+]]_arange(%[[START]], %{{.+}}) : (memref<i64>, memref<?xi32>) -> ()
// CHECK: memref.subview %{{.+}}[0, 0] [%{{.+}}, 3] [1, 1] : memref<?x8xf32> to memref<?x3xf32, strided<[8, 1]>>
// CHECK-NEXT: call @__txc_kernel_[[#]]_split(
// CHECK: memref.subview %{{.+}}[0, 3] [%{{.+}}, 5] [1, 1] : memref<?x8xf32> to memref<?x5xf32, strided<[8, 1], offset: 3>>
// CHECK-NEXT: call @__txc_kernel_[[#]]_split(
// CHECK-NOT: call
// CHECK: arith.subi
// CHECK-NOT: call
// CHECK: call @__txc_kernel_[[#]]_concat(
// CHECK: memref.subview
// CHECK: call @__txc_kernel_[[#]]_concat(
// CHECK-NOT: call @__txc_kernel
// CHECK: return
func.func @positions(%x: tensor<?x8xf32, #tx.dims<T: 16>> {tx.name = "x"}) -> (tensor<?xi32, #tx.dims<T: 16>> {tx.name = "p"}, tensor<1x8xf32> {tx.name = "h"}, tensor<1x8xf32> {tx.name = "r"}) attributes {tx.entry = "positions"} {
  %p = tx.arange {start = 3 : i64} : tensor<?xi32, #tx.dims<T: 16>>
  %h:2 = tx.split %x {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<?x8xf32, #tx.dims<T: 16>>) -> (tensor<?x3xf32, #tx.dims<T: 16>>, tensor<?x5xf32, #tx.dims<T: 16>>)
  %a = tx.slice %h#1 {starts = array<i64: -1, 0>} : (tensor<?x5xf32, #tx.dims<T: 16>>) -> tensor<1x5xf32>
  %b = tx.slice %h#0 {starts = array<i64: 0, 0>} : (tensor<?x3xf32, #tx.dims<T: 16>>) -> tensor<1x3xf32>
  %r = tx.concat %a, %b {axis = 1 : i64} : (tensor<1x5xf32>, tensor<1x3xf32>) -> tensor<1x8xf32>
  %q:1 = tx.split %r {axis = 0 : i64, sizes = array<i64: 1>} : (tensor<1x8xf32>) -> (tensor<1x8xf32>)
  return %p, %q#0, %r : tensor<?xi32, #tx.dims<T: 16>>, tensor<1x8xf32>, tensor<1x8xf32>
}

// The copies are plain glue: an identity linalg.generic from a strided
// window, into one, and the zero fill of a slice gradient.
// CHECK-LABEL: func.func private @__txc_kernel_{{[0-9]+}}_slice(
// CHECK-SAME: memref<?x1x8xf32, strided<[?, 8, 1], offset: ?>>
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-LABEL: func.func private @__txc_kernel_{{[0-9]+}}_slice_grad(
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.yield %[[ZERO]] : f32
// The start (3, or start + cache - T with tx.position_offset) comes in a
// rank-0 buffer.
// CHECK: func.func private @__txc_kernel_[[ARANGE]]_arange(
// CHECK: ^bb0(%[[START:.+]]: i64, %{{.+}}: i32):
// CHECK-NEXT: %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[P:.+]] = arith.addi %[[I64]], %[[START]] : i64
// CHECK-NEXT: arith.trunci %[[P]] : i64 to i32
}
