// RUN: tx-opt %s -split-input-file --tx-precision=precision=bf16 | FileCheck %s
// RUN: tx-opt %s -split-input-file --tx-precision | FileCheck %s --check-prefix=FP32
//
// tx-precision with bf16: each linear and linear_grad reads one shared
// bf16 cast of its input and of its weight, placed after the value's
// definition; results, gradients and every other op stay f32; the module
// records its precision. A parameter whose read is cast is marked
// bf16_copy: tx-plan-memory gives it a bf16 copy, which the cast lowers
// to. With the default (fp32) nothing but the record changes.

// CHECK: module attributes {tx.precision = "bf16"}
// CHECK: tx.parameter @w : tensor<6x8xf32> {bf16_copy, init = #tx.init<normal>}
// CHECK: tx.parameter @b : tensor<6xf32> {init = #tx.init<zeros>}
// FP32: module attributes {tx.precision = "fp32"}
// FP32-NOT: tx.cast
// FP32-NOT: bf16
// CHECK-LABEL: func.func @train
// CHECK-NEXT: %[[XB:.+]] = tx.cast %arg0 : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[WB:.+]] = tx.cast %[[W]] : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK-NEXT: %[[Y:.+]] = tx.linear %[[XB]], %[[WB]] bias %[[B]] : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: tx.param @g
// CHECK-NEXT: %[[N:.+]] = tx.layer_norm %[[Y]], %{{.+}} : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: tx.linear_grad %[[XB]], %[[WB]], %[[N]] : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
// CHECK-NOT: tx.cast
tx.parameter @w : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<6xf32> {init = #tx.init<zeros>}
tx.parameter @g : tensor<6xf32> {init = #tx.init<ones>}
func.func @train(%x: tensor<4x8xf32>) -> tensor<6x8xf32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<6x8xf32>
  %b = tx.param @b : tensor<6xf32>
  %y = tx.linear %x, %w bias %b : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %g = tx.param @g : tensor<6xf32>
  %n = tx.layer_norm %y, %g : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %dx, %dw, %db = tx.linear_grad %x, %w, %n : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
  return %dw : tensor<6x8xf32>
}

// -----

// A gated linear (SwiGLU: silu(x w^T) * (x v^T)) reads bf16 too, the same
// shared cast of x as its sibling; its gate and result stay f32.
// CHECK-LABEL: func.func @gated
// CHECK-DAG: %[[XB:.+]] = tx.cast %arg0 : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-DAG: %[[WB:.+]] = tx.cast %arg1 : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK-DAG: %[[VB:.+]] = tx.cast %arg2 : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK: %[[U:.+]] = tx.linear %[[XB]], %[[VB]] : (tensor<4x8xbf16>, tensor<6x8xbf16>) -> tensor<4x6xf32>
// CHECK: tx.linear %[[XB]], %[[WB]] gate %[[U]] {activation = #tx.activation<silu>} : (tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NOT: tx.cast
func.func @gated(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x6xf32> {
  %u = tx.linear %x, %v : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %y = tx.linear %x, %w gate %u {activation = #tx.activation<silu>} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// A weight that is not a parameter read is cast all the same, and its
// parameter-less cast marks nothing; a parameter an f32 op reads too keeps
// that f32 read.
// CHECK: tx.parameter @e : tensor<6x8xf32> {bf16_copy, init = #tx.init<normal>}
// CHECK-LABEL: func.func @mixed
// CHECK-DAG: %[[XB:.+]] = tx.cast %arg0 : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-DAG: %[[WB:.+]] = tx.cast %arg1 : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK: %[[E:.+]] = tx.param @e : tensor<6x8xf32>
// CHECK-NEXT: %[[EB:.+]] = tx.cast %[[E]] : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK-NEXT: tx.linear %[[XB]], %[[EB]] :
// CHECK-NEXT: tx.linear %[[XB]], %[[WB]] :
// CHECK-NEXT: tx.add %[[E]], %[[E]] :
tx.parameter @e : tensor<6x8xf32> {init = #tx.init<normal>}
func.func @mixed(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<6x8xf32>) {
  %e = tx.param @e : tensor<6x8xf32>
  %y = tx.linear %x, %e : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %z = tx.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %s = tx.add %e, %e : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  return %y, %z, %s : tensor<4x6xf32>, tensor<4x6xf32>, tensor<6x8xf32>
}

// -----

// The cast of a norm's output (add + layer norm, RMS norm, add + RMS norm)
// is marked by_producer: the norm's kernel writes it. The cast of another
// op's output (here the sum of the add + layer norm) is a cast of its own.
// CHECK-LABEL: func.func @norms
// CHECK-NEXT: %[[WB:.+]] = tx.cast %arg2 : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK-NEXT: %[[Y:[^,]+]], %[[S:.+]] = tx.add_layer_norm
// CHECK-NEXT: %[[SB:.+]] = tx.cast %[[S]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[YB:.+]] = tx.cast %[[Y]] {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[R:.+]] = tx.rms_norm
// CHECK-NEXT: %[[RB:.+]] = tx.cast %[[R]] {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[A:[^,]+]], %{{.+}} = tx.add_rms_norm
// CHECK-NEXT: %[[AB:.+]] = tx.cast %[[A]] {by_producer} : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: tx.linear %[[YB]], %[[WB]] :
// CHECK-NEXT: tx.linear %[[SB]], %[[WB]] :
// CHECK-NEXT: tx.linear %[[RB]], %[[WB]] :
// CHECK-NEXT: tx.linear %[[AB]], %[[WB]] :
func.func @norms(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %w: tensor<6x8xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %y:2 = tx.add_layer_norm %x, %x, %g, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %r = tx.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a:2 = tx.add_rms_norm %x, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %l0 = tx.linear %y#0, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %l1 = tx.linear %y#1, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %l2 = tx.linear %r, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %l3 = tx.linear %a#0, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  return %l0, %l1, %l2, %l3 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
