// RUN: tx-opt %s -split-input-file --tx-autodiff | FileCheck %s
//
// The structure of every VJP rule (dialect/lib/TxVJP.cpp) as tx-autodiff
// builds it: one small train entry per differentiable op, whose loss is the
// sum of the op's result, so the gradient reaching the op is
// DY = broadcast_to(reshape(1.0)). Each case checks which gradient ops are
// built and that they read the right forward values, and the tx.store_grad
// that ends every parameter's gradient. Then the pass itself: gradients of a
// value with two users are summed, a parameter read twice stores the sum at
// its first read, ids and masks get no gradient, a parameter off the loss's
// path stores zeros, and backward code nobody needs is removed. Errors are in
// autodiff-invalid.mlir.

// Broadcasting is undone with tx.sum_to; the same-shape operand takes DY.
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: attributes {tx.entry = "train", tx.train_kind = "grad"}
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK-NEXT: %[[Y:.+]] = tx.add %[[W]], %[[B]]
// CHECK-NEXT: %[[L:.+]] = tx.reduce_sum %[[Y]]
// CHECK-NEXT: %[[ONE:.+]] = tx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R:.+]] = tx.reshape %[[ONE]] : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NEXT: %[[DY:.+]] = tx.broadcast_to %[[R]] : (tensor<1x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DB:.+]] = tx.sum_to %[[DY]] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @b, %[[DB]] : tensor<8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DY]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[L]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
func.func @add_broadcast() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %b = tx.param @b : tensor<8xf32>
  %y = tx.add %w, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// z = x - (w - b): the subtrahend's gradient is negated (twice for b, which
// is also summed back to [8]); x is an argument and gets nothing.
// CHECK-LABEL: func.func @sub
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DYW:.+]] = tx.neg %[[DY]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[NEG:.+]] = tx.neg %[[DYW]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DB:.+]] = tx.sum_to %[[NEG]] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @w, %[[DYW]]
// CHECK-NEXT: return
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
func.func @sub(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %b = tx.param @b : tensor<8xf32>
  %y = tx.sub %w, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = tx.sub %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %z {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// d(w * v): dw = DY * v, dv = sum_to(DY * w).
// CHECK-LABEL: func.func @mul
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[V:.+]] = tx.param @v
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DW:.+]] = tx.mul %[[DY]], %[[V]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DVF:.+]] = tx.mul %[[DY]], %[[W]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DV:.+]] = tx.sum_to %[[DVF]] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @v, %[[DV]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @v : tensor<8xf32> {init = #tx.init<normal>}
func.func @mul() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %v = tx.param @v : tensor<8xf32>
  %y = tx.mul %w, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// d(w / v): dw = DY / v, dv = sum_to(-(DY / v) * (w / v)), from the forward
// quotient.
// CHECK-LABEL: func.func @div
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[V:.+]] = tx.param @v
// CHECK-NEXT: %[[Q:.+]] = tx.div %[[W]], %[[V]]
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DW:.+]] = tx.div %[[DY]], %[[V]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[P:.+]] = tx.mul %[[DW]], %[[Q]]
// CHECK-NEXT: %[[N:.+]] = tx.neg %[[P]]
// CHECK-NEXT: %[[DV:.+]] = tx.sum_to %[[N]] : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT: tx.store_grad @v, %[[DV]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @v : tensor<8xf32> {init = #tx.init<normal>}
func.func @div() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %v = tx.param @v : tensor<8xf32>
  %y = tx.div %w, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// neg -> neg; scale -> scale by the same factor.
// CHECK-LABEL: func.func @neg_scale
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DS:.+]] = tx.scale %[[DY]] {factor = 1.250000e-01 : f32}
// CHECK-NEXT: %[[DW:.+]] = tx.neg %[[DS]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @neg_scale() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %n = tx.neg %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tx.scale %n {factor = 0.125 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %s {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// relu and gelu -> activation_grad of each op's own input.
// CHECK-LABEL: func.func @relu_gelu
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[R:.+]] = tx.relu %[[W]]
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DR:.+]] = tx.activation_grad %[[R]], %[[DY]] {activation = #tx.activation<gelu>}
// CHECK-NEXT: %[[DW:.+]] = tx.activation_grad %[[W]], %[[DR]] {activation = #tx.activation<relu>}
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @relu_gelu() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %r = tx.relu %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = tx.gelu %r : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %g {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Filled elements do not depend on the input: their gradient is 0.
// CHECK-LABEL: func.func @masked_fill
// CHECK-SAME: (%[[M:.+]]: tensor<4x8xi1>)
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DW:.+]] = tx.masked_fill %[[DY]], %[[M]] {value = 0.000000e+00 : f32}
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @masked_fill(%m: tensor<4x8xi1>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %f = tx.masked_fill %w, %m {value = -1.0e9 : f32} : (tensor<4x8xf32>, tensor<4x8xi1>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %f {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Each dropout gets its own RNG key, and its gradient the same key and rate.
// CHECK-LABEL: func.func @dropout
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[D1:.+]] = tx.dropout %[[W]] {rate = 1.000000e-01 : f32, tx.rng = [[K1:[0-9]+]] : i64}
// CHECK-NEXT: %[[D2:.+]] = tx.dropout %[[D1]] {rate = 2.000000e-01 : f32, tx.rng = [[K2:[0-9]+]] : i64}
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[G2:.+]] = tx.dropout_grad %[[DY]] {rate = 2.000000e-01 : f32, tx.rng = [[K2]] : i64}
// CHECK-NEXT: %[[G1:.+]] = tx.dropout_grad %[[G2]] {rate = 1.000000e-01 : f32, tx.rng = [[K1]] : i64}
// CHECK-NEXT: tx.store_grad @w, %[[G1]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @dropout() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %d = tx.dropout %w {rate = 0.1 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tx.dropout %d {rate = 0.2 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %e {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = A B: dA = DC Bᵀ, dB = Aᵀ DC.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: %[[A:.+]] = tx.param @a
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DC:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DA:.+]] = tx.matmul %[[DC]], %[[B]] {transpose_rhs} : (tensor<4x6xf32>, tensor<8x6xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DB:.+]] = tx.matmul %[[A]], %[[DC]] {transpose_lhs} : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @a, %[[DA]]
tx.parameter @a : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<8x6xf32> {init = #tx.init<normal>}
func.func @matmul() -> tensor<f32> attributes {tx.entry = "train"} {
  %a = tx.param @a : tensor<4x8xf32>
  %b = tx.param @b : tensor<8x6xf32>
  %c = tx.matmul %a, %b : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %c {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = Aᵀ B: dA = B DCᵀ, dB = A DC.
// CHECK-LABEL: func.func @matmul_transpose_lhs
// CHECK-NEXT: %[[A:.+]] = tx.param @a
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DC:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DA:.+]] = tx.matmul %[[B]], %[[DC]] {transpose_rhs} : (tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[DB:.+]] = tx.matmul %[[A]], %[[DC]] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @a, %[[DA]]
tx.parameter @a : tensor<8x4xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<8x6xf32> {init = #tx.init<normal>}
func.func @matmul_transpose_lhs() -> tensor<f32> attributes {tx.entry = "train"} {
  %a = tx.param @a : tensor<8x4xf32>
  %b = tx.param @b : tensor<8x6xf32>
  %c = tx.matmul %a, %b {transpose_lhs} : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %c {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = A Bᵀ: dA = DC B, dB = DCᵀ A.
// CHECK-LABEL: func.func @matmul_transpose_rhs
// CHECK-NEXT: %[[A:.+]] = tx.param @a
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DC:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DA:.+]] = tx.matmul %[[DC]], %[[B]] : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[DB:.+]] = tx.matmul %[[DC]], %[[A]] {transpose_lhs} : (tensor<4x6xf32>, tensor<4x8xf32>) -> tensor<6x8xf32>
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @a, %[[DA]]
tx.parameter @a : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<6x8xf32> {init = #tx.init<normal>}
func.func @matmul_transpose_rhs() -> tensor<f32> attributes {tx.entry = "train"} {
  %a = tx.param @a : tensor<4x8xf32>
  %b = tx.param @b : tensor<6x8xf32>
  %c = tx.matmul %a, %b {transpose_rhs} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %c {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = Aᵀ Bᵀ: dA = Bᵀ DCᵀ, dB = DCᵀ Aᵀ.
// CHECK-LABEL: func.func @matmul_transpose_both
// CHECK-NEXT: %[[A:.+]] = tx.param @a
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DC:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DA:.+]] = tx.matmul %[[B]], %[[DC]] {transpose_lhs, transpose_rhs} : (tensor<6x8xf32>, tensor<4x6xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[DB:.+]] = tx.matmul %[[DC]], %[[A]] {transpose_lhs, transpose_rhs} : (tensor<4x6xf32>, tensor<8x4xf32>) -> tensor<6x8xf32>
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @a, %[[DA]]
tx.parameter @a : tensor<8x4xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<6x8xf32> {init = #tx.init<normal>}
func.func @matmul_transpose_both() -> tensor<f32> attributes {tx.entry = "train"} {
  %a = tx.param @a : tensor<8x4xf32>
  %b = tx.param @b : tensor<6x8xf32>
  %c = tx.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<8x4xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %c {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A batched lhs against a shared 2-D rhs (`x @ W`): dB is one product over
// all 8 rows, linear_grad's dweight with DC as its input and A as its
// dresult, marked tx.f32 (tx-precision keeps it f32, like the matmul). It
// was a product per batch element, summed by a tx.sum_to. The argument A
// gets no gradient (its matmul is dead and removed).
// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x8xf32>)
// CHECK: %[[DC:.+]] = tx.broadcast_to
// CHECK-NEXT: %{{[a-z]+}}, %[[DB:[a-z]+]], %{{[a-z]+}} = tx.linear_grad %[[DC]], %{{.+}}, %[[A]] {tx.f32} : (tensor<2x4x6xf32>, tensor<8x6xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x6xf32>, tensor<8x6xf32>, tensor<8xf32>)
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: return
tx.parameter @b : tensor<8x6xf32> {init = #tx.init<normal>}
func.func @matmul_batched(%a: tensor<2x4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %b = tx.param @b : tensor<8x6xf32>
  %c = tx.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %l = tx.reduce_sum %c {axes = array<i64: 0, 1, 2>} : (tensor<2x4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// linear with bias -> one linear_grad: weight and bias take its results.
// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %{{.+}}, %[[DW:.+]], %[[DB:.+]] = tx.linear_grad %[[X]], %[[W]], %[[DY]] : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<6xf32> {init = #tx.init<zeros>}
func.func @linear_bias(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<6x8xf32>
  %b = tx.param @b : tensor<6xf32>
  %y = tx.linear %x, %w bias %b : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A relu epilogue: activation_grad of the linear's output, then linear_grad;
// the input (a parameter here) takes linear_grad's first result.
// CHECK-LABEL: func.func @linear_relu
// CHECK-NEXT: %[[X:.+]] = tx.param @x
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK-NEXT: %[[Y:.+]] = tx.linear %[[X]], %[[W]] bias %[[B]] {activation = #tx.activation<relu>}
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DZ:.+]] = tx.activation_grad %[[Y]], %[[DY]] {activation = #tx.activation<relu>}
// CHECK-NEXT: %[[DX:.+]], %[[DW:.+]], %[[DB:.+]] = tx.linear_grad %[[X]], %[[W]], %[[DZ]]
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
// CHECK-NEXT: tx.store_grad @x, %[[DX]]
tx.parameter @x : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @w : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<6xf32> {init = #tx.init<zeros>}
func.func @linear_relu() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @x : tensor<4x8xf32>
  %w = tx.param @w : tensor<6x8xf32>
  %b = tx.param @b : tensor<6xf32>
  %y = tx.linear %x, %w bias %b {activation = #tx.activation<relu>} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// relu with a residual: the pre-activation is recomputed (the output minus
// the residual is not relu(z) in floating point: with r = 1000 and relu(z)
// = 1e-5 it gave 0, and a zero gradient); the residual takes DY itself.
// CHECK-LABEL: func.func @linear_relu_residual
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[R:.+]] = tx.param @r
// CHECK-NEXT: %[[Y:.+]] = tx.linear %[[X]], %[[W]] residual %[[R]] {activation = #tx.activation<relu>}
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NOT: tx.sub
// CHECK: %[[Z:.+]] = tx.linear %[[X]], %[[W]] :
// CHECK-NEXT: %[[DZ:.+]] = tx.activation_grad %[[Z]], %[[DY]] {activation = #tx.activation<relu>}
// CHECK-NEXT: %{{.+}}, %[[DW:.+]], %{{.+}} = tx.linear_grad %[[X]], %[[W]], %[[DZ]]
// CHECK-NEXT: tx.store_grad @r, %[[DY]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @r : tensor<4x6xf32> {init = #tx.init<normal>}
func.func @linear_relu_residual(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<6x8xf32>
  %r = tx.param @r : tensor<4x6xf32>
  %y = tx.linear %x, %w residual %r {activation = #tx.activation<relu>} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// gelu' needs the pre-activation: the linear is recomputed without epilogue.
// CHECK-LABEL: func.func @linear_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[Z:.+]] = tx.linear %[[X]], %[[W]] bias %[[B]] : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %[[DZ:.+]] = tx.activation_grad %[[Z]], %[[DY]] {activation = #tx.activation<gelu>}
// CHECK-NEXT: %{{.+}}, %[[DW:.+]], %[[DB:.+]] = tx.linear_grad %[[X]], %[[W]], %[[DZ]]
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @b : tensor<6xf32> {init = #tx.init<zeros>}
func.func @linear_gelu(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<6x8xf32>
  %b = tx.param @b : tensor<6xf32>
  %y = tx.linear %x, %w bias %b {activation = #tx.activation<gelu>} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// softmax and log_softmax (last axis, implicit and explicit) -> softmax_grad
// of the forward output, with `log` for log_softmax.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[T:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[S:.+]] = tx.softmax %[[W]]
// CHECK-NEXT: %[[P:.+]] = tx.mul %[[S]], %[[T]]
// CHECK-NEXT: %[[LS:.+]] = tx.log_softmax %[[P]] {axis = 1 : i64}
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DP:.+]] = tx.softmax_grad %[[LS]], %[[DY]] {log}
// CHECK-NEXT: %[[DS:.+]] = tx.mul %[[DP]], %[[T]]
// CHECK-NEXT: %[[DW:.+]] = tx.softmax_grad %[[S]], %[[DS]] :
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @softmax(%t: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %s = tx.softmax %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = tx.mul %s, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ls = tx.log_softmax %p {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %ls {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// layer_norm -> layer_norm_grad of the input with the forward's epsilon.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT: %[[X:.+]] = tx.param @x
// CHECK-NEXT: %[[G:.+]] = tx.param @g
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = tx.layer_norm_grad %[[X]], %[[G]], %[[DY]] {epsilon = 9.99999997E-7 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @g, %[[DG]]
// CHECK-NEXT: tx.store_grad @x, %[[DX]]
tx.parameter @x : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @g : tensor<8xf32> {init = #tx.init<ones>}
tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
func.func @layer_norm() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @x : tensor<4x8xf32>
  %g = tx.param @g : tensor<8xf32>
  %b = tx.param @b : tensor<8xf32>
  %n = tx.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %n {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// layer_norm without bias: the same layer_norm_grad; its dbias is unused
// (no tx.store_grad of a bias).
// CHECK-LABEL: func.func @layer_norm_without_bias
// CHECK: %[[DX:.+]], %[[DG:.+]], %{{.+}} = tx.layer_norm_grad
// CHECK-NEXT: tx.store_grad @g2, %[[DG]]
// CHECK-NEXT: tx.store_grad @x2, %[[DX]]
// CHECK-NEXT: return
tx.parameter @x2 : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @g2 : tensor<8xf32> {init = #tx.init<ones>}
func.func @layer_norm_without_bias() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @x2 : tensor<4x8xf32>
  %g = tx.param @g2 : tensor<8xf32>
  %n = tx.layer_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %n {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// rope is a rotation: its gradient is the inverse rotation (same heads and
// base) of the output's gradient.
// CHECK-LABEL: func.func @rope
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DX:.+]] = tx.rope %[[DY]] {base = 5.000000e+05 : f32, heads = 2 : i64, inverse} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: tx.store_grad @px, %[[DX]]
tx.parameter @px : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @rope() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @px : tensor<4x8xf32>
  %r = tx.rope %x {heads = 2 : i64, base = 5.0e5 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %r {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// rope with an angle table (rotary embeddings written out): the inverse
// rotation by the same table; the table (positions, constants) takes none.
// CHECK-LABEL: func.func @rope_angles
// CHECK: tx.to_float
// CHECK-NEXT: %[[A:.+]] = tx.reshape
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DX:.+]] = tx.rope %[[DY]] angles %[[A]] {inverse}
// CHECK-NEXT: tx.store_grad @pa, %[[DX]]
tx.parameter @pa : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @rope_angles() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @pa : tensor<4x8xf32>
  %i = tx.arange : tensor<16xi32>
  %f = tx.to_float %i : (tensor<16xi32>) -> tensor<16xf32>
  %a = tx.reshape %f : (tensor<16xf32>) -> tensor<4x4xf32>
  %r = tx.rope %x angles %a {heads = 1 : i64} : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %r {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// rms_norm -> rms_norm_grad (dinput, dweight) with the forward's epsilon.
// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DX:.+]], %[[DG:.+]] = tx.rms_norm_grad %{{.+}}, %{{.+}}, %[[DY]] {epsilon = 9.99999974E-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NEXT: tx.store_grad @rg, %[[DG]]
// CHECK-NEXT: tx.store_grad @rx, %[[DX]]
tx.parameter @rx : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @rg : tensor<8xf32> {init = #tx.init<ones>}
func.func @rms_norm() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @rx : tensor<4x8xf32>
  %g = tx.param @rg : tensor<8xf32>
  %n = tx.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %n {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// add_rms_norm whose sum goes on: rms_norm_grad reads the sum the forward
// writes anyway (no `rhs`: the addends are not added again) and takes
// `dsum`; both addends take the gradient of the sum.
// CHECK-LABEL: func.func @add_rms_norm
// CHECK: %{{.+}}, %[[SUM:.+]] = tx.add_rms_norm
// CHECK: %[[DS:.+]], %[[DG:.+]] = tx.rms_norm_grad %[[SUM]], %{{.+}}, %{{.+}} dsum %{{.+}}
// CHECK: tx.store_grad @ag, %[[DG]]
// CHECK: tx.store_grad @ay, %[[DS]]
// CHECK: tx.store_grad @ax
tx.parameter @ax : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @ay : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @ag : tensor<8xf32> {init = #tx.init<ones>}
func.func @add_rms_norm() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @ax : tensor<4x8xf32>
  %y = tx.param @ay : tensor<4x8xf32>
  %g = tx.param @ag : tensor<8xf32>
  %n, %s = tx.add_rms_norm %x, %y, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %t = tx.add %n, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %t {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// add_layer_norm with only the normed result used: layer_norm_grad with
// `rhs` and no `dsum`; both addends take the gradient of the sum.
// CHECK-LABEL: func.func @add_layer_norm
// CHECK-NEXT: %[[X:.+]] = tx.param @x
// CHECK-NEXT: %[[Y:.+]] = tx.param @y
// CHECK-NEXT: %[[G:.+]] = tx.param @g
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DS:.+]], %[[DG:.+]], %[[DB:.+]] = tx.layer_norm_grad %[[X]] rhs %[[Y]], %[[G]], %[[DY]] : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) ->
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @g, %[[DG]]
// CHECK-NEXT: tx.store_grad @y, %[[DS]]
// CHECK-NEXT: tx.store_grad @x, %[[DS]]
tx.parameter @x : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @y : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @g : tensor<8xf32> {init = #tx.init<ones>}
tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
func.func @add_layer_norm() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @x : tensor<4x8xf32>
  %y = tx.param @y : tensor<4x8xf32>
  %g = tx.param @g : tensor<8xf32>
  %b = tx.param @b : tensor<8xf32>
  %n, %s = tx.add_layer_norm %x, %y, %g, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %l = tx.reduce_sum %n {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// add_layer_norm with its sum used too: the sum's gradient joins as `dsum`,
// and the gradient reads the sum instead of adding the addends again. The
// second addend is an argument and takes nothing.
// CHECK-LABEL: func.func @add_layer_norm_sum_used
// CHECK-SAME: (%[[Y:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[X:.+]] = tx.param @x
// CHECK-NEXT: %[[G:.+]] = tx.param @g
// CHECK-NEXT: %[[B:.+]] = tx.param @b
// CHECK-NEXT: %[[N:.+]], %[[S:.+]] = tx.add_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]]
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DSUM:.+]] = tx.activation_grad %[[S]], %[[DY]] {activation = #tx.activation<relu>}
// CHECK-NEXT: %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = tx.layer_norm_grad %[[S]], %[[G]], %[[DY]] dsum %[[DSUM]] :
// CHECK-NEXT: tx.store_grad @b, %[[DB]]
// CHECK-NEXT: tx.store_grad @g, %[[DG]]
// CHECK-NEXT: tx.store_grad @x, %[[DX]]
// CHECK-NEXT: return
tx.parameter @x : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @g : tensor<8xf32> {init = #tx.init<ones>}
tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
func.func @add_layer_norm_sum_used(%y: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @x : tensor<4x8xf32>
  %g = tx.param @g : tensor<8xf32>
  %b = tx.param @b : tensor<8xf32>
  %n, %s = tx.add_layer_norm %x, %y, %g, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %r = tx.relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tx.add %n, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %t {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// add_layer_norm with only its sum used: no layer_norm_grad; the addends
// take the sum's gradient, weight and bias store zeros.
// CHECK-LABEL: func.func @add_layer_norm_only_sum
// CHECK-NOT: tx.layer_norm_grad
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[ZB:.+]] = tx.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: tx.store_grad @b, %[[ZB]]
// CHECK-NEXT: %[[ZG:.+]] = tx.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: tx.store_grad @g, %[[ZG]]
// CHECK-NEXT: tx.store_grad @y, %[[DY]]
// CHECK-NEXT: tx.store_grad @x, %[[DY]]
// CHECK-NEXT: return
tx.parameter @x : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @y : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @g : tensor<8xf32> {init = #tx.init<ones>}
tx.parameter @b : tensor<8xf32> {init = #tx.init<zeros>}
func.func @add_layer_norm_only_sum() -> tensor<f32> attributes {tx.entry = "train"} {
  %x = tx.param @x : tensor<4x8xf32>
  %y = tx.param @y : tensor<4x8xf32>
  %g = tx.param @g : tensor<8xf32>
  %b = tx.param @b : tensor<8xf32>
  %n, %s = tx.add_layer_norm %x, %y, %g, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %l = tx.reduce_sum %s {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// embedding -> embedding_grad (scatter-add) over the table's vocabulary; the
// ids get nothing.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.+]]: tensor<?x?xi32, #tx.dims<B: 4, S: 9>>)
// CHECK: %[[DY:.+]] = tx.broadcast_to %{{.+}} : (tensor<1x1x1xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
// CHECK-NEXT: %[[DT:.+]] = tx.embedding_grad %[[IDS]], %[[DY]] {vocab = 16 : i64} : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<16x8xf32>
// CHECK-NEXT: tx.store_grad @table, %[[DT]]
// CHECK-NEXT: return
tx.parameter @table : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
func.func @embedding(%ids: tensor<?x?xi32, #tx.dims<B: 4, S: 9>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %t = tx.param @table : tensor<16x8xf32>
  %e = tx.embedding %ids, %t : (tensor<?x?xi32, #tx.dims<B: 4, S: 9>>, tensor<16x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>
  %l = tx.reduce_sum %e {axes = array<i64: 0, 1, 2>} : (tensor<?x?x8xf32, #tx.dims<B: 4, S: 9>>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// cross_entropy -> cross_entropy_train, which saves each row's lse, and
// cross_entropy_grad of the logits from that lse with the forward's
// ignore_index and label_smoothing; the loss's own gradient is 1.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, %[[TGT:.+]]: tensor<?x?xi32, #tx.dims<B: 4, T: 9>>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[Z:.+]] = tx.linear %[[X]], %[[W]]
// CHECK-NEXT: %[[L:.+]], %[[LSE:.+]] = tx.cross_entropy_train %[[Z]], %[[TGT]] {{.+}} -> (tensor<f32>, tensor<?x?xf32, #tx.dims<B: 4, T: 9>>)
// CHECK-NEXT: %[[ONE:.+]] = tx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DZ:.+]] = tx.cross_entropy_grad %[[Z]], %[[TGT]], %[[ONE]] lse %[[LSE]] {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, tensor<?x?xi32, #tx.dims<B: 4, T: 9>>, tensor<f32>, tensor<?x?xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>
// CHECK-NEXT: %{{.+}}, %[[DW:.+]], %{{.+}} = tx.linear_grad %[[X]], %[[W]], %[[DZ]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
// CHECK-NEXT: return %[[L]]
tx.parameter @w : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
func.func @cross_entropy(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, %tgt: tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<16x8xf32>
  %z = tx.linear %x, %w : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, tensor<16x8xf32>) -> tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>
  %l = tx.cross_entropy %z, %tgt {ignore_index = 0 : i64, label_smoothing = 0.1 : f32} : (tensor<?x?x16xf32, #tx.dims<B: 4, T: 9>>, tensor<?x?xi32, #tx.dims<B: 4, T: 9>>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reshape -> reshape back; transpose [1, 2, 0] -> its inverse [2, 0, 1].
// CHECK-LABEL: func.func @reshape_transpose
// CHECK: %[[DY:.+]] = tx.broadcast_to %{{.+}} : (tensor<1x1x1xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT: %[[DR:.+]] = tx.transpose %[[DY]] {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x4xf32>) -> tensor<4x2x4xf32>
// CHECK-NEXT: %[[DW:.+]] = tx.reshape %[[DR]] : (tensor<4x2x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @reshape_transpose() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %r = tx.reshape %w : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %t = tx.transpose %r {permutation = array<i64: 1, 2, 0>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %l = tx.reduce_sum %t {axes = array<i64: 0, 1, 2>} : (tensor<2x4x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// merge_heads -> split_heads with the forward's head count; split_heads ->
// merge_heads.
// CHECK-LABEL: func.func @split_merge_heads
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[H:.+]] = tx.split_heads %[[W]]
// CHECK: %[[DY:.+]] = tx.broadcast_to %{{.+}} : (tensor<1x1x1xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[DR:.+]] = tx.split_heads %[[DY]] {heads = 2 : i64} : (tensor<2x3x8xf32>) -> tensor<2x2x3x4xf32>
// CHECK-NEXT: %[[DH:.+]] = tx.activation_grad %[[H]], %[[DR]] {activation = #tx.activation<relu>}
// CHECK-NEXT: %[[DW:.+]] = tx.merge_heads %[[DH]] : (tensor<2x2x3x4xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<2x3x8xf32> {init = #tx.init<normal>}
func.func @split_merge_heads() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<2x3x8xf32>
  %h = tx.split_heads %w {heads = 2 : i64} : (tensor<2x3x8xf32>) -> tensor<2x2x3x4xf32>
  %r = tx.relu %h : (tensor<2x2x3x4xf32>) -> tensor<2x2x3x4xf32>
  %m = tx.merge_heads %r : (tensor<2x2x3x4xf32>) -> tensor<2x3x8xf32>
  %l = tx.reduce_sum %m {axes = array<i64: 0, 1, 2>} : (tensor<2x3x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Reductions broadcast the gradient back (after a reshape that restores the
// reduced axes unless keepdim); a mean's tx.reduce_mean_grad also divides it
// by the number of elements averaged (autodiff-math.mlir: symbolic ones).
// CHECK-LABEL: func.func @reductions
// CHECK: %[[ONE:.+]] = tx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R0:.+]] = tx.reshape %[[ONE]] : (tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT: %[[DM:.+]] = tx.broadcast_to %[[R0]] : (tensor<1xf32>) -> tensor<1xf32>
// CHECK-NEXT: %[[R1:.+]] = tx.reshape %[[DM]] : (tensor<1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT: %[[DS:.+]] = tx.reduce_mean_grad %[[R1]] : (tensor<1x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[DW:.+]] = tx.broadcast_to %[[DS]] : (tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @reductions() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %s = tx.reduce_sum %w {axes = array<i64: -1>, keepdim} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %m = tx.reduce_mean %s {axes = array<i64: 0>} : (tensor<4x1xf32>) -> tensor<1xf32>
  %l = tx.reduce_sum %m {axes = array<i64: 0>} : (tensor<1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// attention -> attention_train (saving lse) + attention_grad with the same
// attributes and RNG key; the mask gets nothing, and the parameter used as
// both keys and values sums dkey and dvalue.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[M:.+]]: tensor<2x1x1x7xi1>)
// CHECK-NEXT: %[[Q:.+]] = tx.param @q
// CHECK-NEXT: %[[KV:.+]] = tx.param @kv
// CHECK-NEXT: %[[O:.+]], %[[LSE:.+]] = tx.attention_train %[[Q]], %[[KV]], %[[KV]] mask %[[M]] {causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = [[KEY:[0-9]+]] : i64} : (tensor<2x2x5x4xf32>, tensor<2x2x7x4xf32>, tensor<2x2x7x4xf32>, tensor<2x1x1x7xi1>) -> (tensor<2x2x5x4xf32>, tensor<2x2x5xf32>)
// CHECK-NEXT: tx.reduce_sum %[[O]]
// CHECK: %[[DO:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = tx.attention_grad %[[Q]], %[[KV]], %[[KV]] mask %[[M]], %[[O]], %[[LSE]], %[[DO]] {causal, dropout = 1.000000e-01 : f32, scale = 5.000000e-01 : f32, tx.rng = [[KEY]] : i64}
// CHECK-NEXT: %[[DKV:.+]] = tx.add %[[DK]], %[[DV]]
// CHECK-NEXT: tx.store_grad @kv, %[[DKV]]
// CHECK-NEXT: tx.store_grad @q, %[[DQ]]
// CHECK-NOT: tx.attention {{.*}}:
tx.parameter @q : tensor<2x2x5x4xf32> {init = #tx.init<normal>}
tx.parameter @kv : tensor<2x2x7x4xf32> {init = #tx.init<normal>}
func.func @attention(%m: tensor<2x1x1x7xi1>) -> tensor<f32> attributes {tx.entry = "train"} {
  %q = tx.param @q : tensor<2x2x5x4xf32>
  %kv = tx.param @kv : tensor<2x2x7x4xf32>
  %a = tx.attention %q, %kv, %kv mask %m {causal, dropout = 0.1 : f32, scale = 0.5 : f32} : (tensor<2x2x5x4xf32>, tensor<2x2x7x4xf32>, tensor<2x2x7x4xf32>, tensor<2x1x1x7xi1>) -> tensor<2x2x5x4xf32>
  %l = tx.reduce_sum %a {axes = array<i64: 0, 1, 2, 3>} : (tensor<2x2x5x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Attention without mask or dropout, with symbolic dims, between projections
// as the model writes it: each weight's gradient is stored as soon as it is
// final (@wk is read after @wq, so it is done first). Without dropout the
// attention draws no random numbers and gets no RNG key.
// CHECK-LABEL: func.func @attention_heads
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>)
// CHECK-NEXT: %[[WQ:.+]] = tx.param @wq
// CHECK: %[[Q:.+]] = tx.split_heads
// CHECK-NEXT: %[[WK:.+]] = tx.param @wk
// CHECK: %[[K:.+]] = tx.split_heads
// CHECK-NEXT: %[[O:.+]], %[[LSE:.+]] = tx.attention_train %[[Q]], %[[K]], %[[K]] {causal, scale = 5.000000e-01 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?xf32, #tx.dims<B: 4, T: 9>>)
// CHECK-NEXT: %[[H:.+]] = tx.merge_heads %[[O]]
// CHECK: %[[DH:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DO:.+]] = tx.split_heads %[[DH]] {heads = 2 : i64}
// CHECK-NEXT: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = tx.attention_grad %[[Q]], %[[K]], %[[K]], %[[O]], %[[LSE]], %[[DO]] {causal, scale = 5.000000e-01 : f32}
// CHECK-NEXT: %[[DKV:.+]] = tx.add %[[DK]], %[[DV]]
// CHECK-NEXT: %[[DKL:.+]] = tx.merge_heads %[[DKV]]
// CHECK-NEXT: %{{.+}}, %[[DWK:.+]], %{{.+}} = tx.linear_grad %[[X]], %[[WK]], %[[DKL]]
// CHECK-NEXT: tx.store_grad @wk, %[[DWK]]
// CHECK-NEXT: %[[DQL:.+]] = tx.merge_heads %[[DQ]]
// CHECK-NEXT: %{{.+}}, %[[DWQ:.+]], %{{.+}} = tx.linear_grad %[[X]], %[[WQ]], %[[DQL]]
// CHECK-NEXT: tx.store_grad @wq, %[[DWQ]]
// CHECK-NEXT: return
tx.parameter @wq : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
tx.parameter @wk : tensor<8x8xf32> {init = #tx.init<xavier_uniform>}
func.func @attention_heads(%x: tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<f32> attributes {tx.entry = "train"} {
  %wq = tx.param @wq : tensor<8x8xf32>
  %q0 = tx.linear %x, %wq : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>
  %q = tx.split_heads %q0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  %wk = tx.param @wk : tensor<8x8xf32>
  %k0 = tx.linear %x, %wk : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>, tensor<8x8xf32>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>
  %k = tx.split_heads %k0 {heads = 2 : i64} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  %a = tx.attention %q, %k, %k {causal, scale = 0.5 : f32} : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>, tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>
  %h = tx.merge_heads %a : (tensor<?x2x?x4xf32, #tx.dims<B: 4, T: 9>>) -> tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>
  %l = tx.reduce_sum %h {axes = array<i64: 0, 1, 2>} : (tensor<?x?x8xf32, #tx.dims<B: 4, T: 9>>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value read by two linears (here a relu of a parameter, as the residual
// stream is read by Q and K): the later linear's input gradient is the
// addend of the earlier one's linear_grad (`plus`), whose product
// accumulates into it; no tx.add is left.
// CHECK-LABEL: func.func @two_linears
// CHECK: %[[DX1:.+]], %{{.+}}, %{{.+}} = tx.linear_grad %[[X:.+]], %[[W1:.+]], %{{.+}} :
// CHECK: %[[DX0:.+]], %{{.+}}, %{{.+}} = tx.linear_grad %[[X]], %[[W0:.+]], %{{.+}} plus %[[DX1]] :
// CHECK-NOT: tx.add
// CHECK: tx.activation_grad %{{.+}}, %[[DX0]] {activation = #tx.activation<relu>}
tx.parameter @v : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @w0 : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @w1 : tensor<6x8xf32> {init = #tx.init<normal>}
func.func @two_linears() -> tensor<f32> attributes {tx.entry = "train"} {
  %v = tx.param @v : tensor<4x8xf32>
  %x = tx.relu %v : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %w0 = tx.param @w0 : tensor<6x8xf32>
  %y0 = tx.linear %x, %w0 : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %w1 = tx.param @w1 : tensor<6x8xf32>
  %y1 = tx.linear %x, %w1 : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %y = tx.mul %y0, %y1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value with two users: their gradients are summed (the later user's
// first) before flowing on.
// CHECK-LABEL: func.func @two_users
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[Y:.+]] = tx.neg %[[W]]
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DG:.+]] = tx.activation_grad %[[Y]], %[[DY]] {activation = #tx.activation<gelu>}
// CHECK-NEXT: %[[DR:.+]] = tx.activation_grad %[[Y]], %[[DY]] {activation = #tx.activation<relu>}
// CHECK-NEXT: %[[SUM:.+]] = tx.add %[[DG]], %[[DR]]
// CHECK-NEXT: %[[DW:.+]] = tx.neg %[[SUM]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
// CHECK-NEXT: return
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @two_users() -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<4x8xf32>
  %y = tx.neg %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tx.relu %y : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = tx.gelu %y : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tx.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %s {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter read twice: one store_grad, of the sum of both reads'
// gradients, at the first read (after every use of its value).
// CHECK-LABEL: func.func @param_read_twice
// CHECK-NEXT: %[[W0:.+]] = tx.param @w
// CHECK-NEXT: %[[A:.+]] = tx.relu %[[W0]]
// CHECK-NEXT: %[[W1:.+]] = tx.param @w
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DA:.+]] = tx.mul %[[DY]], %[[W1]]
// CHECK-NEXT: %[[DW1:.+]] = tx.mul %[[DY]], %[[A]]
// CHECK-NEXT: %[[DW0:.+]] = tx.activation_grad %[[W0]], %[[DA]] {activation = #tx.activation<relu>}
// CHECK-NEXT: %[[DW:.+]] = tx.add %[[DW1]], %[[DW0]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
// CHECK-NEXT: return
// CHECK-NOT: tx.store_grad
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
func.func @param_read_twice() -> tensor<f32> attributes {tx.entry = "train"} {
  %w0 = tx.param @w : tensor<4x8xf32>
  %a = tx.relu %w0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %w1 = tx.param @w : tensor<4x8xf32>
  %b = tx.mul %a, %w1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %b {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter read but not on the loss's path stores a zero gradient (its
// dead forward use is removed); the argument x gets no gradient: of the two
// products mul's rule builds, only dw = DY * x is left.
// CHECK-LABEL: func.func @off_path
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: tx.mul %[[W]], %[[X]]
// CHECK-NOT: tx.neg
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[DW:.+]] = tx.mul %[[DY]], %[[X]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
// CHECK-NEXT: %[[Z:.+]] = tx.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: tx.store_grad @unused, %[[Z]] : tensor<8xf32>
// CHECK-NEXT: return
tx.parameter @w : tensor<4x8xf32> {init = #tx.init<normal>}
tx.parameter @unused : tensor<8xf32> {init = #tx.init<zeros>}
func.func @off_path(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %u = tx.param @unused : tensor<8xf32>
  %w = tx.param @w : tensor<4x8xf32>
  %n = tx.neg %u : (tensor<8xf32>) -> tensor<8xf32>
  %y = tx.mul %w, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Ids, targets and masks get no gradient; a positional encoding (a function
// of the shape only) neither; the tied table sums its embedding_grad and the
// output projection's gradient.
// CHECK-LABEL: func.func @ids_and_masks
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x5xi32>, %[[TGT:.+]]: tensor<2x5xi32>, %[[M:.+]]: tensor<2x5x1xi1>)
// CHECK-NEXT: %[[T:.+]] = tx.param @table
// CHECK-NEXT: %[[E:.+]] = tx.embedding %[[IDS]], %[[T]]
// CHECK-NEXT: %[[PE:.+]] = tx.positional_encoding %[[E]]
// CHECK-NEXT: %[[X:.+]] = tx.add %[[E]], %[[PE]]
// CHECK-NEXT: %[[F:.+]] = tx.masked_fill %[[X]], %[[M]]
// CHECK-NEXT: %[[Z:.+]] = tx.matmul %[[F]], %[[T]] {transpose_rhs}
// CHECK-NEXT: %[[L:.+]], %[[LSE:.+]] = tx.cross_entropy_train %[[Z]], %[[TGT]]
// CHECK-NEXT: %[[ONE:.+]] = tx.constant
// CHECK-NEXT: %[[DZ:.+]] = tx.cross_entropy_grad %[[Z]], %[[TGT]], %[[ONE]] lse %[[LSE]]
// CHECK-NEXT: %[[DF:.+]] = tx.matmul %[[DZ]], %[[T]] :
// CHECK-NEXT: %[[DTB:.+]] = tx.matmul %[[DZ]], %[[F]] {transpose_lhs} : (tensor<2x5x16xf32>, tensor<2x5x8xf32>) -> tensor<2x16x8xf32>
// CHECK-NEXT: %[[DT1:.+]] = tx.sum_to %[[DTB]] : (tensor<2x16x8xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: %[[DX:.+]] = tx.masked_fill %[[DF]], %[[M]] {value = 0.000000e+00 : f32}
// CHECK-NEXT: %[[DT0:.+]] = tx.embedding_grad %[[IDS]], %[[DX]] {vocab = 16 : i64}
// CHECK-NEXT: %[[DT:.+]] = tx.add %[[DT1]], %[[DT0]]
// CHECK-NEXT: tx.store_grad @table, %[[DT]]
// CHECK-NEXT: return %[[L]]
tx.parameter @table : tensor<16x8xf32> {init = #tx.init<xavier_uniform>}
func.func @ids_and_masks(%ids: tensor<2x5xi32>, %tgt: tensor<2x5xi32>, %m: tensor<2x5x1xi1>) -> tensor<f32> attributes {tx.entry = "train"} {
  %t = tx.param @table : tensor<16x8xf32>
  %e = tx.embedding %ids, %t : (tensor<2x5xi32>, tensor<16x8xf32>) -> tensor<2x5x8xf32>
  %pe = tx.positional_encoding %e : (tensor<2x5x8xf32>) -> tensor<5x8xf32>
  %x = tx.add %e, %pe : (tensor<2x5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
  %f = tx.masked_fill %x, %m {value = 0.0 : f32} : (tensor<2x5x8xf32>, tensor<2x5x1xi1>) -> tensor<2x5x8xf32>
  %z = tx.matmul %f, %t {transpose_rhs} : (tensor<2x5x8xf32>, tensor<16x8xf32>) -> tensor<2x5x16xf32>
  %l = tx.cross_entropy %z, %tgt : (tensor<2x5x16xf32>, tensor<2x5xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A gated linear (SwiGLU's silu(x·W1ᵀ) * u): the pre-activation is recomputed;
// the gate takes dy * silu(z), the product dy * gate goes through silu'.
// CHECK-LABEL: func.func @linear_gated
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[W:.+]] = tx.param @w
// CHECK-NEXT: %[[U:.+]] = tx.param @u
// CHECK: %[[DY:.+]] = tx.broadcast_to
// CHECK-NEXT: %[[Z:.+]] = tx.linear %[[X]], %[[W]] : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %[[S:.+]] = tx.silu %[[Z]]
// CHECK-NEXT: %[[DU:.+]] = tx.mul %[[DY]], %[[S]]
// CHECK-NEXT: %[[DA:.+]] = tx.mul %[[DY]], %[[U]]
// CHECK-NEXT: %[[DZ:.+]] = tx.activation_grad %[[Z]], %[[DA]] {activation = #tx.activation<silu>}
// CHECK-NEXT: %{{.+}}, %[[DW:.+]], %{{.+}} = tx.linear_grad %[[X]], %[[W]], %[[DZ]]
// CHECK-NEXT: tx.store_grad @u, %[[DU]]
// CHECK-NEXT: tx.store_grad @w, %[[DW]]
tx.parameter @w : tensor<6x8xf32> {init = #tx.init<normal>}
tx.parameter @u : tensor<4x6xf32> {init = #tx.init<normal>}
func.func @linear_gated(%x: tensor<4x8xf32>) -> tensor<f32> attributes {tx.entry = "train"} {
  %w = tx.param @w : tensor<6x8xf32>
  %u = tx.param @u : tensor<4x6xf32>
  %y = tx.linear %x, %w gate %u {activation = #tx.activation<silu>} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = tx.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
