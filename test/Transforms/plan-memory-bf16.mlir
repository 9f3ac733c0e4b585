// RUN: tx-opt %s --tx-precision=precision=bf16 --tx-plan-memory | FileCheck %s
//
// The bf16 copies of the parameters tx-precision marked bf16_copy come
// after everything else in the parameter arena (here after the parameters;
// in a training module after the gradients and Adam's moments), each
// bf16_offset 64-byte aligned; the cast of such a parameter's read is the
// copy, outside the activation arena (offset -1, like the parameter read),
// while the cast of an activation gets an arena buffer of half the bytes.

// CHECK: module attributes {tx.param_arena_bytes = 1600 : i64, tx.precision = "bf16"}
// CHECK: tx.parameter @w : tensor<16x16xf32> {bf16_copy, bf16_offset = 1088 : i64, init = #tx.init<zeros>, offset = 0 : i64}
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
