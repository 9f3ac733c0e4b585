// RUN: tx-opt %s --tx-plan-memory | FileCheck %s
//
// Parameters get offsets in the parameter arena; activations get offsets in
// one arena from liveness: dead buffers are reused, element-wise ops whose
// first operand dies write in place, reshapes alias their operand, and the
// returned value (with what shares its buffer) is computed in the caller's
// output buffer (offset -2 - k for output k), outside the arena.

// CHECK: module attributes {tx.param_arena_bytes = 1088 : i64}
// CHECK: tx.parameter @w : tensor<16x16xf32> {init = #tx.init<zeros>, offset = 0 : i64}
// CHECK: tx.parameter @b : tensor<16xf32> {init = #tx.init<zeros>, offset = 1024 : i64}
tx.parameter @w : tensor<16x16xf32> {init = #tx.init<zeros>}
tx.parameter @b : tensor<16xf32> {init = #tx.init<zeros>}

// CHECK-LABEL: func.func @in_place
// CHECK-SAME: tx.arena_bytes = 256 : i64
// CHECK-SAME: tx.output_tensor_bytes = 768 : i64
// CHECK-SAME: tx.tensor_bytes = 768 : i64
func.func @in_place(%x: tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>> attributes {tx.entry = "in_place"} {
  // CHECK: tx.param @w {tx.offsets = array<i64: -1>}
  %w = tx.param @w : tensor<16x16xf32>
  %b = tx.param @b : tensor<16xf32>
  // CHECK: tx.linear {{.*}} {tx.offsets = array<i64: 0>}
  %a = tx.linear %x, %w bias %b : (tensor<?x16xf32, #tx.dims<N: 4>>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  // In place: %a dies here.
  // CHECK-NEXT: tx.relu {{.*}} {tx.offsets = array<i64: 0>}
  %r = tx.relu %a : (tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  // A view of %r.
  // CHECK-NEXT: tx.reshape {{.*}} {tx.offsets = array<i64: 0>}
  %s = tx.reshape %r : (tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x4x4xf32, #tx.dims<N: 4>>
  // %r is still live: a new buffer, the one returned (output 0), which %u
  // and %v then update in place.
  // CHECK-NEXT: tx.linear {{.*}} {tx.offsets = array<i64: -2>}
  %t = tx.linear %r, %w : (tensor<?x16xf32, #tx.dims<N: 4>>, tensor<16x16xf32>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  // CHECK-NEXT: tx.add {{.*}} {tx.offsets = array<i64: -2>}
  %u = tx.add %t, %r : (tensor<?x16xf32, #tx.dims<N: 4>>, tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  // CHECK-NEXT: tx.relu {{.*}} {tx.offsets = array<i64: -2>}
  %v = tx.relu %u : (tensor<?x16xf32, #tx.dims<N: 4>>) -> tensor<?x16xf32, #tx.dims<N: 4>>
  return %v : tensor<?x16xf32, #tx.dims<N: 4>>
}

// CHECK-LABEL: func.func @reuse
// CHECK-SAME: tx.arena_bytes = 128 : i64
// CHECK-SAME: tx.output_tensor_bytes = 64 : i64
// CHECK-SAME: tx.tensor_bytes = 192 : i64
func.func @reuse(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {tx.entry = "reuse"} {
  // CHECK: tx.softmax {{.*}}tx.offsets = array<i64: 0>
  %a = tx.softmax %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: tx.softmax {{.*}}tx.offsets = array<i64: 64>
  %b = tx.softmax %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // %a is dead: its bytes are reused.
  // CHECK-NEXT: tx.softmax {{.*}}tx.offsets = array<i64: 0>
  %c = tx.softmax %b : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: tx.matmul {{.*}}tx.offsets = array<i64: -2>
  %d = tx.matmul %b, %c : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// A transpose that a matmul reads through strides is a view: it shares its
// operand's buffer (which lives as long as the view) and gets no copy.
// CHECK-LABEL: func.func @strided_view
// CHECK-SAME: tx.arena_bytes = 128 : i64
func.func @strided_view(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {tx.entry = "strided_view"} {
  // CHECK: tx.softmax {{.*}}tx.offsets = array<i64: 0>
  %a = tx.softmax %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: tx.transpose {{.*}}tx.offsets = array<i64: 0>
  %t = tx.transpose %a {permutation = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: tx.softmax {{.*}}tx.offsets = array<i64: 64>
  %b = tx.softmax %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: tx.matmul {{.*}}tx.offsets = array<i64: -2>
  %d = tx.matmul %b, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// A residual that is also the linear's input (`linear(h) + h`) is still
// read by the product: the result gets a buffer of its own (here the
// output), not h's (before, the product overwrote rows of h it had not read
// yet: wrong sums at d=1024).
// Add + layer norm of a value with itself adds element for element before
// it writes a row: it stays in place.
// CHECK-LABEL: func.func @residual_is_input
// CHECK-SAME: tx.arena_bytes = 256 : i64
func.func @residual_is_input(%x: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {tx.entry = "residual_is_input"} {
  %w = tx.param @w : tensor<16x16xf32>
  %b = tx.param @b : tensor<16xf32>
  // CHECK: tx.relu {{.*}}tx.offsets = array<i64: 0>
  %h = tx.relu %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: tx.linear {{.*}}tx.offsets = array<i64: -2>
  %y = tx.linear %h, %w bias %b residual %h : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: tx.add_layer_norm {{.*}}tx.offsets = array<i64: -2, 0>
  %n, %s = tx.add_layer_norm %y, %y, %b, %b : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return %n : tensor<4x16xf32>
}

// A linear accumulates into its residual when the residual dies there, and
// add + layer norm writes over a dying addend: %r, %y and %n share one
// buffer, the returned one (output 0).
// CHECK-LABEL: func.func @residual_in_place
// CHECK-SAME: tx.arena_bytes = 256 : i64
func.func @residual_in_place(%x: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {tx.entry = "residual_in_place"} {
  %w = tx.param @w : tensor<16x16xf32>
  %b = tx.param @b : tensor<16xf32>
  // CHECK: tx.softmax {{.*}}tx.offsets = array<i64: -2>
  %r = tx.softmax %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: tx.relu {{.*}}tx.offsets = array<i64: 0>
  %h = tx.relu %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: tx.linear {{.*}}tx.offsets = array<i64: -2>
  %y = tx.linear %h, %w bias %b residual %r : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: tx.add_layer_norm {{.*}}tx.offsets = array<i64: -2, 0>
  %n, %s = tx.add_layer_norm %y, %x, %b, %b : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return %n : tensor<4x16xf32>
}

// A linear's input gradient with an addend (tx-autodiff's fold of a sum of
// gradients) accumulates into the addend's buffer when the addend dies
// there (%a at 1024); not when the addend is also the product's dy, which
// the product still reads: then it gets a buffer of its own (the output)
// and the lowering copies the addend into it first.
// CHECK-LABEL: func.func @linear_grad_addend
// CHECK: tx.relu {{.*}}tx.offsets = array<i64: 1024>
// CHECK-NEXT: tx.softmax {{.*}}tx.offsets = array<i64: 1280>
// CHECK-NEXT: tx.linear_grad {{.*}} plus {{.*}}tx.offsets = array<i64: 1024, 0, 1536>
// CHECK-NEXT: tx.linear_grad {{.*}} plus {{.*}}tx.offsets = array<i64: -2, 0, 1536>
func.func @linear_grad_addend(%x: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {tx.entry = "linear_grad_addend"} {
  %w = tx.param @w : tensor<16x16xf32>
  %a = tx.relu %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %dy = tx.softmax %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %g:3 = tx.linear_grad %x, %w, %dy plus %a : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>)
  %h:3 = tx.linear_grad %x, %w, %g#0 plus %g#0 : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>)
  %s = tx.add %h#0, %dy : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %s : tensor<4x16xf32>
}

// merge_heads of a fused attention's output is a view (the kernel writes
// [B, T, h*d]): it shares the attention's buffer, here the output, and the
// element-wise ops after it write in place. A merge_heads of anything else
// (%t) is a copy into a buffer of its own.
// CHECK-LABEL: func.func @attention_merge_view
// CHECK: tx.attention {{.*}}tx.offsets = array<i64: -2>
// CHECK-NEXT: tx.merge_heads {{.*}}tx.offsets = array<i64: -2>
// CHECK-NEXT: tx.relu {{.*}}tx.offsets = array<i64: -2>
// CHECK: tx.relu {{.*}}tx.offsets = array<i64: 0>
// CHECK-NEXT: tx.merge_heads {{.*}}tx.offsets = array<i64: 512>
func.func @attention_merge_view(%q: tensor<2x2x4x8xf32>) -> tensor<2x4x16xf32> attributes {tx.entry = "attention_merge_view"} {
  %q2 = tx.relu %q : (tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %o = tx.attention %q2, %q2, %q2 {scale = 0.5 : f32} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %m = tx.merge_heads %o : (tensor<2x2x4x8xf32>) -> tensor<2x4x16xf32>
  %r = tx.relu %m : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %s = tx.add %r, %r : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %t = tx.relu %q2 : (tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %u = tx.merge_heads %t : (tensor<2x2x4x8xf32>) -> tensor<2x4x16xf32>
  %v = tx.add %s, %u : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %v : tensor<2x4x16xf32>
}
