// RUN: tx-opt %s --tx-precision=precision=bf16 --tx-plan-memory | FileCheck %s
//
// The bf16 copies of the parameters tx-precision marked bf16_copy come
// after everything else in the parameter arena (here after the parameters;
// in a training module after the gradients and Adam's moments), each
// bf16_offset 64-byte aligned; the cast of such a parameter's read is the
// copy, outside the activation arena (offset -1, like the parameter read),
// while the cast of an activation gets an arena buffer of half the bytes.

// CHECK: module attributes {tx.param_arena_bytes = 1664 : i64, tx.precision = "bf16"}
// CHECK: tx.parameter @w : tensor<16x16xf32> {bf16_copy, bf16_offset = 1152 : i64, init = #tx.init<zeros>, offset = 0 : i64}
// CHECK: tx.parameter @b : tensor<16xf32> {init = #tx.init<zeros>, offset = 1024 : i64}
tx.parameter @w : tensor<16x16xf32> {init = #tx.init<zeros>}
tx.parameter @b : tensor<16xf32> {init = #tx.init<zeros>}

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {tx.entry = "forward"} {
  // CHECK: tx.cast %arg0 {tx.offsets = array<i64: 0>} : tensor<4x16xf32> to tensor<4x16xbf16>
  // CHECK: tx.param @w {tx.offsets = array<i64: -1>}
  // CHECK-NEXT: tx.cast %{{.+}} {tx.offsets = array<i64: -1>} : tensor<16x16xf32> to tensor<16x16xbf16>
  %w = tx.param @w : tensor<16x16xf32>
  %b = tx.param @b : tensor<16xf32>
  %y = tx.linear %x, %w bias %b : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// The cast a norm writes (by_producer) is live from the norm on, so its
// buffer shares no bytes with anything the norm reads or writes: here the
// unused sum (256) dies at the norm, and a buffer starting after the norm
// would be placed over it, which the norm writes in the same call.
tx.parameter @g : tensor<16xf32> {init = #tx.init<ones>}

// CHECK-LABEL: func.func @norm_writes_the_copy
func.func @norm_writes_the_copy(%x: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {tx.entry = "forward"} {
  // CHECK: tx.add %arg0, %arg0 {tx.offsets = array<i64: 0>}
  // CHECK: tx.add_layer_norm {{.+}} {tx.offsets = array<i64: 0, 256>}
  // CHECK-NEXT: tx.cast %result {by_producer, tx.offsets = array<i64: 512>} : tensor<4x16xf32> to tensor<4x16xbf16>
  %a = tx.add %x, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %g = tx.param @g : tensor<16xf32>
  %n:2 = tx.add_layer_norm %a, %a, %g, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %w = tx.param @w : tensor<16x16xf32>
  %y = tx.linear %n#0, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
