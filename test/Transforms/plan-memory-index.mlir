// RUN: tx-opt %s --tx-plan-memory | FileCheck %s
//
// A contiguous slice or split piece (SliceOp / SplitOp::isContiguous) is a
// view at an offset inside its operand's buffer: it gets the buffer's
// offset and keeps the buffer alive, but an element-wise op reading it may
// not write there in place (that would write at the buffer's start), and a
// returned view is copied out rather than putting its operand's buffer in
// the caller's output. Other slices and pieces get buffers of their own.

// CHECK-LABEL: func.func @slice_views
// CHECK-SAME: tx.arena_bytes = 384 : i64
func.func @slice_views(%x: tensor<4x16xf32>) -> (tensor<2x16xf32>, tensor<1x16xf32>) attributes {tx.entry = "slice_views"} {
  // CHECK: tx.relu {{.*}}tx.offsets = array<i64: 0>
  %a = tx.relu %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // Rows 1 and 2 of %a: a view into its buffer.
  // CHECK-NEXT: tx.slice {{.*}}tx.offsets = array<i64: 0>
  %v = tx.slice %a {starts = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<2x16xf32>
  // %v dies here, but it starts 64 bytes into its buffer: not in place
  // there but in a new buffer (the caller's output, which the add updates).
  // CHECK-NEXT: tx.neg {{.*}}tx.offsets = array<i64: -2>
  %n = tx.neg %v : (tensor<2x16xf32>) -> tensor<2x16xf32>
  // A strided slice (every other row) is a copy with a buffer of its own.
  // CHECK-NEXT: tx.slice {{.*}}tx.offsets = array<i64: 256>
  %s = tx.slice %a {starts = array<i64: 0, 0>, strides = array<i64: 2, 1>} : (tensor<4x16xf32>) -> tensor<2x16xf32>
  // The last row of %s, returned: a view, so %s's buffer is not the
  // caller's output; the view is copied out.
  // CHECK-NEXT: tx.slice {{.*}}tx.offsets = array<i64: 256>
  %last = tx.slice %s {starts = array<i64: 1, 0>} : (tensor<2x16xf32>) -> tensor<1x16xf32>
  // CHECK-NEXT: tx.add {{.*}}tx.offsets = array<i64: -2>
  %r = tx.add %n, %n : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %r, %last : tensor<2x16xf32>, tensor<1x16xf32>
}

// CHECK-LABEL: func.func @split_views
// CHECK-SAME: tx.arena_bytes = 256 : i64
func.func @split_views(%x: tensor<1x4x8xf32>) -> tensor<1x2x8xf32> attributes {tx.entry = "split_views"} {
  // CHECK: tx.relu {{.*}}tx.offsets = array<i64: 0>
  %a = tx.relu %x : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // Along axis 1 after a leading 1: both pieces are views.
  // CHECK-NEXT: tx.split {{.*}}tx.offsets = array<i64: 0, 0>
  %p:2 = tx.split %a {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x8xf32>) -> (tensor<1x2x8xf32>, tensor<1x2x8xf32>)
  // Along the last axis: copies.
  // CHECK-NEXT: tx.split {{.*}}tx.offsets = array<i64: 128, 192>
  %q:2 = tx.split %p#0 {axis = 2 : i64, sizes = array<i64: 4, 4>} : (tensor<1x2x8xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  // CHECK-NEXT: tx.concat {{.*}}tx.offsets = array<i64: -2>
  %c = tx.concat %q#1, %q#0 {axis = 2 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x8xf32>
  return %c : tensor<1x2x8xf32>
}
